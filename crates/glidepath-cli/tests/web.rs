//! `glidepath tg --web` in a real browser: Debian's headless chromium driven through
//! chromedriver (WebDriver). The radar loads with nothing from outside this machine
//! and shows the scenario's aircraft; a pilot's heading command turns an aircraft on
//! the page; an invalid command shows its error; the operator pauses and resumes.
//! Each page's screenshot is written under `target/web-screenshots/`.
//!
//! Needs `chromium` and `chromedriver` (`scripts/test.sh` installs them; the
//! `GLIDEPATH_CHROMIUM` and `GLIDEPATH_CHROMEDRIVER` variables override the paths).

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};

const PILOT: &str = "pilot-token-browser";
const OPERATOR: &str = "operator-token-browser";
const CONTROLLER: &str = "controller-token-browser";

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// chromedriver in a process group of its own: dropping it kills the group, so a
/// failed test leaves no chromium behind (killing chromedriver alone orphans them).
struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the group this test created; no memory is involved.
        unsafe {
            libc::kill(-(self.0.id() as i32), libc::SIGKILL);
        }
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn chromedriver() -> (Driver, u16) {
    let program = std::env::var("GLIDEPATH_CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into());
    let port = free_port();
    let child = Command::new(&program)
        .arg(format!("--port={port}"))
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot start {program} ({e}): install chromium and chromium-driver (scripts/test.sh does)")
        });
    let t0 = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "chromedriver did not listen on {port}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    (Driver(child), port)
}

/// `glidepath tg --scenario demo --web 127.0.0.1:0`: the child, its stdin (for
/// `stop`), and the address it serves.
fn target_generator() -> (Killed, ChildStdin, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_glidepath"))
        .args([
            "tg",
            "--scenario",
            "demo",
            "--web",
            "127.0.0.1:0",
            "--rate",
            "30",
            "--speed",
            "4",
        ])
        .args([
            "--web-tokens",
            &format!("pilot={PILOT},operator={OPERATOR},controller={CONTROLLER}"),
        ])
        .env("GLIDEPATH_TRANSPORT", "inproc")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let addr = loop {
        let line = lines.next().expect("tg printed its address").unwrap();
        if let Some(rest) = line.strip_prefix("web: radar at http://") {
            break rest.trim_end_matches('/').to_string();
        }
    };
    // Keep reading, so that the status lines never fill the pipe.
    std::thread::spawn(move || lines.for_each(drop));
    (Killed(child), stdin, addr)
}

fn screenshots() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/web-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

async fn text(c: &Client, id: &str) -> String {
    let v = c
        .execute(
            &format!("return document.getElementById('{id}').textContent"),
            vec![],
        )
        .await
        .unwrap();
    v.as_str().unwrap_or_default().to_string()
}

/// Polls `check` every 100 ms for up to `limit`; panics with `what` if it never holds.
async fn until<F, Fut>(limit: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    let t0 = Instant::now();
    loop {
        match check().await {
            Ok(()) => {
                eprintln!("{what}: {:.1} s", t0.elapsed().as_secs_f64());
                return;
            }
            Err(last) if t0.elapsed() > limit => {
                panic!("{what} within {limit:?}; last seen: {last}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

async fn click(c: &Client, what: Locator<'_>) {
    c.find(what).await.unwrap().click().await.unwrap();
}

/// Waits up to `limit` for element `id`'s text to pass `check`.
async fn wait_text(c: &Client, limit: u64, what: &str, id: &str, check: impl Fn(&str) -> bool) {
    until(Duration::from_secs(limit), what, || async {
        let t = text(c, id).await;
        if check(&t) {
            Ok(())
        } else {
            Err(t)
        }
    })
    .await;
}

async fn shoot(c: &Client, name: &str) {
    let png = c.screenshot().await.unwrap();
    assert!(png.len() > 10_000, "{name}: a real picture, not a blank");
    std::fs::write(screenshots().join(name), png).unwrap();
}

fn heading_error(a: f64, b: f64) -> f64 {
    let d = (a - b).rem_euclid(360.0);
    d.min(360.0 - d)
}

async fn browse(driver_port: u16, addr: &str) {
    let chromium =
        std::env::var("GLIDEPATH_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    let profile = std::env::temp_dir().join(format!("glidepath-chromium-{}", std::process::id()));
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": chromium,
            "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu",
                "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
                "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--window-size=1400,900",
                format!("--user-data-dir={}", profile.display()),
            ]
        }),
    );
    let c = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{driver_port}"))
        .await
        .expect("a chromium session");

    // The radar, as a viewer.
    c.goto(&format!("http://{addr}/")).await.unwrap();
    until(
        Duration::from_secs(30),
        "the radar shows the demo's 8 aircraft",
        || async {
            let (n, conn) = (text(&c, "aircraft-count").await, text(&c, "conn").await);
            (n == "8" && conn == "connected")
                .then_some(())
                .ok_or(format!("{n} aircraft, {conn}"))
        },
    )
    .await;
    wait_text(&c, 10, "all 8 in view", "visible-count", |n| n == "8").await;
    let outside: Value = c
        .execute(
            "return performance.getEntriesByType('resource').map(e => e.name)\
             .filter(n => !n.startsWith(location.origin) && !n.startsWith('data:'))",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(
        outside,
        json!([]),
        "the radar loads nothing from outside the server"
    );
    assert_eq!(text(&c, "role").await, "viewer");
    let pilot_hidden: Value = c
        .execute("return document.getElementById('pilot').hidden", vec![])
        .await
        .unwrap();
    assert_eq!(pilot_hidden, json!(true), "a viewer has no pilot station");
    tokio::time::sleep(Duration::from_millis(1500)).await; // trails and motion
    shoot(&c, "radar.png").await;

    // The pilot station: turn UAL101 by 60°.
    c.goto(&format!("http://{addr}/pilot?token={PILOT}"))
        .await
        .unwrap();
    until(
        Duration::from_secs(30),
        "the pilot page connects",
        || async {
            let (n, role) = (text(&c, "aircraft-count").await, text(&c, "role").await);
            (n == "8" && role == "pilot")
                .then_some(())
                .ok_or(format!("{n} aircraft, role {role}"))
        },
    )
    .await;
    c.execute(
        "const s = document.getElementById('cmd-callsign'); s.value = 'UAL101';\
         s.dispatchEvent(new Event('change'));",
        vec![],
    )
    .await
    .unwrap();
    until(
        Duration::from_secs(10),
        "UAL101's heading shows",
        || async {
            let h = text(&c, "sel-heading").await;
            h.parse::<f64>().map(drop).map_err(|_| h)
        },
    )
    .await;
    let before: f64 = text(&c, "sel-heading").await.parse().unwrap();
    let target = ((before + 60.0).round()).rem_euclid(360.0);
    c.execute(
        "document.getElementById('cmd-instruction').value = 'heading';\
         document.getElementById('cmd-value').value = arguments[0];",
        vec![json!(target.to_string())],
    )
    .await
    .unwrap();
    click(&c, Locator::Id("cmd-send")).await;
    wait_text(&c, 10, "the command is acknowledged", "cmd-result", |r| {
        r.starts_with("applied at frame")
    })
    .await;
    until(
        Duration::from_secs(30),
        "UAL101 turns to the commanded heading on the page",
        || async {
            let h = text(&c, "sel-heading").await;
            match h.parse::<f64>() {
                Ok(v) if heading_error(v, target) <= 3.0 => Ok(()),
                _ => Err(format!("heading {h}, commanded {target} (was {before})")),
            }
        },
    )
    .await;
    shoot(&c, "pilot.png").await;

    // An invalid command: the page shows the server's error with the field.
    c.execute(
        "document.getElementById('cmd-instruction').value = 'altitude';\
         document.getElementById('cmd-value').value = '99000';",
        vec![],
    )
    .await
    .unwrap();
    click(&c, Locator::Id("cmd-send")).await;
    wait_text(&c, 10, "the refusal shows", "cmd-result", |r| {
        r.contains("/value") && r.contains("400")
    })
    .await;
    let class: Value = c
        .execute(
            "return document.getElementById('cmd-result').className",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(class, json!("error"), "the refusal is shown as an error");
    shoot(&c, "pilot-error.png").await;

    // A controller's clearance reaches the pilot station, and the pilot flies it.
    c.execute(
        "fetch('/api/clearance', {method: 'POST', headers: {authorization: 'Bearer ' + arguments[0]},\
         body: JSON.stringify({callsign: 'UAL101', instruction: 'altitude', value: 15000})})",
        vec![json!(CONTROLLER)],
    )
    .await
    .unwrap();
    until(
        Duration::from_secs(10),
        "the pilot station shows the clearance",
        || async {
            let t = text(&c, "clearance-text").await;
            let events = text(&c, "event-list").await;
            (t == "Cleared: altitude 15000")
                .then_some(())
                .ok_or(format!("{t:?}; events: {events}"))
        },
    )
    .await;
    click(&c, Locator::Id("clearance-fly")).await;
    wait_text(&c, 10, "the clearance is flown", "cmd-result", |r| {
        r.starts_with("applied at frame")
    })
    .await;
    shoot(&c, "pilot-clearance.png").await;

    // The controller station: the flight list, and a clearance sent from it.
    c.goto(&format!("http://{addr}/controller?token={CONTROLLER}"))
        .await
        .unwrap();
    until(
        Duration::from_secs(30),
        "the flight list shows the 8 aircraft",
        || async {
            let n: Value = c
                .execute(
                    "return document.querySelectorAll('#flight-list tbody tr').length",
                    vec![],
                )
                .await
                .unwrap();
            (n == json!(8)).then_some(()).ok_or(n.to_string())
        },
    )
    .await;
    c.execute(
        "[...document.querySelectorAll('#flight-list tbody tr')]\
         .find(r => r.cells[0].textContent === 'DAL404').click();\
         document.getElementById('clr-instruction').value = 'speed';\
         document.getElementById('clr-value').value = '280';",
        vec![],
    )
    .await
    .unwrap();
    click(&c, Locator::Id("clr-send")).await;
    wait_text(&c, 10, "the clearance is sent", "clr-result", |r| {
        r.ends_with("sent")
    })
    .await;
    assert_eq!(text(&c, "clr-callsign").await, "DAL404");
    shoot(&c, "controller.png").await;

    // Simulation control: pause, then resume.
    c.goto(&format!("http://{addr}/control?token={OPERATOR}"))
        .await
        .unwrap();
    wait_text(&c, 30, "the control page connects", "role", |role| {
        role == "operator"
    })
    .await;
    click(&c, Locator::Css("#control button[data-action=pause]")).await;
    wait_text(&c, 10, "the run shows paused", "run-state", |s| {
        s == "paused"
    })
    .await;
    shoot(&c, "control.png").await;
    click(&c, Locator::Css("#control button[data-action=resume]")).await;
    wait_text(&c, 10, "the run shows running", "run-state", |s| {
        s == "running"
    })
    .await;
    let stats: Value = c
        .execute("return window.glidepathStats", vec![])
        .await
        .unwrap();
    eprintln!("page drawing: {stats}");
    c.close().await.unwrap();
    let _ = std::fs::remove_dir_all(profile);
}

#[test]
fn radar_pilot_and_control_pages_in_headless_chromium() {
    let (_driver, port) = chromedriver();
    let (mut tg, mut stdin, addr) = target_generator();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(browse(port, &addr));
    writeln!(stdin, "stop").unwrap();
    let status = tg.0.wait().unwrap();
    assert!(status.success(), "glidepath tg --web ended with {status}");
}
