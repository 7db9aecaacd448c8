//! The ATM layer's pages in a real browser (Debian's headless chromium through
//! chromedriver): the layout editor builds a layout by dragging blocks and a link,
//! shows the loader's own error for a bad property and refuses to save it, saves the
//! fixed layout, and `glidepath run` accepts what it saved; an existing layout opens
//! with its blocks and links; the run monitoring portal shows a run progressing
//! through its states, then its outcome and report. Screenshots go to
//! `target/web-screenshots/` (editor.png, editor-error.png, portal-running.png,
//! portal-done.png).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use fantoccini::actions::{InputSource, MouseActions, PointerAction, MOUSE_BUTTON_LEFT};
use fantoccini::elements::Element;
use fantoccini::{Client, Locator};
use serde_json::{json, Value};

mod browser;
use browser::{chromedriver, click, shoot, text, until, wait_text, Killed, Session};

const OPERATOR: &str = "operator-token-atm";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("glidepath-web-atm-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Starts `glidepath ARGS` and returns it with the first URL it prints after `marker`.
fn serve(args: &[&str], marker: &str) -> (Killed, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_glidepath"))
        .args(args)
        .args([
            "--web",
            "127.0.0.1:0",
            "--web-tokens",
            &format!("operator={OPERATOR}"),
        ])
        .env("GLIDEPATH_TRANSPORT", "inproc")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let url = loop {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("glidepath {args:?} ended before printing {marker}"))
            .unwrap();
        if let Some(at) = line.find(marker) {
            break line[at + marker.len()..].trim().to_string();
        }
    };
    std::thread::spawn(move || lines.for_each(drop));
    (Killed(child), url)
}

/// Presses on `from` (offset from its centre), moves in steps, releases over `to`.
async fn drag(c: &Client, from: &Element, to: &Element, to_offset: (f64, f64)) {
    let actions = MouseActions::new("mouse".into())
        .then(PointerAction::MoveToElement {
            element: from.clone(),
            duration: None,
            x: 0.0,
            y: 0.0,
        })
        .then(PointerAction::Down {
            button: MOUSE_BUTTON_LEFT,
        })
        .then(PointerAction::MoveBy {
            duration: Some(Duration::from_millis(100)),
            x: 12.0,
            y: 6.0,
        })
        .then(PointerAction::MoveToElement {
            element: to.clone(),
            duration: Some(Duration::from_millis(300)),
            x: to_offset.0,
            y: to_offset.1,
        })
        .then(PointerAction::Up {
            button: MOUSE_BUTTON_LEFT,
        });
    c.perform_actions(actions).await.unwrap();
}

async fn count(c: &Client, css: &str) -> u64 {
    c.execute(
        &format!("return document.querySelectorAll({}).length", json!(css)),
        vec![],
    )
    .await
    .unwrap()
    .as_u64()
    .unwrap()
}

async fn class_of(c: &Client, id: &str) -> String {
    c.execute(
        &format!("return document.getElementById('{id}').className"),
        vec![],
    )
    .await
    .unwrap()
    .as_str()
    .unwrap_or_default()
    .to_string()
}

/// Types `value` into the selected block's property input `name`.
async fn set_property(c: &Client, name: &str, value: &str) {
    let input = c
        .find(Locator::Css(&format!("#props [name=\"{name}\"]")))
        .await
        .unwrap_or_else(|e| panic!("no property input {name}: {e}"));
    input.clear().await.unwrap();
    input.send_keys(value).await.unwrap();
}

async fn edit_a_new_layout(c: &Client, url: &str, path: &Path) {
    c.goto(url).await.unwrap();
    wait_text(c, 20, "the editor checks the empty layout", "errors", |t| {
        !t.is_empty()
    })
    .await;
    // Two blocks dragged from the palette onto the canvas.
    let canvas = c.find(Locator::Id("canvas")).await.unwrap();
    let traffic = c
        .find(Locator::Css(".palette-item[data-kind=traffic]"))
        .await
        .unwrap();
    drag(c, &traffic, &canvas, (-250.0, -200.0)).await;
    let monitor = c
        .find(Locator::Css(".palette-item[data-kind=monitor]"))
        .await
        .unwrap();
    drag(c, &monitor, &canvas, (100.0, -200.0)).await;
    assert_eq!(count(c, "#canvas .block").await, 2, "two blocks placed");
    // A monitor with no link is refused by the loader: its message is shown.
    wait_text(
        c,
        10,
        "the loader says the monitor is unfed",
        "errors",
        |t| t.contains("no incoming link"),
    )
    .await;
    // The link: from the traffic block's output port onto the monitor.
    let port = c
        .find(Locator::Css(".block[data-name=\"traffic 1\"] .port.out"))
        .await
        .unwrap();
    let target = c
        .find(Locator::Css(".block[data-name=\"monitor 1\"]"))
        .await
        .unwrap();
    drag(c, &port, &target, (0.0, 0.0)).await;
    assert_eq!(
        count(
            c,
            "path.link[data-from=\"traffic 1\"][data-to=\"monitor 1\"]"
        )
        .await,
        1,
        "the link is drawn"
    );
    wait_text(c, 10, "the layout checks valid", "errors", |t| {
        t.contains("valid: 2 blocks, 1 link")
    })
    .await;

    // A bad property: the loader's message, the block marked, nothing saved.
    click(
        c,
        Locator::Css(".block[data-name=\"traffic 1\"] .block-name"),
    )
    .await;
    set_property(c, "scheduled_period", "-1 s").await;
    wait_text(c, 10, "the loader's error for the period", "errors", |t| {
        t.contains("block \"traffic 1\"") && t.contains("`scheduled_period`")
    })
    .await;
    assert!(class_of(c, "errors").await.contains("bad"));
    assert_eq!(count(c, ".block.invalid[data-name=\"traffic 1\"]").await, 1);
    click(c, Locator::Id("save")).await;
    wait_text(c, 10, "saving is refused", "status", |t| {
        t.contains("scheduled_period")
    })
    .await;
    assert!(class_of(c, "status").await.contains("bad"));
    assert!(!path.exists(), "an invalid layout is not written");
    shoot(c, "editor-error.png").await;

    // Fixed, then saved.
    set_property(c, "scheduled_period", "1 s").await;
    wait_text(c, 10, "valid again", "errors", |t| {
        t.contains("valid: 2 blocks, 1 link")
    })
    .await;
    click(c, Locator::Id("save")).await;
    wait_text(c, 10, "saved", "status", |t| t.contains("saved to")).await;
    assert!(path.exists());
    shoot(c, "editor.png").await;

    // A sector on the monitor, checked by the loader like any property.
    click(
        c,
        Locator::Css(".block[data-name=\"monitor 1\"] .block-name"),
    )
    .await;
    set_property(c, "sector.lat", "38.5, 37").await;
    set_property(c, "sector.lon", "-123, -121").await;
    wait_text(
        c,
        10,
        "the loader refuses the inverted latitudes",
        "errors",
        |t| t.contains("block \"monitor 1\"") && t.contains("`sector.lat`"),
    )
    .await;
    set_property(c, "sector.lat", "37, 38.5").await;
    wait_text(c, 10, "valid with a sector", "errors", |t| {
        t.contains("valid: 2 blocks, 1 link")
    })
    .await;
    let toml = text(c, "toml").await;
    assert!(
        toml.contains("sector = { lat = [ 37, 38.5 ], lon = [ -123, -121 ] }"),
        "{toml}"
    );
    click(c, Locator::Id("save")).await;
    wait_text(c, 10, "saved with the sector", "status", |t| {
        t.contains("saved to")
    })
    .await;
    shoot(c, "editor-sector.png").await;
}

async fn open_an_existing_layout(c: &Client, url: &str) {
    c.goto(url).await.unwrap();
    wait_text(c, 20, "the shipped layout checks valid", "errors", |t| {
        t.contains("valid: 3 blocks, 2 links")
    })
    .await;
    assert_eq!(count(c, "#canvas .block").await, 3);
    assert_eq!(count(c, "path.link").await, 2);
    let toml = text(c, "toml").await;
    assert!(toml.contains("name = \"Network Performance\""), "{toml}");
}

#[test]
fn the_layout_editor_saves_a_layout_that_glidepath_run_accepts() {
    let dir = temp_dir("editor");
    let path = dir.join("drawn.toml");
    let (_driver, port) = chromedriver();
    let (_editor, url) = serve(&["edit", path.to_str().unwrap()], "layout editor at ");
    let existing = dir.join("day.toml");
    std::fs::copy(repo().join("layouts/atm-testbed-day.toml"), &existing).unwrap();
    let (_second, existing_url) = serve(&["edit", existing.to_str().unwrap()], "layout editor at ");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let session = Session::start(port).await;
        let c = session.client.clone();
        // The page keeps the token it was opened with; the URL carries it here.
        edit_a_new_layout(&c, &format!("{url}?token={OPERATOR}"), &path).await;
        open_an_existing_layout(&c, &existing_url).await;
        session.close().await;
    });

    // What the editor saved is a layout glidepath runs.
    let saved = std::fs::read_to_string(&path).unwrap();
    assert!(saved.contains("position = ["), "{saved}");
    let out = Command::new(env!("CARGO_BIN_EXE_glidepath"))
        .args([
            "run",
            path.to_str().unwrap(),
            "--hours",
            "0.02",
            "--density",
            "0.02",
        ])
        .arg("--report")
        .arg(dir.join("report"))
        .env("GLIDEPATH_TRANSPORT", "inproc")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "glidepath run refused the saved layout:\n{saved}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The shipped day on the wall clock at 60 simulated seconds a second: a run long
/// enough (15 s for a quarter of an hour) to be seen going, even when the browser
/// takes seconds to start on a busy machine.
fn paced_layout(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(repo().join("layouts/atm-testbed-day.toml")).unwrap();
    let paced = text.replace("fast_time = true", "fast_time = false\nspeed = 60.0");
    let path = dir.join("paced.toml");
    std::fs::write(&path, paced).unwrap();
    path
}

async fn json_of(c: &Client, script: &str) -> Value {
    c.execute(script, vec![]).await.unwrap()
}

#[test]
fn the_portal_shows_a_run_progressing_then_its_report() {
    let dir = temp_dir("portal");
    let layout = paced_layout(&dir);
    let report = dir.join("report");
    let (_driver, port) = chromedriver();
    let (mut run, url) = serve(
        &[
            "run",
            layout.to_str().unwrap(),
            "--hours",
            "0.25",
            "--density",
            "0.1",
            "--report",
            report.to_str().unwrap(),
        ],
        "run monitoring portal at ",
    );
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let session = Session::start(port).await;
        let c = session.client.clone();
        c.goto(&url).await.unwrap();
        // Going: the execution state, simulated seconds passing, messages counted.
        let seen = std::cell::Cell::new(0u64);
        until(
            Duration::from_secs(30),
            "the portal shows the run executing",
            || async {
                let state = class_of(&c, "state-execution").await;
                let second: u64 = text(&c, "second").await.replace(',', "").parse().unwrap_or(0);
                seen.set(second);
                // The wall rate needs two views.
                let rate: u64 = text(&c, "rate").await.replace(',', "").parse().unwrap_or(0);
                (state == "current" && second > 30 && second < 870 && rate > 0)
                    .then_some(())
                    .ok_or(format!("execution {state:?}, second {second}, rate {rate}"))
            },
        )
        .await;
        assert_eq!(class_of(&c, "state-deployment").await, "done");
        shoot(&c, "portal-running.png").await;
        until(Duration::from_secs(10), "the simulated time moves on", || async {
            let second: u64 = text(&c, "second").await.replace(',', "").parse().unwrap_or(0);
            (second > seen.get()).then_some(()).ok_or(format!("{second}"))
        })
        .await;
        let received: u64 = text(&c, "received").await.replace(',', "").parse().unwrap();
        assert!(received > 0, "messages counted while running");

        // Ended: all seven done, nothing lost, the report's files and figures linked.
        until(Duration::from_secs(60), "the portal shows the outcome", || async {
            let files = count(&c, "#report-files a").await;
            let outcome = text(&c, "outcome").await;
            (files >= 3 && outcome.starts_with("completed"))
                .then_some(())
                .ok_or(format!("{outcome:?}, {files} files"))
        })
        .await;
        for state in [
            "deployment",
            "startup",
            "initialization",
            "execution",
            "shutdown",
            "archival",
            "retirement",
        ] {
            assert_eq!(class_of(&c, &format!("state-{state}")).await, "done", "{state}");
        }
        assert_eq!(text(&c, "lost").await, "0");
        assert_eq!(class_of(&c, "outcome").await, "ok");
        let chart_points = json_of(
            &c,
            "return document.querySelectorAll('#chart canvas').length",
        )
        .await;
        assert_eq!(chart_points, json!(1), "the chart is drawn");
        until(Duration::from_secs(10), "the figures load", || async {
            let loaded = json_of(
                &c,
                "return [...document.querySelectorAll('#figures img')].filter(i => i.complete && i.naturalWidth > 0).length",
            )
            .await;
            (loaded.as_u64().unwrap_or(0) >= 2)
                .then_some(())
                .ok_or(loaded.to_string())
        })
        .await;
        shoot(&c, "portal-done.png").await;
        session.close().await;
    });
    // The portal outlives the run until it is told to stop.
    assert!(
        run.0.try_wait().unwrap().is_none(),
        "the portal stays up after the run"
    );
    // SAFETY: kill(2) on our own child.
    unsafe {
        libc::kill(run.0.id() as i32, libc::SIGINT);
    }
    let status = run.0.wait().unwrap();
    assert!(status.success(), "glidepath run --web ended with {status}");
    assert!(report.join("report.json").exists());
    let _ = std::fs::remove_dir_all(&dir);
}
