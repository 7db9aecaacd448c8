//! One sender, one receiver: update throughput and ping-pong latency over `inproc`
//! and over `nats`, next to raw NATS publish/subscribe (async-nats directly, same
//! payload) measured in the same run on the same server, with the ratio. The
//! `endpoint` rows use the transport alone (no RTI, no callbacks); the `glidepath`
//! rows go through federates (updates and Ping/Pong interactions of the benchmark FOM).
//! Each NATS row is run plain, with bundling (16 KiB / 1 ms), with lz4 (on envelopes
//! from 64 B) and with both; `--variants plain` runs the plain rows only.
//!
//! ```text
//! cargo run --release -p glidepath --example nats_vs_raw [-- --count 200000 --pings 5000 --payload 100 --variants all|plain]
//! ```
//!
//! Starts its own `nats-server` (from PATH or GLIDEPATH_NATS_SERVER; `bash
//! scripts/test.sh` installs one) and an executive server on it. Measures, never asserts.

use std::error::Error;
use std::path::PathBuf;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use futures::StreamExt;
use glidepath::backend::nats::{MessagingOptions, NatsTestbed};
use glidepath::backend::NatsOptions;
use glidepath::backend::{Body, Envelope, ExecReply, ExecRequest, Topic, Transport};
use glidepath::{
    AttributeHandle, Bytes, Callback, Federate, FederateHandle, Fom, JoinOptions,
    ObjectClassHandle, ObjectInstanceHandle, OrderType, ProcessModel, ResignAction, Rti,
    TransportationType,
};
use glidepath::{BundleConfig, ChainConfig, Compression};
use hdrhistogram::Histogram;

const WAIT: Duration = Duration::from_secs(30);

struct Args {
    count: u64,
    pings: u64,
    payload: usize,
    /// Run the bundling and compression variants too.
    variants: bool,
}

fn args() -> Result<Args, Box<dyn Error>> {
    let mut a = Args {
        count: 200_000,
        pings: 5_000,
        payload: 100,
        variants: true,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--count" => a.count = value.parse()?,
            "--pings" => a.pings = value.parse()?,
            "--payload" => a.payload = value.parse()?,
            "--variants" => a.variants = value != "plain",
            _ => {
                return Err(format!(
                    "unknown option {flag} (--count, --pings, --payload, --variants)"
                )
                .into())
            }
        }
    }
    Ok(a)
}

/// One row of the table.
struct Row {
    what: String,
    updates_per_s: f64,
    rtt_us_p50: f64,
    rtt_us_p99: f64,
}

fn main() -> Result<(), Box<dyn Error>> {
    let a = args()?;
    let testbed = NatsTestbed::start()?;
    let url = testbed.url();
    let fom = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../foms/benchmark.xml");

    let messaging = |compression: Compression, bundle_bytes_max: usize| NatsOptions {
        messaging: MessagingOptions {
            chain: ChainConfig {
                compression,
                compress_bytes_min: 64,
                ..ChainConfig::default()
            },
            bundle: BundleConfig {
                bundle_bytes_max,
                bundle_time_ns_max: 1_000_000,
            },
            ..MessagingOptions::default()
        },
        ..NatsOptions::default()
    };
    let mut variants = vec![("nats", NatsOptions::default())];
    if a.variants {
        variants.push((
            "nats bundle 16K/1ms",
            messaging(Compression::None, 16 << 10),
        ));
        variants.push(("nats lz4", messaging(Compression::Lz4, 0)));
        variants.push(("nats lz4+bundle", messaging(Compression::Lz4, 16 << 10)));
    }
    let rtis = |prefix: &str| -> Result<Vec<(String, Rti)>, Box<dyn Error>> {
        let mut out = vec![(format!("{prefix} inproc"), Rti::inproc())];
        for (name, options) in &variants {
            out.push((
                format!("{prefix} {name}"),
                Rti::nats_with(&url, options.clone())?,
            ));
        }
        Ok(out)
    };

    let mut rows = Vec::new();
    // The transport alone (no RTI, no callbacks): where the time goes.
    for (what, rti) in rtis("endpoint")? {
        let (updates_per_s, rtt) =
            endpoint_only(rti.transport().as_ref(), a.count, a.pings, a.payload)?;
        rows.push(Row {
            what,
            updates_per_s,
            rtt_us_p50: rtt.value_at_quantile(0.5) as f64 / 1000.0,
            rtt_us_p99: rtt.value_at_quantile(0.99) as f64 / 1000.0,
        });
    }
    for (what, rti) in rtis("glidepath")? {
        rti.create_federation_execution("bench", &[&fom])?;
        let updates_per_s = federate_throughput(&rti, a.count, a.payload)?;
        let rtt = federate_ping_pong(&rti, a.pings, a.payload)?;
        rti.destroy_federation_execution("bench")?;
        rows.push(Row {
            what,
            updates_per_s,
            rtt_us_p50: rtt.value_at_quantile(0.5) as f64 / 1000.0,
            rtt_us_p99: rtt.value_at_quantile(0.99) as f64 / 1000.0,
        });
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let raw_rate = runtime.block_on(raw_throughput(&url, a.count, a.payload))?;
    let raw_rtt = runtime.block_on(raw_ping_pong(&url, a.pings, a.payload))?;
    rows.push(Row {
        what: "raw NATS (async-nats)".into(),
        updates_per_s: raw_rate,
        rtt_us_p50: raw_rtt.value_at_quantile(0.5) as f64 / 1000.0,
        rtt_us_p99: raw_rtt.value_at_quantile(0.99) as f64 / 1000.0,
    });

    // The raw peer of `inproc`: a bounded channel between two threads, same payload,
    // both ends parking when idle (the same wait strategy as the rows above).
    let (chan_rate, chan_rtt) = raw_channel(a.count, a.pings, a.payload);
    rows.push(Row {
        what: "raw channel (crossbeam)".into(),
        updates_per_s: chan_rate,
        rtt_us_p50: chan_rtt.value_at_quantile(0.5) as f64 / 1000.0,
        rtt_us_p99: chan_rtt.value_at_quantile(0.99) as f64 / 1000.0,
    });

    let sha = std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .unwrap_or_default();
    println!(
        "one sender, one receiver; {} updates of {} B; {} ping-pongs; git {}; nats-server on 127.0.0.1; bundles 16 KiB / 1 ms; lz4 from 64 B",
        a.count,
        a.payload,
        a.pings,
        sha.trim()
    );
    println!(
        "{:<24} {:>14} {:>10} {:>14} {:>10} {:>10}",
        "transport", "updates/s", "vs raw", "rtt p50 (us)", "vs raw", "p99 (us)"
    );
    for r in &rows {
        println!(
            "{:<24} {:>14.0} {:>10.2} {:>14.1} {:>10.2} {:>10.1}",
            r.what,
            r.updates_per_s,
            r.updates_per_s / raw_rate,
            r.rtt_us_p50,
            r.rtt_us_p50 / (raw_rtt.value_at_quantile(0.5) as f64 / 1000.0),
            r.rtt_us_p99
        );
    }
    let chan_p50 = chan_rtt.value_at_quantile(0.5) as f64 / 1000.0;
    println!("inproc next to its own raw peer (the channel row):");
    for r in rows.iter().filter(|r| r.what.ends_with("inproc")) {
        println!(
            "{:<24} {:>14.2} x channel throughput {:>10.2} x channel rtt p50",
            r.what,
            r.updates_per_s / chan_rate,
            r.rtt_us_p50 / chan_p50
        );
    }
    drop(testbed);
    Ok(())
}

/// Throughput and ping-pong through bounded crossbeam channels between two threads.
fn raw_channel(count: u64, pings: u64, payload: usize) -> (f64, Histogram<u64>) {
    let body = Bytes::from(vec![7u8; payload]);
    let (tx, rx) = crossbeam_channel::bounded::<Bytes>(1024);
    let start = Instant::now();
    let receiver = thread::spawn(move || {
        let mut n = 0u64;
        while n < count {
            rx.recv().expect("sender alive");
            n += 1;
        }
    });
    for _ in 0..count {
        tx.send(body.clone()).expect("receiver alive");
    }
    receiver.join().expect("receiver thread");
    let rate = count as f64 / start.elapsed().as_secs_f64();

    let (ping_tx, ping_rx) = crossbeam_channel::bounded::<Bytes>(1);
    let (pong_tx, pong_rx) = crossbeam_channel::bounded::<Bytes>(1);
    let ponger = thread::spawn(move || {
        for _ in 0..pings {
            let m = ping_rx.recv().expect("pinger alive");
            pong_tx.send(m).expect("pinger alive");
        }
    });
    let mut rtt = Histogram::<u64>::new(3).expect("3 significant digits");
    for _ in 0..pings {
        let t = Instant::now();
        ping_tx.send(body.clone()).expect("ponger alive");
        pong_rx.recv().expect("ponger alive");
        rtt.record(t.elapsed().as_nanos() as u64)
            .expect("auto-resizing histogram");
    }
    ponger.join().expect("ponger thread");
    (rate, rtt)
}

/// Throughput and ping-pong over two bare endpoints of a transport.
fn endpoint_only(
    transport: &dyn Transport,
    count: u64,
    pings: u64,
    payload: usize,
) -> Result<(f64, Histogram<u64>), Box<dyn Error>> {
    let a = transport.open()?;
    let b = transport.open()?;
    let fed = match a.request(ExecRequest::Create {
        // One federation per run: the NATS rows share one executive server.
        name: {
            static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
            format!(
                "endpoints-{}",
                RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            )
        },
        fom: Arc::new(Fom::default()),
    })? {
        ExecReply::Created { id } => id,
        other => return Err(format!("create: {other:?}").into()),
    };
    let (data, back) = (
        Topic::ObjectClass(ObjectClassHandle(1)),
        Topic::ObjectClass(ObjectClassHandle(2)),
    );
    b.subscribe(fed, data)?;
    a.subscribe(fed, back)?;
    let value = Bytes::from(vec![7u8; payload]);
    let envelope = |sender: u32, seq: u64| Envelope {
        sender: FederateHandle(sender),
        seq,
        publish_time_ns: 0,
        body: Body::Update {
            instance: ObjectInstanceHandle(1),
            class: ObjectClassHandle(1),
            values: Arc::from(vec![(AttributeHandle(1), value.clone())]),
            tag: Bytes::new(),
            order: OrderType::Receive,
            transport: TransportationType::Reliable,
            time: None,
            regions: None,
        },
    };
    let started = Instant::now();
    thread::scope(|s| {
        s.spawn(|| {
            for seq in 1..=count {
                a.publish(fed, data, envelope(1, seq)).expect("publish");
            }
        });
        for _ in 0..count {
            b.inbox()
                .recv_timeout(WAIT)
                .map_err(|e| format!("endpoint receiver: {e}"))?;
        }
        Ok::<_, Box<dyn Error>>(())
    })?;
    let rate = count as f64 / started.elapsed().as_secs_f64();
    let mut histogram = Histogram::<u64>::new(3)?;
    thread::scope(|s| {
        s.spawn(|| {
            for seq in 1..=pings {
                if b.inbox().recv_timeout(WAIT).is_err() {
                    return;
                }
                b.publish(fed, back, envelope(2, count + seq))
                    .expect("pong");
            }
        });
        for seq in 1..=pings {
            let started = Instant::now();
            a.publish(fed, data, envelope(1, count + seq))?;
            a.inbox()
                .recv_timeout(WAIT)
                .map_err(|e| format!("endpoint pinger: {e}"))?;
            histogram.record(started.elapsed().as_nanos() as u64)?;
        }
        Ok::<_, Box<dyn Error>>(())
    })?;
    a.close();
    b.close();
    Ok((rate, histogram))
}

fn join(rti: &Rti, name: &str) -> Result<Federate, Box<dyn Error>> {
    Ok(rti.join(
        "bench",
        JoinOptions::named(name, "bench").with_process_model(ProcessModel::Evoked),
    )?)
}

/// Updates per second from first publish to last reflection.
fn federate_throughput(rti: &Rti, count: u64, payload: usize) -> Result<f64, Box<dyn Error>> {
    let receiver = join(rti, "receiver")?;
    let class = receiver.object_class_handle("BenchObject")?;
    let attribute = receiver.attribute_handle(class, "payload")?;
    receiver.subscribe_object_class_attributes(class, &[attribute])?;
    let sender = join(rti, "sender")?;
    sender.publish_object_class_attributes(class, &[attribute])?;
    let instance = sender.register_object_instance(class)?;
    let value = Bytes::from(vec![7u8; payload]);
    let started = Instant::now();
    let result = thread::scope(|s| {
        let send = s.spawn(|| -> Result<(), glidepath::RtiError> {
            for _ in 0..count {
                sender.update_attribute_values(
                    instance,
                    [(attribute, value.clone())],
                    Bytes::new(),
                )?;
            }
            Ok(())
        });
        let mut got = 0;
        while got < count {
            match receiver.next_callback(WAIT) {
                Some(Callback::ReflectAttributeValues { .. }) => got += 1,
                Some(_) => {}
                None => return Err(format!("receiver: only {got} of {count} updates").into()),
            }
        }
        send.join().expect("sender thread")?;
        Ok::<_, Box<dyn Error>>(())
    });
    result?;
    let rate = count as f64 / started.elapsed().as_secs_f64();
    sender.resign(ResignAction::DeleteObjects)?;
    receiver.resign(ResignAction::DeleteObjects)?;
    Ok(rate)
}

/// Round-trip times of Ping/Pong interactions between two evoked federates.
fn federate_ping_pong(
    rti: &Rti,
    pings: u64,
    payload: usize,
) -> Result<Histogram<u64>, Box<dyn Error>> {
    let pinger = join(rti, "pinger")?;
    let ponger = join(rti, "ponger")?;
    let ping = pinger.interaction_class_handle("Ping")?;
    let pong = pinger.interaction_class_handle("Pong")?;
    let ping_payload = pinger.parameter_handle(ping, "payload")?;
    let pong_payload = pinger.parameter_handle(pong, "payload")?;
    pinger.publish_interaction_class(ping)?;
    pinger.subscribe_interaction_class(pong)?;
    ponger.publish_interaction_class(pong)?;
    ponger.subscribe_interaction_class(ping)?;
    let value = Bytes::from(vec![7u8; payload]);
    let mut histogram = Histogram::<u64>::new(3)?;
    thread::scope(|s| {
        let echo = s.spawn(|| -> Result<(), String> {
            for _ in 0..pings {
                match ponger.next_callback(WAIT) {
                    Some(Callback::ReceiveInteraction { values, .. }) => ponger
                        .send_interaction(pong, [(pong_payload, values[0].1.clone())], Bytes::new())
                        .map_err(|e| e.to_string())?,
                    other => return Err(format!("ponger: {other:?}")),
                }
            }
            Ok(())
        });
        for _ in 0..pings {
            let started = Instant::now();
            pinger.send_interaction(ping, [(ping_payload, value.clone())], Bytes::new())?;
            match pinger.next_callback(WAIT) {
                Some(Callback::ReceiveInteraction { .. }) => {}
                other => return Err(format!("pinger: {other:?}").into()),
            }
            histogram.record(started.elapsed().as_nanos() as u64)?;
        }
        echo.join().expect("ponger thread")?;
        Ok::<_, Box<dyn Error>>(())
    })?;
    pinger.resign(ResignAction::DeleteObjects)?;
    ponger.resign(ResignAction::DeleteObjects)?;
    Ok(histogram)
}

/// Raw NATS: messages per second from first publish to last receipt.
async fn raw_throughput(url: &str, count: u64, payload: usize) -> Result<f64, Box<dyn Error>> {
    // The same client settings as the glidepath backend, so only glidepath differs.
    let options = || {
        async_nats::ConnectOptions::new()
            .subscription_capacity(4 << 20)
            .client_capacity(64 << 10)
    };
    let publisher = options().connect(url).await?;
    let subscriber = options().connect(url).await?;
    let mut sub = subscriber.subscribe("raw.throughput").await?;
    subscriber.flush().await?;
    // Make sure the subscription is registered before the clock starts.
    let probe = publisher.request("raw.none", Bytes::new()).await;
    drop(probe);
    let value = Bytes::from(vec![7u8; payload]);
    let started = Instant::now();
    let receive = tokio::spawn(async move {
        let mut got = 0u64;
        while got < count {
            match tokio::time::timeout(WAIT, sub.next()).await {
                Ok(Some(_)) => got += 1,
                _ => break,
            }
        }
        got
    });
    for _ in 0..count {
        publisher.publish("raw.throughput", value.clone()).await?;
    }
    publisher.flush().await?;
    let got = receive.await?;
    if got < count {
        return Err(format!("raw NATS lost {} of {count} messages", count - got).into());
    }
    Ok(count as f64 / started.elapsed().as_secs_f64())
}

/// Raw NATS: round-trip times of ping/pong between two connections.
async fn raw_ping_pong(
    url: &str,
    pings: u64,
    payload: usize,
) -> Result<Histogram<u64>, Box<dyn Error>> {
    let pinger = async_nats::connect(url).await?;
    let ponger = Arc::new(async_nats::connect(url).await?);
    let mut pings_in = ponger.subscribe("raw.ping").await?;
    let mut pongs_in = pinger.subscribe("raw.pong").await?;
    ponger.flush().await?;
    pinger.flush().await?;
    let _ = pinger.request("raw.none", Bytes::new()).await;
    let _ = ponger.request("raw.none", Bytes::new()).await;
    let echo = {
        let ponger = ponger.clone();
        tokio::spawn(async move {
            for _ in 0..pings {
                let Some(m) = pings_in.next().await else {
                    break;
                };
                if ponger.publish("raw.pong", m.payload).await.is_err() {
                    break;
                }
            }
        })
    };
    let value = Bytes::from(vec![7u8; payload]);
    let mut histogram = Histogram::<u64>::new(3)?;
    for _ in 0..pings {
        let started = Instant::now();
        pinger.publish("raw.ping", value.clone()).await?;
        tokio::time::timeout(WAIT, pongs_in.next())
            .await?
            .ok_or("pong stream ended")?;
        histogram.record(started.elapsed().as_nanos() as u64)?;
    }
    echo.await?;
    Ok(histogram)
}
