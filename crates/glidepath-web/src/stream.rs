//! The websocket `/api/stream`: each client gets the aircraft in its viewport at the
//! rate it asked for, as binary frames (format below and in `docs/web-api.md`), and
//! every acknowledgement and status as JSON text. A client's queue holds one frame:
//! the latest snapshot. A client that cannot keep up skips frames (counted as
//! `frames_dropped`) and never holds up the simulation or another client; one that
//! takes no data for [`STALL_TIMEOUT`] is closed (`clients_stalled`).
//!
//! Binary frame, little-endian, version 1: a 32-byte header — `u8` kind (1), `u8`
//! version (1), `u16` zero, `u32` rows, `u64` frame, `f64` simulated seconds, `u32`
//! aircraft in the run, `u32` frames this client skipped since its previous frame —
//! then per row 28 bytes: `u32` catalog index, then `f32` latitude (°), longitude
//! (°), altitude (ft), ground speed (kt), heading (°), vertical speed (ft/min).

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::{Message as WsMessage, WebSocket};
use futures::{SinkExt, StreamExt};
use tokio::sync::{broadcast, mpsc};
use tokio::time::{timeout, Instant};

use crate::hub::{Hub, Pacer, Snapshot};
use crate::validate::{self, Message};

/// Bytes of a frame's header.
pub const HEADER_BYTES: usize = 32;
/// Bytes of one row.
pub const ROW_BYTES: usize = 28;
/// The frame rate a client gets until it asks for another.
pub const DEFAULT_RATE_HZ: f64 = 10.0;
/// A client that accepts no data for this long is closed.
pub const STALL_TIMEOUT: Duration = Duration::from_secs(10);

/// What one client wants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Subscription {
    /// [west, south, east, north], degrees; `None`: everything.
    pub bbox: Option<[f64; 4]>,
    /// Frames per second.
    pub rate_hz: f64,
}

impl Default for Subscription {
    fn default() -> Subscription {
        Subscription {
            bbox: None,
            rate_hz: DEFAULT_RATE_HZ,
        }
    }
}

fn inside(bbox: &[f64; 4], lat: f32, lon: f32) -> bool {
    let (lat, lon) = (f64::from(lat), f64::from(lon));
    let [w, s, e, n] = *bbox;
    let lon_in = if w <= e {
        (w..=e).contains(&lon)
    } else {
        lon >= w || lon <= e
    };
    lon_in && (s..=n).contains(&lat)
}

/// Encodes the rows of `snap` inside `bbox` as one binary frame.
pub fn encode_frame(snap: &Snapshot, bbox: Option<&[f64; 4]>, skipped: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_BYTES + snap.rows.len() * ROW_BYTES);
    out.extend_from_slice(&[1, 1, 0, 0]);
    out.extend_from_slice(&0u32.to_le_bytes()); // rows, filled in below
    out.extend_from_slice(&snap.frame.to_le_bytes());
    out.extend_from_slice(&snap.sim_time_s.to_le_bytes());
    out.extend_from_slice(&(snap.rows.len() as u32).to_le_bytes());
    out.extend_from_slice(&skipped.to_le_bytes());
    let mut n = 0u32;
    for (i, r) in snap.rows.iter().enumerate() {
        if bbox.is_some_and(|b| !inside(b, r.lat, r.lon)) {
            continue;
        }
        n += 1;
        out.extend_from_slice(&(i as u32).to_le_bytes());
        for v in [r.lat, r.lon, r.alt_ft, r.gs_kt, r.heading_deg, r.vs_fpm] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    out[4..8].copy_from_slice(&n.to_le_bytes());
    out
}

fn subscription(text: &str) -> Result<Subscription, validate::Rejection> {
    let v = validate::parse(Message::Subscribe, text.as_bytes())?;
    let bbox = v.get("bbox").and_then(|b| b.as_array()).map(|b| {
        let f = |i: usize| b[i].as_f64().unwrap_or_default();
        [f(0), f(1), f(2), f(3)]
    });
    if let Some([_, s, _, n]) = bbox {
        if s > n {
            return Err(validate::Rejection::bad(
                "schema",
                "/bbox",
                format!("south {s} is above north {n}"),
            ));
        }
    }
    Ok(Subscription {
        bbox,
        rate_hz: v
            .get("rate_hz")
            .and_then(|r| r.as_f64())
            .unwrap_or(DEFAULT_RATE_HZ),
    })
}

/// Serves one websocket client until it leaves, stalls or the server stops.
pub(crate) async fn serve(socket: WebSocket, hub: Arc<Hub>) {
    let (mut sink, mut source) = socket.split();
    let mut events = hub.events.subscribe();
    let (replies_tx, mut replies) = mpsc::channel::<Result<Subscription, String>>(16);
    let reader_hub = hub.clone();
    let reader = tokio::spawn(async move {
        while let Some(msg) = source.next().await {
            let reply = match msg {
                Ok(WsMessage::Text(text)) => subscription(text.as_str()).map_err(|r| {
                    reader_hub.counters.count(&r);
                    error_json(&r)
                }),
                Ok(WsMessage::Binary(_)) => {
                    let r = validate::Rejection::bad(
                        "malformed_json",
                        "",
                        "binary messages are not accepted: send JSON text",
                    );
                    reader_hub.counters.count(&r);
                    Err(error_json(&r))
                }
                Ok(WsMessage::Close(_)) => break,
                Ok(_) => continue,
                Err(_) => {
                    // Oversized or broken framing: the protocol layer closes it.
                    reader_hub.counters.add("ws_protocol_errors", 1);
                    break;
                }
            };
            if replies_tx.send(reply).await.is_err() {
                break;
            }
        }
    });
    let loaded = hub.loaded();
    let hello = serde_json::json!({
        "type": "hello",
        "format": 1,
        "scenario": loaded.catalog.scenario,
        "aircraft": loaded.catalog.aircraft.len(),
        "status": *hub.status.borrow(),
    });
    let mut sub = Subscription::default();
    let mut snapshots = hub.snapshot.subscribe();
    if snapshots.borrow().seq > 0 {
        // A paused run makes no new snapshot: the latest goes out at once.
        snapshots.mark_changed();
    }
    let mut skipped = 0u64;
    // A frame goes out when a new snapshot is there and the client's rate allows:
    // driven by the snapshots, not by a clock of its own, so that a client at the
    // simulation's rate gets every snapshot.
    // A tenth above the asked rate: a client at the simulation's own rate would
    // otherwise stay phase-locked behind it by whatever delay it once had.
    let mut pacer = Pacer::new(sub.rate_hz * 1.1);
    let mut pending = false;
    let mut wake = Instant::now();
    if send_within(&mut sink, WsMessage::Text(hello.to_string().into()))
        .await
        .is_err()
    {
        reader.abort();
        return;
    }
    loop {
        tokio::select! {
            changed = snapshots.changed(), if !pending => {
                if changed.is_err() {
                    break; // the server is stopping
                }
                pending = true;
                wake = Instant::now() + pacer.wait();
            }
            _ = tokio::time::sleep_until(wake), if pending => {
                if !pacer.take() {
                    wake = Instant::now() + pacer.wait();
                    continue;
                }
                pending = false;
                let snap = snapshots.borrow_and_update().clone();
                if snap.seq == 0 {
                    continue; // no frame has run yet
                }
                let started = Instant::now();
                let frame = if sub.bbox.is_none() && skipped == 0 {
                    snap.full_frame()
                } else {
                    encode_frame(&snap, sub.bbox.as_ref(), skipped.min(u64::from(u32::MAX)) as u32).into()
                };
                skipped = 0;
                if send_within(&mut sink, WsMessage::Binary(frame)).await.is_err() {
                    hub.counters.add("clients_stalled", 1);
                    break;
                }
                // A send slower than the period: the periods it took are skipped
                // frames, not a queue.
                let took = started.elapsed();
                let period = pacer.period();
                if took > period {
                    let missed = (took.as_secs_f64() / period.as_secs_f64()).floor() as u64;
                    skipped += missed;
                    hub.counters.add("frames_dropped", missed);
                }
            }
            event = events.recv() => match event {
                Ok(text) => {
                    if send_within(&mut sink, WsMessage::Text(text.as_ref().into())).await.is_err() {
                        hub.counters.add("clients_stalled", 1);
                        break;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(n)) => hub.counters.add("events_dropped", n),
                Err(broadcast::error::RecvError::Closed) => break,
            },
            reply = replies.recv() => match reply {
                Some(Ok(s)) => {
                    sub = s;
                    pacer = Pacer::new(sub.rate_hz * 1.1);
                    // The new viewport's aircraft at once, from the latest snapshot.
                    snapshots.mark_changed();
                }
                Some(Err(text)) => {
                    if send_within(&mut sink, WsMessage::Text(text.into())).await.is_err() {
                        break;
                    }
                }
                None => break, // the client left
            },
        }
    }
    reader.abort();
}

async fn send_within(
    sink: &mut futures::stream::SplitSink<WebSocket, WsMessage>,
    m: WsMessage,
) -> Result<(), ()> {
    match timeout(STALL_TIMEOUT, sink.send(m)).await {
        Ok(Ok(())) => Ok(()),
        _ => Err(()),
    }
}

fn error_json(r: &validate::Rejection) -> String {
    let mut v = serde_json::to_value(r).unwrap_or_default();
    v["type"] = "error".into();
    v.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hub::Row;

    fn at(lat: f32, lon: f32) -> Row {
        Row {
            lat,
            lon,
            ..Row::default()
        }
    }

    #[test]
    fn a_viewport_across_the_antimeridian_keeps_both_sides() {
        let bbox = [170.0, -10.0, -170.0, 10.0];
        assert!(inside(&bbox, 0.0, 175.0));
        assert!(inside(&bbox, 0.0, -175.0));
        assert!(!inside(&bbox, 0.0, 0.0));
        assert!(!inside(&bbox, 20.0, 175.0));
    }

    #[test]
    fn a_frame_has_its_header_and_only_the_rows_inside() {
        let snap = Snapshot {
            seq: 1,
            frame: 7,
            sim_time_s: 1.5,
            rows: vec![at(37.0, -122.0), at(40.0, -74.0), at(37.5, -122.5)],
            full: Default::default(),
        };
        let f = encode_frame(&snap, Some(&[-123.0, 36.0, -121.0, 38.0]), 3);
        assert_eq!(f.len(), HEADER_BYTES + 2 * ROW_BYTES);
        assert_eq!(u32::from_le_bytes(f[4..8].try_into().unwrap()), 2);
        assert_eq!(u64::from_le_bytes(f[8..16].try_into().unwrap()), 7);
        assert_eq!(f64::from_le_bytes(f[16..24].try_into().unwrap()), 1.5);
        assert_eq!(
            u32::from_le_bytes(f[24..28].try_into().unwrap()),
            3,
            "aircraft in the run"
        );
        assert_eq!(
            u32::from_le_bytes(f[28..32].try_into().unwrap()),
            3,
            "skipped"
        );
        let second = HEADER_BYTES + ROW_BYTES;
        assert_eq!(
            u32::from_le_bytes(f[second..second + 4].try_into().unwrap()),
            2,
            "catalog index"
        );
        assert_eq!(snap.full_frame().len(), HEADER_BYTES + 3 * ROW_BYTES);
    }
}
