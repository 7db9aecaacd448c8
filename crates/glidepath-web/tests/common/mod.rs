//! A target generator on the embedded transport with the web in front of it, as
//! `glidepath tg --web` runs them, for the API and stream tests.

#![allow(dead_code)]

use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use glidepath::Rti;
use glidepath_tg::model::Model;
use glidepath_tg::perf::PerformanceTable;
use glidepath_tg::runner::{self, Control, RunOptions};
use glidepath_tg::scenario;
use glidepath_tg::server::{LocalLayout, LocalRun, ServerConfig};
use glidepath_web::{Catalog, WebConfig, WebServer};

pub const PILOT: &str = "pilot-token-1";
pub const CONTROLLER: &str = "controller-token-1";
pub const OPERATOR: &str = "operator-token-1";

/// A running target generator and its web server; dropping it stops both.
pub struct Run {
    pub web: WebServer,
    controls: crossbeam_channel::Sender<Control>,
    thread: Option<JoinHandle<()>>,
}

impl Run {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.web.addr())
    }

    pub fn ws_url(&self) -> String {
        format!("ws://{}/api/stream", self.web.addr())
    }
}

/// Starts `scenario` at `rate_hz` frames per second and `speed` × real time; the
/// operator is offered the built-in scenarios (a load ends this run).
pub fn start(scenario_name: &str, rate_hz: f64, speed: f64) -> Run {
    start_with(scenario_name, rate_hz, speed, true)
}

/// [`start`], offering the built-in scenarios or none.
pub fn start_with(scenario_name: &str, rate_hz: f64, speed: f64, offer_scenarios: bool) -> Run {
    static N: AtomicU32 = AtomicU32::new(0);
    let table = PerformanceTable::builtin();
    let scenario = scenario::load(scenario_name, table).expect("a built-in scenario");
    let catalog = Catalog::new(&scenario, table);
    let (controls, rx) = crossbeam_channel::unbounded();
    let mut config = WebConfig::new("127.0.0.1:0".parse().unwrap());
    config
        .add_tokens(&format!(
            "pilot={PILOT},controller={CONTROLLER},operator={OPERATOR}"
        ))
        .unwrap();
    if offer_scenarios {
        config.scenarios = scenario::builtin_names()
            .into_iter()
            .map(|(n, d)| (n.to_string(), d))
            .collect();
    }
    let (web, mut observer) = glidepath_web::start(config, catalog, controls.clone()).unwrap();
    let federation = format!(
        "web-test-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    let thread = std::thread::spawn(move || {
        let rti = Rti::inproc();
        let layout = LocalLayout::new(1, 2, Model::PointMass);
        let mut tg = LocalRun::start(&rti, &federation, scenario, &layout, ServerConfig::new(1))
            .expect("the target generator starts");
        let options = RunOptions {
            rate_hz,
            speed,
            seconds: Some(300.0),
            status_every: Duration::from_millis(500),
        };
        runner::run(&mut tg.server, &rx, options, &mut observer).expect("the run");
        observer.finish();
        tg.finish().expect("the nodes finish");
    });
    Run {
        web,
        controls,
        thread: Some(thread),
    }
}

impl Run {
    /// Waits for the run's thread to end (after a `stop`), as a finished
    /// `glidepath tg --web` whose web outlives its simulation.
    pub fn wait_finished(&mut self) {
        if let Some(t) = self.thread.take() {
            t.join().expect("the run ended cleanly");
        }
    }
}

impl Drop for Run {
    fn drop(&mut self) {
        let _ = self.controls.send(Control::Stop);
        if let Some(t) = self.thread.take() {
            let joined = t.join();
            if !std::thread::panicking() {
                joined.expect("the run ended cleanly");
            }
        }
    }
}

/// An HTTP client that hands back 4xx and 5xx answers instead of failing on them.
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(20)))
        .build()
        .into()
}

/// POSTs `body` with `token` (if any); the status and the reply's JSON.
pub fn post(run: &Run, path: &str, token: Option<&str>, body: &[u8]) -> (u16, serde_json::Value) {
    let mut req = agent()
        .post(run.url(path))
        .header("content-type", "application/json");
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    let mut resp = req.send(body).expect("an HTTP answer");
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().expect("a body");
    let json = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    (status, json)
}

pub fn get_json(run: &Run, path: &str) -> serde_json::Value {
    let mut resp = agent().get(run.url(path)).call().expect("an HTTP answer");
    assert_eq!(resp.status().as_u16(), 200, "GET {path}");
    serde_json::from_str(&resp.body_mut().read_to_string().unwrap()).unwrap()
}

/// Waits up to `limit` for `f` to give `Some`.
pub fn wait_for<T>(limit: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let start = std::time::Instant::now();
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if start.elapsed() > limit {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
