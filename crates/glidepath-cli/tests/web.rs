//! `glidepath tg --web` in a real browser: Debian's headless chromium driven through
//! chromedriver (WebDriver). The radar loads with nothing from outside this machine
//! and shows the scenario's aircraft; a pilot's heading command turns an aircraft on
//! the page; an invalid command shows its error; the operator pauses and resumes,
//! then loads another scenario, whose aircraft the radar then shows.
//! Each page's screenshot is written under `target/web-screenshots/`.
//!
//! Needs `chromium` and `chromedriver` (`scripts/test.sh` installs them; the
//! `GLIDEPATH_CHROMIUM` and `GLIDEPATH_CHROMEDRIVER` variables override the paths).

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, Command, Stdio};
use std::time::Duration;

use fantoccini::Locator;
use serde_json::{json, Value};

mod browser;
use browser::{chromedriver, click, shoot, text, until, wait_text, Killed, Session};

const PILOT: &str = "pilot-token-browser";
const OPERATOR: &str = "operator-token-browser";
const CONTROLLER: &str = "controller-token-browser";

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

fn heading_error(a: f64, b: f64) -> f64 {
    let d = (a - b).rem_euclid(360.0);
    d.min(360.0 - d)
}

async fn browse(driver_port: u16, addr: &str) {
    let session = Session::start(driver_port).await;
    let c = session.client.clone();

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
    // Scenario selection: another built-in scenario, flown from its start.
    c.find(Locator::Css("#ctl-scenario option[value=\"us-400\"]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    click(&c, Locator::Css("#control button[data-action=scenario]")).await;
    until(
        Duration::from_secs(60),
        "the radar shows us-400's 400 aircraft",
        || async {
            let (name, n) = (text(&c, "scenario").await, text(&c, "aircraft-count").await);
            (name == "us-400" && n == "400")
                .then_some(())
                .ok_or(format!("{name}: {n} aircraft"))
        },
    )
    .await;
    shoot(&c, "control-scenario.png").await;
    let stats: Value = c
        .execute("return window.glidepathStats", vec![])
        .await
        .unwrap();
    eprintln!("page drawing: {stats}");
    session.close().await;
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
