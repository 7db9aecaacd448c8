//! The websocket stream: frames decode as documented, a viewport gets only its
//! aircraft, hostile subscriptions get an error naming the field, and a client that
//! stops reading holds up neither the simulation nor the other clients.

mod common;

use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::start;
use serde_json::Value;
use tungstenite::{Message, WebSocket};

type Ws = WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>;

struct Frame {
    rows: Vec<(u32, f32, f32)>,
    total: u32,
    frame: u64,
}

fn decode(b: &[u8]) -> Frame {
    assert!(b.len() >= 32, "a frame has a 32-byte header");
    assert_eq!(&b[..4], &[1, 1, 0, 0], "kind 1, version 1");
    let n = u32::from_le_bytes(b[4..8].try_into().unwrap()) as usize;
    assert_eq!(b.len(), 32 + 28 * n, "28 bytes a row");
    let f32_at = |o: usize| f32::from_le_bytes(b[o..o + 4].try_into().unwrap());
    let rows = (0..n)
        .map(|k| {
            let o = 32 + 28 * k;
            (
                u32::from_le_bytes(b[o..o + 4].try_into().unwrap()),
                f32_at(o + 4),
                f32_at(o + 8),
            )
        })
        .collect();
    Frame {
        rows,
        total: u32::from_le_bytes(b[24..28].try_into().unwrap()),
        frame: u64::from_le_bytes(b[8..16].try_into().unwrap()),
    }
}

fn connect(run: &common::Run) -> Ws {
    let (mut ws, _) = tungstenite::connect(run.ws_url()).expect("the stream opens");
    if let tungstenite::stream::MaybeTlsStream::Plain(s) = ws.get_mut() {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    }
    ws
}

fn next_frame(ws: &mut Ws) -> Frame {
    loop {
        match ws.read().expect("the stream stays open") {
            Message::Binary(b) => return decode(&b),
            _ => continue,
        }
    }
}

fn next_text(ws: &mut Ws, kind: &str) -> Value {
    loop {
        if let Message::Text(t) = ws.read().expect("the stream stays open") {
            let v: Value = serde_json::from_str(t.as_str()).unwrap();
            if v["type"] == kind {
                return v;
            }
        }
    }
}

#[test]
fn frames_carry_every_aircraft_and_a_viewport_only_its_own() {
    let run = start("demo", 30.0, 1.0);
    let mut ws = connect(&run);
    let hello = next_text(&mut ws, "hello");
    assert_eq!(hello["aircraft"], 8);
    let all = next_frame(&mut ws);
    assert_eq!(all.total, 8);
    assert_eq!(all.rows.len(), 8);
    // A box around two of them: the rows are exactly those inside it.
    let (_, lat, lon) = all.rows[0];
    let bbox = [lon - 0.01, lat - 0.01, lon + 0.01, lat + 0.01];
    ws.send(Message::Text(
        serde_json::json!({"type": "subscribe", "bbox": bbox, "rate_hz": 5})
            .to_string()
            .into(),
    ))
    .unwrap();
    let start_t = Instant::now();
    let mut frames = 0;
    let mut last_frame = 0;
    while start_t.elapsed() < Duration::from_secs(2) {
        let f = next_frame(&mut ws);
        if f.rows.len() < 8 {
            frames += 1;
            assert!(f.frame > last_frame, "frames in order");
            last_frame = f.frame;
            for (_, la, lo) in &f.rows {
                let (la, lo) = (f64::from(*la), f64::from(*lo));
                assert!(la >= f64::from(bbox[1]) - 1e-4 && la <= f64::from(bbox[3]) + 1e-4);
                assert!(lo >= f64::from(bbox[0]) - 1e-4 && lo <= f64::from(bbox[2]) + 1e-4);
            }
        }
    }
    // 5 Hz for 2 s, with slack for a loaded machine.
    assert!((3..=14).contains(&frames), "{frames} frames at 5 Hz in 2 s");
}

#[test]
fn hostile_subscriptions_get_an_error_naming_the_field() {
    let run = start("demo", 10.0, 1.0);
    let mut ws = connect(&run);
    let cases: Vec<(Message, &str, &str)> = vec![
        (
            Message::Text(r#"{"type":"subscribe","bbox":[-200,0,10,10]}"#.into()),
            "schema",
            "/bbox/0",
        ),
        (
            Message::Text(r#"{"type":"subscribe","bbox":[0,10,10,0]}"#.into()),
            "schema",
            "/bbox",
        ),
        (
            Message::Text(r#"{"type":"subscribe","bbox":[0,1,2]}"#.into()),
            "schema",
            "/bbox",
        ),
        (
            Message::Text(r#"{"type":"subscribe","rate_hz":1000}"#.into()),
            "schema",
            "/rate_hz",
        ),
        (
            Message::Text(r#"{"type":"subscribe","rate_hz":"fast"}"#.into()),
            "schema",
            "/rate_hz",
        ),
        (
            Message::Text(r#"{"type":"subscribe","admin":true}"#.into()),
            "schema",
            "/admin",
        ),
        (
            Message::Text(r#"{"type":"command"}"#.into()),
            "schema",
            "/type",
        ),
        (Message::Text("{not json".into()), "malformed_json", ""),
        (
            Message::Text(format!(r#"{{"type":"subscribe","x":"{}"}}"#, "y".repeat(6000)).into()),
            "too_large",
            "",
        ),
        (Message::Binary(vec![0u8; 64].into()), "malformed_json", ""),
    ];
    for (msg, error, field) in cases {
        let shown = format!("{msg:?}").chars().take(80).collect::<String>();
        ws.send(msg).unwrap();
        let reply = next_text(&mut ws, "error");
        assert_eq!(reply["error"], error, "{shown}: {reply}");
        assert_eq!(reply["field"], field, "{shown}: {reply}");
    }
    // The connection still serves frames.
    assert_eq!(next_frame(&mut ws).total, 8);
    let stats = common::get_json(&run, "/api/stats");
    assert_eq!(stats["counters"]["schema"], 7, "{stats}");
}

#[test]
fn a_stalled_client_holds_up_neither_the_run_nor_the_others() {
    let run = start("us-1000", 30.0, 1.0);
    // A client that completes the handshake and then never reads.
    let (stalled, _) = tungstenite::connect(run.ws_url()).unwrap();
    let mut readers: Vec<Ws> = (0..3).map(|_| connect(&run)).collect();
    for ws in &mut readers {
        ws.send(Message::Text(r#"{"type":"subscribe","rate_hz":10}"#.into()))
            .unwrap();
    }
    let frame_at_start = common::get_json(&run, "/api/status")["frame"]
        .as_u64()
        .unwrap();
    let t0 = Instant::now();
    let mut counts = [0u32; 3];
    let mut worst_gap = Duration::ZERO;
    let mut last = [Instant::now(); 3];
    while t0.elapsed() < Duration::from_secs(4) {
        for (k, ws) in readers.iter_mut().enumerate() {
            let f = next_frame(ws);
            assert_eq!(f.total, 1000);
            counts[k] += 1;
            worst_gap = worst_gap.max(last[k].elapsed());
            last[k] = Instant::now();
        }
    }
    let frames_run = common::get_json(&run, "/api/status")["frame"]
        .as_u64()
        .unwrap()
        - frame_at_start;
    eprintln!(
        "stalled client beside 3 readers, 1,000 aircraft: frames per reader {counts:?} in 4 s, worst gap {worst_gap:?}, simulation frames {frames_run}"
    );
    for c in counts {
        assert!(c >= 12, "each reader got frames all along: {counts:?}");
    }
    assert!(
        worst_gap < Duration::from_secs(2),
        "no reader waited on the stalled one: {worst_gap:?}"
    );
    drop(stalled);
}
