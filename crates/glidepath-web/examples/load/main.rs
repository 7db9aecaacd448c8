//! The web under load: a target generator flying N aircraft, its web server, and C
//! websocket clients taking every aircraft at R frames a second, S of which never read
//! (stalled). Reports what the reading clients got — frames per second, the lag from
//! the simulation's publishing a snapshot to a client's having decoded it, the gaps —
//! and the CPU of the web's threads and of the simulation. Then, in the same run, the
//! raw peer: a bare websocket broadcaster sending frames of the same size at the same
//! rate to the same clients, and the ratios web / raw. With `--browser`, the radar
//! page also runs in headless chromium (chromedriver) for `--seconds`: its redraws a
//! second, draw cost, the stream frames it takes and the browser's CPU.
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
    /// Also open the radar in headless chromium and count its redraws.
    browser: bool,
}

fn args() -> Args {
    let mut a = Args {
        aircraft: 10_000,
        clients: 20,
        stalled: 1,
        rate: 10.0,
        seconds: 10.0,
        browser: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--browser" {
            a.browser = true;
            continue;
        }
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
                panic!("unknown flag {other} (--aircraft --clients --stalled --rate --seconds --browser)")
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
    let measured = measure(&a, &url, &sub, &published, "glidepath-web", Some("tg-"));
    let counters = web.hub().counters.snapshot();
    let page = a.browser.then(|| browser::radar(web.addr(), n, a.seconds));
    controls.send(Control::Stop).unwrap();
    let last = sim.join().unwrap();
    drop(web);

    // The raw peer in the same run: a bare websocket broadcaster handing the same
    // number of bytes at the same rate to the same clients, with nothing to do but
    // send (no simulation snapshot, no viewport, no encoding).
    let raw_published = Arc::new(Mutex::new(HashMap::new()));
    let raw = RawBroadcaster::start(32 + 28 * n, a.rate, raw_published.clone());
    let raw_url = format!("ws://{}/raw", raw.addr);
    let raw_measured = measure(&a, &raw_url, &sub, &raw_published, "raw-ws", None);
    drop(raw);

    let frame_bytes = 32 + 28 * n;
    println!(
        "web load: {n} aircraft at {} Hz to {} clients ({} stalled), {:.1} s measured each",
        a.rate, a.clients, a.stalled, measured.wall
    );
    println!(
        "  frame size {:.1} KiB; the simulation's last second: {:.1} Hz; counters {counters:?}",
        frame_bytes as f64 / 1024.0,
        last.rate_hz
    );
    println!(
        "  {:<16} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>8}",
        "server",
        "fps min",
        "fps med",
        "MiB/s",
        "lag p50",
        "lag p99",
        "lag max",
        "gap p99",
        "CPU %",
        "sim %"
    );
    for (name, m) in [
        ("glidepath web", &measured),
        ("raw websocket", &raw_measured),
    ] {
        println!(
            "  {:<16} {:>9.2} {:>9.2} {:>9.1} {:>8.1}ms {:>8.1}ms {:>8.1}ms {:>8.1}ms {:>8.0} {:>8}",
            name,
            m.frames[0],
            pct(&m.frames, 0.5),
            m.frames.iter().sum::<f64>() * frame_bytes as f64 / 1048576.0,
            pct(&m.lags, 0.5),
            pct(&m.lags, 0.99),
            pct(&m.lags, 1.0),
            pct(&m.gaps, 0.99),
            m.cpu * 100.0,
            m.sim_cpu.map_or("-".to_string(), |c| format!("{:.0}", c * 100.0)),
        );
    }
    if let Some(p) = page {
        println!(
            "  headless chromium on the radar ({}): {n} aircraft on the page, {:.1} redraws/s, draw {:.1} ms (page thread), its view advancing {:.1} simulation frames/s, browser CPU {:.0} % of a core",
            p.renderer, p.renders_per_s, p.draw_ms, p.frames_per_s, p.cpu * 100.0
        );
    }
    println!(
        "  ratio web / raw: lag p50 {:.2}x, lag p99 {:.2}x, server CPU {:.2}x, median fps {:.3}x",
        pct(&measured.lags, 0.5) / pct(&raw_measured.lags, 0.5),
        pct(&measured.lags, 0.99) / pct(&raw_measured.lags, 0.99),
        measured.cpu / raw_measured.cpu.max(1e-9),
        pct(&measured.frames, 0.5) / pct(&raw_measured.frames, 0.5),
    );
}

mod browser;

/// What the reading clients of one server got.
struct Measured {
    wall: f64,
    /// Frames per second per reading client, sorted.
    frames: Vec<f64>,
    /// Milliseconds from a frame's publication to its decoding, sorted.
    lags: Vec<f64>,
    /// Milliseconds between a client's frames, sorted.
    gaps: Vec<f64>,
    /// The server threads' CPU, in cores.
    cpu: f64,
    /// The simulation threads' CPU, in cores, when there is one.
    sim_cpu: Option<f64>,
}

/// Connects `a.clients` clients to `url` (`a.stalled` of them never read), measures
/// for `a.seconds` after a warm-up, and the CPU of the threads named `server*`.
fn measure(
    a: &Args,
    url: &str,
    sub: &str,
    published: &Arc<Mutex<HashMap<u64, Instant>>>,
    server: &str,
    sim: Option<&str>,
) -> Measured {
    let stalled: Vec<_> = (0..a.stalled)
        .map(|_| {
            let (mut ws, _) = tungstenite::connect(url).unwrap();
            ws.send(tungstenite::Message::Text(sub.to_string().into()))
                .unwrap();
            ws // never read
        })
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let warmup = Duration::from_secs(2);
    let readers: Vec<_> = (0..a.clients - a.stalled)
        .map(|k| {
            let (url, sub, stop, published) = (
                url.to_string(),
                sub.to_string(),
                stop.clone(),
                published.clone(),
            );
            std::thread::Builder::new()
                .name(format!("client-{k}"))
                .spawn(move || {
                    let (mut ws, _) = tungstenite::connect(&url).unwrap();
                    if let tungstenite::stream::MaybeTlsStream::Plain(s) = ws.get_mut() {
                        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                    }
                    ws.send(tungstenite::Message::Text(sub.into())).unwrap();
                    let t0 = Instant::now();
                    let (mut lags, mut gaps, mut frames) = (Vec::new(), Vec::new(), 0u64);
                    let mut last = None::<Instant>;
                    while !stop.load(Ordering::Relaxed) {
                        let Ok(msg) = ws.read() else { break };
                        let tungstenite::Message::Binary(b) = msg else {
                            continue;
                        };
                        let now = Instant::now();
                        let frame = u64::from_le_bytes(b[8..16].try_into().unwrap());
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
                    // A closing handshake, so that the server counts no broken
                    // connection.
                    let _ = ws.close(None);
                    let _ = ws.flush();
                    (frames, lags, gaps)
                })
                .unwrap()
        })
        .collect();
    std::thread::sleep(warmup);
    let cpu0 = (thread_cpu(server), sim.map(thread_cpu), Instant::now());
    std::thread::sleep(Duration::from_secs_f64(a.seconds));
    let wall = cpu0.2.elapsed().as_secs_f64();
    let cpu = (thread_cpu(server) - cpu0.0) / wall;
    let sim_cpu = sim.map(|p| (thread_cpu(p) - cpu0.1.unwrap_or(0.0)) / wall);
    stop.store(true, Ordering::Relaxed);
    let (mut lags, mut gaps, mut frames) = (Vec::new(), Vec::new(), Vec::new());
    for r in readers {
        let (f, l, g) = r.join().unwrap();
        frames.push(f as f64 / wall);
        lags.extend(l);
        gaps.extend(g);
    }
    drop(stalled);
    lags.sort_by(f64::total_cmp);
    gaps.sort_by(f64::total_cmp);
    frames.sort_by(f64::total_cmp);
    Measured {
        wall,
        frames,
        lags,
        gaps,
        cpu,
        sim_cpu,
    }
}

/// The raw peer: an axum websocket endpoint that sends every client the latest frame
/// (`bytes` long, the frame number at offset 8 as in glidepath's frames) `rate` times
/// a second, one frame queued per client, as the web does; nothing else.
struct RawBroadcaster {
    addr: std::net::SocketAddr,
    stop: Arc<AtomicBool>,
    publisher: Option<std::thread::JoinHandle<()>>,
    _runtime: tokio::runtime::Runtime,
}

impl RawBroadcaster {
    fn start(bytes: usize, rate: f64, published: Arc<Mutex<HashMap<u64, Instant>>>) -> Self {
        use axum::extract::ws::{Message, WebSocketUpgrade};
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("raw-ws")
            .enable_all()
            .build()
            .unwrap();
        let (tx, rx) = tokio::sync::watch::channel(bytes::Bytes::new());
        let app = axum::Router::new().route(
            "/raw",
            axum::routing::get(move |ws: WebSocketUpgrade| {
                let mut rx = rx.clone();
                async move {
                    ws.on_upgrade(move |mut socket| async move {
                        while rx.changed().await.is_ok() {
                            let frame = rx.borrow_and_update().clone();
                            if socket.send(Message::Binary(frame)).await.is_err() {
                                break;
                            }
                        }
                    })
                }
            }),
        );
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        runtime.spawn(async move { axum::serve(listener, app).await });
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let publisher = std::thread::Builder::new()
            .name("raw-pub".into())
            .spawn(move || {
                let period = Duration::from_secs_f64(1.0 / rate);
                let mut next = Instant::now();
                let mut body = vec![0u8; bytes];
                for frame in 1u64.. {
                    if stopping.load(Ordering::Relaxed) {
                        break;
                    }
                    body[8..16].copy_from_slice(&frame.to_le_bytes());
                    published.lock().insert(frame, Instant::now());
                    tx.send_replace(bytes::Bytes::copy_from_slice(&body));
                    next += period;
                    std::thread::sleep(next.saturating_duration_since(Instant::now()));
                }
            })
            .unwrap();
        RawBroadcaster {
            addr,
            stop,
            publisher: Some(publisher),
            _runtime: runtime,
        }
    }
}

impl Drop for RawBroadcaster {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(p) = self.publisher.take() {
            let _ = p.join();
        }
    }
}
