//! Throughput of one sender and one receiver over the `nats` backend, core NATS
//! against JetStream persistence, in the same run: 100-byte updates, measured from the
//! first publish to the last envelope received (all of them, in order).
//!
//! ```text
//! cargo run --release -p glidepath-transport --example jetstream_throughput [COUNT]
//! ```
//!
//! Needs `nats-server` on PATH or in GLIDEPATH_NATS_SERVER. Prints numbers; asserts
//! only that every update arrived.

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use bytes::Bytes;
use glidepath_core::{
    Body, Envelope, ExecReply, ExecRequest, FederateHandle, Fom, InteractionClassHandle, OrderType,
    ParameterHandle, Topic, TransportationType,
};
use glidepath_transport::nats::{
    serve_executive_with, NatsOptions, NatsServerProcess, Persistence,
};
use glidepath_transport::{Endpoint, NatsTransport};

const TOPIC: Topic = Topic::InteractionClass(InteractionClassHandle(1));

fn update(seq: u64, payload: &Bytes) -> Envelope {
    Envelope {
        sender: FederateHandle(1),
        seq,
        publish_time_ns: 0,
        body: Body::Interaction {
            class: InteractionClassHandle(1),
            values: Arc::from(vec![(ParameterHandle(1), payload.clone())]),
            tag: Bytes::new(),
            order: OrderType::Receive,
            transport: TransportationType::Reliable,
            time: None,
            regions: None,
        },
    }
}

/// Updates per second, one sender to one receiver.
fn measure(server: &NatsServerProcess, persistence: Persistence, count: u64) -> f64 {
    let options = NatsOptions {
        persistence,
        ..NatsOptions::default()
    };
    let _executive = serve_executive_with(&server.url(), options.clone()).expect("executive");
    let transport = NatsTransport::connect_with(&server.url(), options).expect("transport");
    let a = transport.open_endpoint().expect("sender");
    let b = transport.open_endpoint().expect("receiver");
    let fed = match a.request(ExecRequest::Create {
        name: "throughput".into(),
        fom: Arc::new(Fom::default()),
    }) {
        Ok(ExecReply::Created { id }) => id,
        other => panic!("create: {other:?}"),
    };
    b.subscribe(fed, TOPIC).expect("subscribe");
    let payload = Bytes::from(vec![0x5a; 100]);
    let started = Instant::now();
    thread::scope(|s| {
        s.spawn(|| {
            for seq in 1..=count {
                a.publish(fed, TOPIC, update(seq, &payload))
                    .expect("publish");
            }
        });
        for seq in 1..=count {
            let env = b
                .inbox()
                .recv_timeout(Duration::from_secs(60))
                .expect("every update arrives");
            assert_eq!(env.seq, seq, "in order");
        }
    });
    count as f64 / started.elapsed().as_secs_f64()
}

fn main() {
    let count: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200_000);
    let core = NatsServerProcess::start().expect("nats-server");
    let core_rate = measure(&core, Persistence::None, count);
    drop(core);
    let store = std::env::temp_dir().join(format!("glidepath-throughput-{}", std::process::id()));
    let store_arg = store
        .to_str()
        .expect("UTF-8 temporary directory")
        .to_string();
    let js = NatsServerProcess::start_with(None, &["--jetstream", "--store_dir", &store_arg])
        .expect("nats-server --jetstream");
    let js_rate = measure(&js, Persistence::jetstream(), count);
    drop(js);
    let _ = std::fs::remove_dir_all(&store);
    println!("{count} updates of 100 B, one sender -> one receiver:");
    println!("  core NATS            {core_rate:>12.0} updates/s");
    println!("  JetStream (file)     {js_rate:>12.0} updates/s");
}
