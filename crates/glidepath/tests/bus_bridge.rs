//! The bus bridge against a real `nats-server` (JetStream on), with a plain NATS
//! client on the other side: bus messages come out as JSON, JSON goes in as bus
//! messages, nothing is echoed back, malformed JSON is counted and never forwarded.

use std::time::Duration;

use futures::StreamExt;
use glidepath::backend::nats::NatsServerProcess;
use glidepath::bus::bridge::{Bridge, BridgeConfig, FromNats, ToNats};
use glidepath::bus::{Bus, BusConfig, Event, Message, Pattern, ServiceLevel, Subject};
use glidepath::Bytes;
use serde_json::Value;

const WAIT: Duration = Duration::from_secs(10);

#[test]
fn bus_and_plain_nats_meet_in_json_both_ways() {
    let store = std::env::temp_dir().join(format!("glidepath-bridge-{}", std::process::id()));
    let server = NatsServerProcess::start_with(
        None,
        &["--jetstream", "--store_dir", store.to_str().unwrap()],
    )
    .unwrap();
    let url = server.url();
    let bus_config = BusConfig {
        default_group: Subject::new("FFTB").unwrap(),
        ..BusConfig::nats(&url)
    };
    let bridge = Bridge::start(BridgeConfig {
        bus: BusConfig {
            name: "bridge".into(),
            ..bus_config.clone()
        },
        nats_url: url.clone(),
        nats_security: Default::default(),
        to_nats: vec![ToNats {
            pattern: Pattern::new("FFTB.>").unwrap(),
            group: None,
            prefix: "fftb.json".into(),
        }],
        from_nats: vec![FromNats {
            subject: "fftb.in.>".into(),
            level: ServiceLevel::Fifo,
            group: None,
        }],
    })
    .unwrap();

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let client = runtime.block_on(async_nats::connect(&url)).unwrap();
    let mut out = runtime
        .block_on(client.subscribe("fftb.json.>".to_string()))
        .unwrap();
    // Effective before anything is published: a request no one answers comes back
    // only after the server processed the subscription.
    let _ = runtime.block_on(client.request("settle.bridge.test".to_string(), Bytes::new()));
    let next_json = |out: &mut async_nats::Subscriber| -> Option<(String, Value)> {
        let m = runtime
            .block_on(async { tokio::time::timeout(WAIT, out.next()).await })
            .ok()??;
        Some((
            m.subject.to_string(),
            serde_json::from_slice(&m.payload).unwrap(),
        ))
    };

    // Bus to NATS.
    let stars = Bus::connect(&BusConfig {
        name: "stars".into(),
        ..bus_config.clone()
    })
    .unwrap();
    let truth = Subject::new("FFTB.MMS.SAT1.DATA.TRUTH.STARS.POSVEL").unwrap();
    stars
        .publish(
            &truth,
            &Message::new().with("x", 7000.5f64).with("n", 3i32),
            ServiceLevel::Agreed,
        )
        .unwrap();
    let (subject, json) = next_json(&mut out).expect("the truth message as JSON");
    assert_eq!(subject, "fftb.json.FFTB.MMS.SAT1.DATA.TRUTH.STARS.POSVEL");
    assert_eq!(json["subject"], truth.as_str());
    assert_eq!(json["level"], "agreed");
    assert!(json["group_seq"].as_u64().unwrap() > 0, "{json}");
    assert_eq!(
        json["entries"],
        serde_json::json!([{"key": "x", "typ": "D", "val": "7000.5"}, {"key": "n", "typ": "I", "val": "3"}])
    );

    // NATS to bus, and not echoed back to NATS although FFTB.> matches it.
    let fe = Bus::connect(&BusConfig {
        name: "fe".into(),
        ..bus_config.clone()
    })
    .unwrap();
    let commands = fe
        .subscribe(&Pattern::new("FFTB.MMS.*.CMD.>").unwrap())
        .unwrap();
    let command = r#"{"subject": "FFTB.MMS.SAT1.CMD.MANEUVER.FE.BURN",
                      "entries": [{"key": "dv", "typ": "D", "val": "0.25"}]}"#;
    runtime
        .block_on(client.publish("fftb.in.cmd".to_string(), Bytes::from(command)))
        .unwrap();
    // Malformed: not JSON; a value that does not parse. Counted, not forwarded.
    for bad in [
        &b"{nope"[..],
        br#"{"subject":"FFTB.X","entries":[{"key":"k","typ":"I","val":"x"}]}"#,
    ] {
        runtime
            .block_on(client.publish("fftb.in.bad".to_string(), Bytes::from_static(bad)))
            .unwrap();
    }
    runtime.block_on(client.flush()).unwrap();
    let Some(Event::Message(d)) = commands.recv_timeout(WAIT).unwrap() else {
        panic!("the command on the bus");
    };
    assert_eq!(d.subject.as_str(), "FFTB.MMS.SAT1.CMD.MANEUVER.FE.BURN");
    assert_eq!(d.level, ServiceLevel::Fifo);
    assert_eq!(d.message.get_f64("dv").unwrap(), 0.25);
    assert_eq!(d.sender, bridge.member(), "sent by the bridge");

    // Another bus message proves the NATS side is live; the command was not echoed.
    stars
        .publish(
            &truth,
            &Message::new().with("x", 1.0f64),
            ServiceLevel::Fifo,
        )
        .unwrap();
    let (subject, _) = next_json(&mut out).expect("the second truth message");
    assert_eq!(
        subject, "fftb.json.FFTB.MMS.SAT1.DATA.TRUTH.STARS.POSVEL",
        "no echo came first"
    );
    assert!(
        commands
            .recv_timeout(Duration::from_millis(300))
            .unwrap()
            .is_none(),
        "nothing malformed reached the bus"
    );
    let deadline = std::time::Instant::now() + WAIT;
    while bridge.stats().refused_from_nats < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let stats = bridge.stats();
    assert_eq!(
        (
            stats.to_nats,
            stats.from_nats,
            stats.refused_from_nats,
            stats.failed
        ),
        (2, 1, 2, 0),
        "{stats:?}"
    );
    bridge.close();
    let _ = std::fs::remove_dir_all(&store);
}
