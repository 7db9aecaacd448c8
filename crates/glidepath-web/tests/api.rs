//! The JSON API against a running target generator: every validation rule meets a
//! hostile message and answers with the rule, the field and the reason; nothing
//! rejected reaches the simulation; each rejection is counted; a valid command is
//! acknowledged by the frame that took it.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::{get_json, post, start, CONTROLLER, OPERATOR, PILOT};
use serde_json::{json, Value};

struct Case {
    name: &'static str,
    path: &'static str,
    token: Option<&'static str>,
    body: Vec<u8>,
    status: u16,
    error: &'static str,
    field: &'static str,
}

fn case(
    name: &'static str,
    path: &'static str,
    token: Option<&'static str>,
    body: impl Into<Vec<u8>>,
    status: u16,
    error: &'static str,
    field: &'static str,
) -> Case {
    Case {
        name,
        path,
        token,
        body: body.into(),
        status,
        error,
        field,
    }
}

fn hostile_cases() -> Vec<Case> {
    let cmd = "/api/command";
    let ctl = "/api/control";
    let p = Some(PILOT);
    let o = Some(OPERATOR);
    let big = format!(
        r#"{{"callsign":"UAL101","instruction":"heading","value":90,"pad":"{}"}}"#,
        "x".repeat(5000)
    );
    vec![
        case("oversized body", cmd, p, big, 413, "too_large", ""),
        case(
            "truncated JSON",
            cmd,
            p,
            r#"{"callsign":"UAL101","#,
            400,
            "malformed_json",
            "",
        ),
        case("empty body", cmd, p, "", 400, "malformed_json", ""),
        case(
            "not UTF-8",
            cmd,
            p,
            vec![b'{', 0xff, 0xfe, b'}'],
            400,
            "malformed_json",
            "",
        ),
        case(
            "an array, not an object",
            cmd,
            p,
            r#"[1,2,3]"#,
            400,
            "schema",
            "",
        ),
        case(
            "unknown field",
            cmd,
            p,
            r#"{"callsign":"UAL101","instruction":"heading","value":90,"priority":"high"}"#,
            400,
            "schema",
            "/priority",
        ),
        case(
            "missing callsign",
            cmd,
            p,
            r#"{"instruction":"heading","value":90}"#,
            400,
            "schema",
            "/callsign",
        ),
        case(
            "missing value",
            cmd,
            p,
            r#"{"callsign":"UAL101","instruction":"heading"}"#,
            400,
            "schema",
            "/value",
        ),
        case(
            "heading as a string",
            cmd,
            p,
            r#"{"callsign":"UAL101","instruction":"heading","value":"ninety"}"#,
            400,
            "schema",
            "/value",
        ),
        case(
            "heading of 360",
            cmd,
            p,
            r#"{"callsign":"UAL101","instruction":"heading","value":360}"#,
            400,
            "schema",
            "/value",
        ),
        case(
            "negative heading",
            cmd,
            p,
            r#"{"callsign":"UAL101","instruction":"heading","value":-5}"#,
            400,
            "schema",
            "/value",
        ),
        case(
            "altitude beyond any aircraft",
            cmd,
            p,
            r#"{"callsign":"UAL101","instruction":"altitude","value":1e9}"#,
            400,
            "schema",
            "/value",
        ),
        case(
            "unknown instruction",
            cmd,
            p,
            r#"{"callsign":"UAL101","instruction":"eject"}"#,
            400,
            "schema",
            "/instruction",
        ),
        case(
            "resume with a value",
            cmd,
            p,
            r#"{"callsign":"UAL101","instruction":"resume","value":1}"#,
            400,
            "schema",
            "/value",
        ),
        case(
            "callsign with a path",
            cmd,
            p,
            r#"{"callsign":"../../etc","instruction":"resume"}"#,
            400,
            "schema",
            "/callsign",
        ),
        case(
            "callsign too long",
            cmd,
            p,
            format!(
                r#"{{"callsign":"{}","instruction":"resume"}}"#,
                "A".repeat(40)
            ),
            400,
            "schema",
            "/callsign",
        ),
        case(
            "direct to a number",
            cmd,
            p,
            r#"{"callsign":"UAL101","instruction":"direct","value":7}"#,
            400,
            "schema",
            "/value",
        ),
        case(
            "no token",
            cmd,
            None,
            r#"{"callsign":"UAL101","instruction":"heading","value":90}"#,
            403,
            "forbidden",
            "",
        ),
        case(
            "wrong token",
            cmd,
            Some("not-a-real-token"),
            r#"{"callsign":"UAL101","instruction":"heading","value":90}"#,
            401,
            "unauthorized",
            "",
        ),
        case(
            "a controller commanding",
            cmd,
            Some(CONTROLLER),
            r#"{"callsign":"UAL101","instruction":"heading","value":90}"#,
            403,
            "forbidden",
            "",
        ),
        case(
            "unknown aircraft",
            cmd,
            p,
            r#"{"callsign":"NOPE1","instruction":"heading","value":90}"#,
            400,
            "unknown_aircraft",
            "/callsign",
        ),
        case(
            "above the ceiling",
            cmd,
            p,
            r#"{"callsign":"UAL101","instruction":"altitude","value":55000}"#,
            400,
            "envelope",
            "/value",
        ),
        case(
            "eVTOL too fast",
            cmd,
            p,
            r#"{"callsign":"UAM1","instruction":"speed","value":400}"#,
            400,
            "envelope",
            "/value",
        ),
        case(
            "jet too slow",
            cmd,
            p,
            r#"{"callsign":"UAL101","instruction":"speed","value":20}"#,
            400,
            "envelope",
            "/value",
        ),
        case(
            "waypoint not in the plan",
            cmd,
            p,
            r#"{"callsign":"UAL101","instruction":"direct","value":"KJFK"}"#,
            400,
            "unknown_waypoint",
            "/value",
        ),
        case(
            "a pilot controlling",
            ctl,
            p,
            r#"{"action":"pause"}"#,
            403,
            "forbidden",
            "",
        ),
        case(
            "unknown action",
            ctl,
            o,
            r#"{"action":"rewind"}"#,
            400,
            "schema",
            "/action",
        ),
        case(
            "speed factor 0",
            ctl,
            o,
            r#"{"action":"speed","value":0}"#,
            400,
            "schema",
            "/value",
        ),
        case(
            "rate too high",
            ctl,
            o,
            r#"{"action":"rate","value":10000}"#,
            400,
            "schema",
            "/value",
        ),
        case(
            "pause with a value",
            ctl,
            o,
            r#"{"action":"pause","value":3}"#,
            400,
            "schema",
            "/value",
        ),
        case(
            "rate as text",
            ctl,
            o,
            r#"{"action":"rate","value":"fast"}"#,
            400,
            "schema",
            "/value",
        ),
        case(
            "a scenario as a number",
            ctl,
            o,
            r#"{"action":"scenario","value":3}"#,
            400,
            "schema",
            "/value",
        ),
        case(
            "a scenario there is not",
            ctl,
            o,
            r#"{"action":"scenario","value":"atlantis"}"#,
            400,
            "unknown_scenario",
            "/value",
        ),
    ]
}

#[test]
fn every_rule_answers_a_hostile_message_with_the_field_and_counts_it() {
    let run = start("demo", 30.0, 1.0);
    let before = get_json(&run, "/api/scenario");
    assert_eq!(before["aircraft"].as_array().unwrap().len(), 8);
    let mut expected: BTreeMap<String, u64> = BTreeMap::new();
    for c in hostile_cases() {
        let (status, reply) = post(&run, c.path, c.token, &c.body);
        assert_eq!(status, c.status, "{}: {reply}", c.name);
        assert_eq!(reply["error"], c.error, "{}: {reply}", c.name);
        assert_eq!(reply["field"], c.field, "{}: {reply}", c.name);
        let reason = reply["reason"].as_str().unwrap_or_default();
        assert!(reason.len() > 5, "{}: the reason says why: {reply}", c.name);
        *expected.entry(c.error.to_string()).or_default() += 1;
    }
    let stats = get_json(&run, "/api/stats");
    for (rule, n) in &expected {
        assert_eq!(stats["counters"][rule], json!(n), "{rule} counted: {stats}");
    }
    // A valid clearance goes to the pilot stations, not to the simulation.
    let (status, sent) = post(
        &run,
        "/api/clearance",
        Some(CONTROLLER),
        br#"{"callsign":"UAL101","instruction":"altitude","value":15000}"#,
    );
    assert_eq!(
        (status, &sent["outcome"], &sent["id"]),
        (200, &json!("sent"), &json!(1)),
        "{sent}"
    );
    // Nothing rejected reached the simulation: no acknowledgement at all so far,
    // and the first valid command gets the first id.
    let (status, ack) = post(
        &run,
        "/api/command",
        Some(PILOT),
        br#"{"callsign":"UAL101","instruction":"heading","value":90}"#,
    );
    assert_eq!(status, 200, "{ack}");
    assert_eq!(ack["outcome"], "applied");
    assert_eq!(ack["id"], 1, "no rejected message became a command: {ack}");
}

#[test]
fn a_command_the_node_refuses_answers_422_with_its_reason() {
    let run = start("demo", 30.0, 1.0);
    let catalog = get_json(&run, "/api/scenario");
    let aal = catalog["aircraft"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["callsign"] == "AAL505")
        .unwrap()
        .clone();
    // Within the speed envelope, but above Mmo at the aircraft's cruise altitude:
    // only the node, which knows the altitude, can tell.
    let vmo = aal["max_speed_kt"].as_f64().unwrap();
    let body = json!({"callsign": "AAL505", "instruction": "speed", "value": vmo});
    let (status, reply) = post(
        &run,
        "/api/command",
        Some(PILOT),
        body.to_string().as_bytes(),
    );
    assert_eq!(status, 422, "{reply}");
    assert_eq!(reply["error"], "refused");
    assert!(reply["reason"].as_str().unwrap().contains("Mmo"), "{reply}");
}

#[test]
fn the_operator_pauses_steps_and_resumes_the_run() {
    let run = start("demo", 30.0, 1.0);
    let frame = |run: &common::Run| get_json(run, "/api/status")["frame"].as_u64().unwrap();
    let ok = |body: &str| {
        let (status, reply) = post(&run, "/api/control", Some(OPERATOR), body.as_bytes());
        assert_eq!(status, 200, "{body}: {reply}");
    };
    common::wait_for(Duration::from_secs(10), || (frame(&run) > 0).then_some(()))
        .expect("a status within 10 s");
    ok(r#"{"action":"pause"}"#);
    let paused = common::wait_for(Duration::from_secs(5), || {
        let s = get_json(&run, "/api/status");
        (s["paused"] == true).then(|| s["frame"].as_u64().unwrap())
    })
    .expect("paused within 5 s");
    std::thread::sleep(Duration::from_millis(700));
    let still = get_json(&run, "/api/status");
    assert_eq!(
        still["frame"].as_u64().unwrap(),
        paused,
        "no frame while paused"
    );
    // A command while paused waits for a frame; a single step takes it.
    ok(r#"{"action":"step"}"#);
    common::wait_for(Duration::from_secs(5), || {
        (frame(&run) == paused + 1).then_some(())
    })
    .expect("exactly one frame for one step");
    ok(r#"{"action":"speed","value":2}"#);
    ok(r#"{"action":"resume"}"#);
    common::wait_for(Duration::from_secs(5), || {
        (frame(&run) > paused + 5).then_some(())
    })
    .expect("frames again after resume");
    let status: Value = get_json(&run, "/api/status");
    assert_eq!(status["paused"], false);
}

#[test]
fn after_the_simulation_ends_commands_and_controls_answer_503_ended() {
    let mut run = start("demo", 30.0, 1.0);
    let (status, reply) = post(
        &run,
        "/api/control",
        Some(OPERATOR),
        br#"{"action":"stop"}"#,
    );
    assert_eq!(status, 200, "{reply}");
    common::wait_for(Duration::from_secs(10), || {
        (get_json(&run, "/api/status")["ended"] == true).then_some(())
    })
    .expect("the status says ended within 10 s");
    run.wait_finished();
    let command = br#"{"callsign":"UAL101","instruction":"heading","value":90}"#;
    for (path, token, body) in [
        ("/api/command", PILOT, &command[..]),
        ("/api/control", OPERATOR, &br#"{"action":"pause"}"#[..]),
    ] {
        let (status, reply) = post(&run, path, Some(token), body);
        assert_eq!(status, 503, "{path}: {reply}");
        assert_eq!(reply["error"], "ended", "{path}: {reply}");
        assert!(
            reply["reason"].as_str().unwrap().contains("ended"),
            "{reply}"
        );
    }
    // Still checked first: an invalid command is a 400, not a 503.
    let (status, _) = post(
        &run,
        "/api/command",
        Some(PILOT),
        br#"{"callsign":"UAL101"}"#,
    );
    assert_eq!(status, 400);
    let stats = get_json(&run, "/api/stats");
    assert_eq!(stats["counters"]["ended"], 2, "{stats}");
}

#[test]
fn the_scenarios_are_listed_and_a_run_that_cannot_change_refuses_409() {
    let run = start("demo", 30.0, 1.0);
    let list = get_json(&run, "/api/scenarios");
    assert_eq!(list["current"], "demo");
    let names: Vec<&str> = list["available"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"us-400") && names.contains(&"demo"),
        "{names:?}"
    );
    drop(run);
    let fixed = common::start_with("demo", 30.0, 1.0, false);
    assert_eq!(get_json(&fixed, "/api/scenarios")["available"], json!([]));
    let (status, reply) = post(
        &fixed,
        "/api/control",
        Some(OPERATOR),
        br#"{"action":"scenario","value":"us-400"}"#,
    );
    assert_eq!(status, 409, "{reply}");
    assert_eq!(reply["error"], "cannot_load");
    assert_eq!(get_json(&fixed, "/api/stats")["counters"]["cannot_load"], 1);
}

#[test]
fn the_schema_is_published_and_names_every_message() {
    let run = start("demo", 10.0, 1.0);
    let schema = get_json(&run, "/api/schema");
    for def in ["command", "control", "subscribe"] {
        assert_eq!(schema["$defs"][def]["additionalProperties"], false, "{def}");
    }
    let who = common::agent()
        .get(run.url("/api/whoami"))
        .header("authorization", format!("Bearer {OPERATOR}"))
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    assert!(who.contains("operator"), "{who}");
}
