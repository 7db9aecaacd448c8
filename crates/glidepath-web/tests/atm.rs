//! The ATM web's API (`glidepath_web::atm`): the layout editor's check and save,
//! each hostile request refused with the loader's own message and counted, nothing
//! written that was not valid; the portal's view of a real run and its report.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use glidepath_atm::layout::load_layout;
use glidepath_atm::run::{run, Live, RunOptions};
use glidepath_web::atm::{start_atm, AtmWebConfig, AtmWebServer, MAX_LAYOUT_BYTES};
use glidepath_web::Role;
use serde_json::Value;

const OPERATOR: &str = "operator-token-1";
const PILOT: &str = "pilot-token-1";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn temp_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("glidepath-atm-web-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn serve(layout: Option<&Path>, save: bool, live: Option<Arc<Live>>) -> AtmWebServer {
    let mut config = AtmWebConfig::new("127.0.0.1:0".parse().unwrap());
    config.tokens.insert(OPERATOR.into(), Role::Operator);
    config.tokens.insert(PILOT.into(), Role::Pilot);
    config.layout = layout.map(Path::to_path_buf);
    config.save = save;
    config.live = live;
    start_atm(config).unwrap()
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(20)))
        .build()
        .into()
}

fn post(server: &AtmWebServer, path: &str, token: Option<&str>, body: &[u8]) -> (u16, Value) {
    let mut req = agent()
        .post(format!("http://{}{path}", server.addr()))
        .header("content-type", "application/toml");
    if let Some(t) = token {
        req = req.header("authorization", format!("Bearer {t}"));
    }
    let mut resp = req.send(body).expect("an HTTP answer");
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().expect("a body");
    let json = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    (status, json)
}

fn get(server: &AtmWebServer, path: &str) -> (u16, String) {
    let mut resp = agent()
        .get(format!("http://{}{path}", server.addr()))
        .call()
        .expect("an HTTP answer");
    let status = resp.status().as_u16();
    (status, resp.body_mut().read_to_string().unwrap_or_default())
}

fn get_json(server: &AtmWebServer, path: &str) -> (u16, Value) {
    let (status, text) = get(server, path);
    let json = serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
    (status, json)
}

fn shipped() -> String {
    std::fs::read_to_string(repo().join("layouts/atm-testbed-day.toml")).unwrap()
}

#[test]
fn the_editor_checks_with_the_loaders_rules_and_saves_only_what_is_valid() {
    let dir = temp_dir("editor");
    let path = dir.join("new.toml");
    let server = serve(Some(&path), true, None);

    // A new layout: no text yet, a name from the file.
    let (status, opened) = get_json(&server, "/api/layout");
    assert_eq!(status, 200);
    assert_eq!(opened["toml"], Value::Null);
    assert_eq!(opened["name"], "new");
    assert_eq!(opened["save"], true);

    // Valid: the counts.
    let (status, ok) = post(&server, "/api/layout/check", None, shipped().as_bytes());
    assert_eq!(status, 200);
    assert_eq!(
        (ok["ok"].clone(), ok["blocks"].clone(), ok["links"].clone()),
        (true.into(), 3.into(), 2.into())
    );

    // Hostile layouts: each answered with the loader's message, naming the line,
    // block and property, and counted.
    let good = shipped();
    let cases: Vec<(String, Option<&str>, Option<&str>, &str)> = vec![
        (
            good.replacen("kind = \"monitor\"", "kind = \"monitr\"", 1),
            Some("Network Performance"),
            Some("kind"),
            "unknown block kind",
        ),
        (
            good.replacen(
                "scheduled_period = \"1 s\"",
                "scheduled_period = \"-1 s\"",
                1,
            ),
            Some("ATAC Data:1"),
            Some("scheduled_period"),
            "scheduled_period",
        ),
        (
            good.replacen(
                "host = \"localhost\"",
                "host = \"localhost\"\nposition = [1]",
                1,
            ),
            Some("ATAC Data:1"),
            Some("position"),
            "two finite numbers",
        ),
        (
            good.replacen("[[link]]", "[[link]]\nfrom = \"nobody\"", 1),
            None,
            None,
            "duplicate key",
        ),
        (
            "name = \"x\"\n[[block]\n".to_string(),
            None,
            None,
            "new.toml:2:",
        ),
    ];
    for (text, block, property, says) in &cases {
        let (status, bad) = post(&server, "/api/layout/check", None, text.as_bytes());
        assert_eq!(status, 200, "{bad}");
        assert_eq!(bad["ok"], false, "{bad}");
        let e = &bad["error"];
        let message = e["message"].as_str().unwrap();
        assert!(message.starts_with("new.toml:"), "{message}");
        assert!(message.contains(says), "{message} does not say {says}");
        assert!(e["line"].as_u64().is_some_and(|l| l >= 1), "{e}");
        if let Some(b) = block {
            assert_eq!(e["block"], *b, "{e}");
        }
        if let Some(p) = property {
            assert_eq!(e["property"], *p, "{e}");
        }
    }
    // Not UTF-8, and too large.
    let (status, bad) = post(&server, "/api/layout/check", None, b"name = \"\xff\"");
    assert_eq!(status, 400);
    assert!(
        bad["error"]["message"].as_str().unwrap().contains("UTF-8"),
        "{bad}"
    );
    let huge = vec![b'#'; MAX_LAYOUT_BYTES + 10];
    let (status, bad) = post(&server, "/api/layout/check", None, &huge);
    assert_eq!(status, 413);
    assert!(
        bad["error"]["message"].as_str().unwrap().contains("over"),
        "{bad}"
    );

    // Saving needs the operator: no token, a pilot's, an unknown one.
    for (token, want) in [
        (None, 403),
        (Some(PILOT), 403),
        (Some("not-a-token-at-all"), 401),
    ] {
        let (status, refused) = post(&server, "/api/layout/save", token, good.as_bytes());
        assert_eq!(status, want, "{token:?}: {refused}");
        assert!(refused["error"].as_str().is_some(), "{refused}");
        assert!(
            !path.exists(),
            "nothing written without the operator's token"
        );
    }
    // An invalid layout is not written.
    let (status, bad) = post(
        &server,
        "/api/layout/save",
        Some(OPERATOR),
        cases[0].0.as_bytes(),
    );
    assert_eq!(status, 400);
    assert_eq!(bad["error"]["property"], "kind");
    assert!(!path.exists());
    // A valid one is, whole, and loads.
    let (status, saved) = post(&server, "/api/layout/save", Some(OPERATOR), good.as_bytes());
    assert_eq!(status, 200, "{saved}");
    assert_eq!(saved["path"], path.display().to_string());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), good);
    assert_eq!(load_layout(&path).unwrap().blocks.len(), 3);
    // A later invalid save leaves the saved file as it was.
    let (status, _) = post(&server, "/api/layout/save", Some(OPERATOR), b"name = ");
    assert_eq!(status, 400);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), good);
    let (_, reopened) = get_json(&server, "/api/layout");
    assert_eq!(reopened["toml"], good);

    let (_, stats) = get_json(&server, "/api/stats");
    assert_eq!(stats["checks"], 1 + cases.len() as u64 + 2, "{stats}");
    assert_eq!(
        stats["invalid_layouts"],
        cases.len() as u64 + 2 + 2,
        "{stats}"
    );
    assert_eq!(stats["saves"], 1, "{stats}");
    assert_eq!(stats["refused"], 3, "{stats}");
    drop(server);

    // A server showing a run does not save over its layout.
    let server = serve(Some(&path), false, None);
    let (status, refused) = post(&server, "/api/layout/save", Some(OPERATOR), good.as_bytes());
    assert_eq!(status, 409, "{refused}");
    let (status, _) = get_json(&server, "/api/run");
    assert_eq!(status, 404, "no run to show");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_portal_shows_a_real_run_and_then_its_report() {
    let layout = load_layout(&repo().join("layouts/atm-testbed-day.toml")).unwrap();
    let live = Arc::new(Live::new());
    let server = serve(None, false, Some(live.clone()));
    let (status, before) = get_json(&server, "/api/run");
    assert_eq!(status, 200);
    assert_eq!(before["outcome"], Value::Null);

    let options = RunOptions {
        hours: Some(0.1),
        density: Some(0.02),
        run_name: "portal".into(),
        live: Some(live.clone()),
        ..Default::default()
    };
    let report = run(&layout, &options).unwrap();
    let (_, after) = get_json(&server, "/api/run");
    assert_eq!(after["layout"], "atm-testbed-day");
    assert_eq!(after["run"], "portal");
    assert_eq!(after["states"].as_array().unwrap().len(), 7);
    assert_eq!(after["received"], report.received);
    assert_eq!(after["per_second"].as_array().unwrap().len(), 360);
    assert_eq!(after["outcome"]["ok"], true);
    assert_eq!(after["outcome"]["lost"], 0);
    assert_eq!(
        after["blocks"]["Network Performance"]["received"],
        report.received
    );
    let (_, tail) = get_json(&server, "/api/run?from=300");
    assert_eq!(tail["per_second_from"], 300);
    assert_eq!(tail["per_second"].as_array().unwrap().len(), 60);
    let (status, bad) = get_json(&server, "/api/run?from=-1");
    assert_eq!(status, 400);
    assert!(bad["error"].as_str().unwrap().contains("from"));

    // The report, once written, is listed and served; nothing else is.
    let (_, none) = get_json(&server, "/api/report");
    assert_eq!(none["written"], false);
    let dir = temp_dir("report");
    report.write(&dir).unwrap();
    live.report_written(&dir.display().to_string());
    let (_, listed) = get_json(&server, "/api/report");
    let files: Vec<&str> = listed["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(files.contains(&"report.json"), "{files:?}");
    assert!(files.iter().any(|f| f.ends_with(".png")), "{files:?}");
    let (status, json) = get(&server, "/report/report.json");
    assert_eq!(status, 200);
    assert!(json.contains("\"published\""));
    for hostile in [
        "/report/..%2FCargo.toml",
        "/report/nothing.png",
        "/report/%2Fetc%2Fpasswd",
    ] {
        let (status, _) = get(&server, hostile);
        assert_eq!(status, 404, "{hostile}");
    }
    let (_, stats) = get_json(&server, "/api/stats");
    assert_eq!(stats["refused"], 4, "{stats}");
    let _ = std::fs::remove_dir_all(&dir);
}
