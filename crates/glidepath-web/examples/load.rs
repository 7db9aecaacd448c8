//! The web under load: a target generator flying N aircraft, its web server, and C
//! websocket clients taking every aircraft at R frames a second, S of which never read
//! (stalled). Reports what the reading clients got — frames per second, the lag from
//! the simulation's publishing a snapshot to a client's having decoded it, the gaps —
//! and the CPU of the web's threads and of the simulation.
//!
//! ```sh
//! cargo run --release -p glidepath-web --example load -- --aircraft 10000 --clients 20 --stalled 1 --rate 10 --seconds 10
//! ```

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use glidepath::Rti;
use glidepath_tg::model::Model;
use glidepath_tg::perf::PerformanceTable;
use glidepath_tg::runner::{self, Control, Observer, RunOptions, Status};
use glidepath_tg::scenario;
use glidepath_tg::server::{FrameReport, LocalLayout, LocalRun, ServerConfig, SimulationServer};
use glidepath_web::{Catalog, TgObserver, WebConfig};
use parking_lot::Mutex;

struct Args {
    aircraft: usize,
    clients: usize,
    stalled: usize,
    rate: f64,
    seconds: f64,
}

fn args() -> Args {
    let mut a = Args {
        aircraft: 10_000,
        clients: 20,
        stalled: 1,
        rate: 10.0,
        seconds: 10.0,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let v = it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        let num = || -> f64 {
            v.parse()
                .unwrap_or_else(|_| panic!("{flag}: `{v}` is not a number"))
        };
        match flag.as_str() {
            "--aircraft" => a.aircraft = num() as usize,
            "--clients" => a.clients = num() as usize,
            "--stalled" => a.stalled = num() as usize,
            "--rate" => a.rate = num(),
            "--seconds" => a.seconds = num(),
            other => {
                panic!("unknown flag {other} (--aircraft --clients --stalled --rate --seconds)")
            }
        }
    }
    assert!(
        a.stalled < a.clients,
        "--stalled must leave at least one reading client"
    );
    a
}

/// The web's observer, noting when each frame's snapshot was handed over.
struct Timed {
    web: TgObserver,
    published: Arc<Mutex<HashMap<u64, Instant>>>,
}

impl Observer for Timed {
    fn status(&mut self, status: &Status, _: &mut SimulationServer) {
        self.web.on_status(status);
    }

    fn tick(&mut self, server: &mut SimulationServer, _: Option<&FrameReport>, sim: f64) {
        self.web.on_tick(server, sim);
        self.published.lock().insert(server.frame(), Instant::now());
    }
}

/// CPU seconds of this process's threads whose name starts with `prefix`.
fn thread_cpu(prefix: &str) -> f64 {
    let tick = 100.0; // USER_HZ on Linux
    let mut total = 0.0;
    for task in std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten()
    {
        let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if !comm.trim_end().starts_with(prefix) {
            continue;
        }
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        // Fields after the parenthesised name: state is field 3; utime 14, stime 15.
        let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
        let f: Vec<&str> = after.split_whitespace().collect();
        if f.len() > 13 {
            total +=
                (f[11].parse::<f64>().unwrap_or(0.0) + f[12].parse::<f64>().unwrap_or(0.0)) / tick;
        }
    }
    total
}

fn pct(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len()) - 1]
}

fn main() {
    let a = args();
    let table = PerformanceTable::builtin();
    let mut scen = scenario::load("us-10000", table).expect("built-in scenario us-10000");
    scen.aircraft.truncate(a.aircraft);
    let n = scen.aircraft.len();
    let catalog = Catalog::new(&scen, table);
    let (controls, rx) = crossbeam_channel::unbounded();
    let mut config = WebConfig::new("127.0.0.1:0".parse().unwrap());
    config.max_rate_hz = a.rate;
    let (web, observer) = glidepath_web::start(config, catalog, controls.clone()).unwrap();
    let published = Arc::new(Mutex::new(HashMap::new()));
    let mut timed = Timed {
        web: observer,
        published: published.clone(),
    };
    let rate = a.rate;
    let sim = std::thread::Builder::new()
        .name("tg-run".into())
        .spawn(move || {
            let rti = Rti::inproc();
            let layout = LocalLayout::new(1, 1, Model::PointMass);
            let mut tg =
                LocalRun::start(&rti, "web-load", scen, &layout, ServerConfig::new(1)).unwrap();
            let options = RunOptions {
                rate_hz: rate,
                speed: 1.0,
                seconds: None,
                status_every: Duration::from_secs(1),
            };
            let last = runner::run(&mut tg.server, &rx, options, &mut timed).unwrap();
            tg.finish().unwrap();
            last
        })
        .unwrap();
    let url = format!("ws://{}/api/stream", web.addr());
    let sub = format!(r#"{{"type":"subscribe","rate_hz":{}}}"#, a.rate);
    let stalled: Vec<_> = (0..a.stalled)
        .map(|_| {
            let (mut ws, _) = tungstenite::connect(&url).unwrap();
            ws.send(tungstenite::Message::Text(sub.clone().into()))
                .unwrap();
            ws // never read
        })
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let warmup = Duration::from_secs(2);
    let readers: Vec<_> = (0..a.clients - a.stalled)
        .map(|k| {
            let (url, sub, stop, published) =
                (url.clone(), sub.clone(), stop.clone(), published.clone());
            std::thread::Builder::new()
                .name(format!("client-{k}"))
                .spawn(move || {
                    let (mut ws, _) = tungstenite::connect(&url).unwrap();
                    if let tungstenite::stream::MaybeTlsStream::Plain(s) = ws.get_mut() {
                        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                    }
                    ws.send(tungstenite::Message::Text(sub.into())).unwrap();
                    let t0 = Instant::now();
                    let (mut lags, mut gaps, mut frames, mut rows) =
                        (Vec::new(), Vec::new(), 0u64, 0u64);
                    let mut last = None::<Instant>;
                    while !stop.load(Ordering::Relaxed) {
                        let Ok(msg) = ws.read() else { break };
                        let tungstenite::Message::Binary(b) = msg else {
                            continue;
                        };
                        let now = Instant::now();
                        let frame = u64::from_le_bytes(b[8..16].try_into().unwrap());
                        rows += u64::from(u32::from_le_bytes(b[4..8].try_into().unwrap()));
                        if t0.elapsed() < warmup {
                            continue;
                        }
                        frames += 1;
                        if let Some(p) = published.lock().get(&frame) {
                            lags.push(now.saturating_duration_since(*p).as_secs_f64() * 1e3);
                        }
                        if let Some(l) = last {
                            gaps.push((now - l).as_secs_f64() * 1e3);
                        }
                        last = Some(now);
                    }
                    (frames, rows, lags, gaps)
                })
                .unwrap()
        })
        .collect();
    std::thread::sleep(warmup);
    let (web0, sim0, t0) = (
        thread_cpu("glidepath-web"),
        thread_cpu("tg-"),
        Instant::now(),
    );
    std::thread::sleep(Duration::from_secs_f64(a.seconds));
    let (web1, sim1, wall) = (
        thread_cpu("glidepath-web"),
        thread_cpu("tg-"),
        t0.elapsed().as_secs_f64(),
    );
    let counters = web.hub().counters.snapshot();
    stop.store(true, Ordering::Relaxed);
    let (mut lags, mut gaps, mut frames) = (Vec::new(), Vec::new(), Vec::new());
    for r in readers {
        let (f, _rows, l, g) = r.join().unwrap();
        frames.push(f as f64 / wall);
        lags.extend(l);
        gaps.extend(g);
    }
    controls.send(Control::Stop).unwrap();
    let last = sim.join().unwrap();
    drop(stalled);
    lags.sort_by(f64::total_cmp);
    gaps.sort_by(f64::total_cmp);
    frames.sort_by(f64::total_cmp);
    let frame_bytes = 32 + 28 * n;
    println!(
        "web load: {n} aircraft at {} Hz to {} clients ({} stalled), {:.1} s measured",
        a.rate, a.clients, a.stalled, wall
    );
    println!(
        "  frame size {:.1} KiB; to the {} reading clients {:.1} MiB/s in all",
        frame_bytes as f64 / 1024.0,
        a.clients - a.stalled,
        frames.iter().sum::<f64>() * frame_bytes as f64 / 1048576.0
    );
    println!(
        "  frames per second per reading client: min {:.2}, median {:.2}, max {:.2} (the simulation's last second: {:.1} Hz)",
        frames[0],
        pct(&frames, 0.5),
        frames[frames.len() - 1],
        last.rate_hz
    );
    println!(
        "  lag, snapshot handed over -> frame decoded by a client: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms ({} frames)",
        pct(&lags, 0.5),
        pct(&lags, 0.99),
        pct(&lags, 1.0),
        lags.len()
    );
    println!(
        "  gap between a client's frames: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        pct(&gaps, 0.5),
        pct(&gaps, 0.99),
        pct(&gaps, 1.0)
    );
    println!(
        "  CPU: web threads {:.0} % of a core, simulation {:.0} %; counters {counters:?}",
        (web1 - web0) / wall * 100.0,
        (sim1 - sim0) / wall * 100.0
    );
}
