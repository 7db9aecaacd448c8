//! The HTTP routes: the pages, the JSON API and the websocket upgrade. Roles come
//! from a bearer token (`Authorization: Bearer T`, or `?token=T`); without one a
//! client is a viewer.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{to_bytes, Body};
use axum::extract::{Query, State, WebSocketUpgrade};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use glidepath_tg::command::Instruction;
use glidepath_tg::runner::Control;
use serde_json::{json, Value};

use crate::hub::Hub;
use crate::validate::{self, Message, Rejection, MAX_MESSAGE_BYTES};
use crate::Role;

mod assets {
    include!(concat!(env!("OUT_DIR"), "/assets.rs"));
}

/// How long `POST /api/command` waits for the frame that takes the command before
/// answering 202 (the acknowledgement then arrives on the stream only).
pub const ACK_WAIT: Duration = Duration::from_secs(5);

#[derive(Clone)]
pub(crate) struct AppState {
    pub hub: Arc<Hub>,
    pub tokens: Arc<HashMap<String, Role>>,
}

pub(crate) fn router(state: AppState) -> Router {
    Router::new()
        .route("/api/schema", get(schema))
        .route("/api/scenario", get(scenario))
        .route("/api/scenarios", get(scenarios))
        .route("/api/status", get(status))
        .route("/api/stats", get(stats))
        .route("/api/whoami", get(whoami))
        .route("/api/command", post(command))
        .route("/api/clearance", post(clearance))
        .route("/api/control", post(control))
        .route("/api/stream", get(stream))
        .fallback(get(page))
        .with_state(state)
}

fn reject(hub: &Hub, r: Rejection) -> Response {
    hub.counters.count(&r);
    let status = StatusCode::from_u16(r.status).unwrap_or(StatusCode::BAD_REQUEST);
    (status, Json(r)).into_response()
}

fn role(
    state: &AppState,
    headers: &HeaderMap,
    query: &HashMap<String, String>,
) -> Result<Role, Rejection> {
    role_of(&state.tokens, headers, query)
}

/// The role a request's token gives (a viewer without one).
pub(crate) fn role_of(
    tokens: &HashMap<String, Role>,
    headers: &HeaderMap,
    query: &HashMap<String, String>,
) -> Result<Role, Rejection> {
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .or(query.get("token").map(String::as_str));
    match token {
        None | Some("") => Ok(Role::Viewer),
        Some(t) => tokens.get(t).copied().ok_or(Rejection::whole(
            401,
            "unauthorized",
            "the token is not one this server was started with",
        )),
    }
}

pub(crate) fn require(role: Role, allowed: &[Role], what: &str) -> Result<(), Rejection> {
    if allowed.contains(&role) {
        return Ok(());
    }
    let names: Vec<&str> = allowed.iter().map(|r| r.name()).collect();
    Err(Rejection::whole(
        403,
        "forbidden",
        format!(
            "{what} needs the role {}; this token's role is {}",
            names.join(" or "),
            role.name()
        ),
    ))
}

async fn body_bytes(body: Body) -> Result<axum::body::Bytes, Rejection> {
    // Read one byte more than allowed, so that "too large" is told apart.
    to_bytes(body, MAX_MESSAGE_BYTES + 1).await.map_err(|_| {
        Rejection::whole(
            413,
            "too_large",
            format!("the message is over {MAX_MESSAGE_BYTES} bytes"),
        )
    })
}

async fn schema() -> Response {
    (
        [(header::CONTENT_TYPE, "application/schema+json")],
        validate::SCHEMA,
    )
        .into_response()
}

async fn scenario(State(s): State<AppState>) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        s.hub.loaded().json.clone(),
    )
        .into_response()
}

async fn scenarios(State(s): State<AppState>) -> Response {
    let available: Vec<Value> = s
        .hub
        .scenarios
        .iter()
        .map(|(name, description)| json!({ "name": name, "description": description }))
        .collect();
    Json(json!({
        "current": s.hub.loaded().catalog.scenario,
        "available": available,
    }))
    .into_response()
}

async fn status(State(s): State<AppState>) -> Response {
    Json(s.hub.status.borrow().clone()).into_response()
}

async fn stats(State(s): State<AppState>) -> Response {
    Json(json!({ "counters": s.hub.counters.snapshot(), "clients": s.hub.events.receiver_count() }))
        .into_response()
}

async fn whoami(
    State(s): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    match role(&s, &headers, &q) {
        Ok(r) => Json(json!({ "role": r.name() })).into_response(),
        Err(e) => reject(&s.hub, e),
    }
}

fn instruction(v: &Value) -> Instruction {
    let num = || v["value"].as_f64().unwrap_or_default();
    match v["instruction"].as_str().unwrap_or_default() {
        "heading" => Instruction::Heading { deg: num() },
        "altitude" => Instruction::Altitude { ft: num() },
        "speed" => Instruction::Speed { kt: num() },
        "direct" => Instruction::DirectTo {
            waypoint: v["value"].as_str().unwrap_or_default().to_string(),
        },
        _ => Instruction::Resume,
    }
}

/// A command or a clearance: the role, then the message's checks; its JSON, the
/// sender's role, the callsign and the instruction.
struct Checked {
    json: Value,
    role: Role,
    callsign: String,
    instruction: Instruction,
}

async fn check_instruction(
    s: &AppState,
    headers: &HeaderMap,
    q: &HashMap<String, String>,
    body: Body,
    message: Message,
    allowed: &[Role],
) -> Result<Checked, Rejection> {
    let role = role(s, headers, q)?;
    let what = match message {
        Message::Clearance => "a clearance",
        _ => "a command",
    };
    require(role, allowed, what)?;
    let json = validate::parse(message, &body_bytes(body).await?)?;
    let callsign = json["callsign"].as_str().unwrap_or_default().to_string();
    let instruction = instruction(&json);
    s.hub.check_command(&callsign, &instruction)?;
    Ok(Checked {
        json,
        role,
        callsign,
        instruction,
    })
}

async fn command(
    State(s): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
    body: Body,
) -> Response {
    let allowed = [Role::Pilot, Role::Operator];
    let checked = async {
        let c = check_instruction(&s, &headers, &q, body, Message::Command, &allowed).await?;
        s.hub.submit(c.callsign, c.instruction)
    };
    let ack = match checked.await {
        Ok(ack) => ack,
        Err(e) => return reject(&s.hub, e),
    };
    match tokio::time::timeout(ACK_WAIT, ack).await {
        Ok(Ok(view)) if view.outcome == "applied" => Json(view).into_response(),
        Ok(Ok(view)) => reject(
            &s.hub,
            Rejection::whole(422, "refused", view.reason.unwrap_or_default()),
        ),
        Ok(Err(_)) => reject(
            &s.hub,
            Rejection::whole(503, "ended", "the simulation ended before the command was taken"),
        ),
        Err(_) => (
            StatusCode::ACCEPTED,
            Json(json!({ "outcome": "queued", "reason": "no frame has run yet (paused?): the acknowledgement will come on the stream" })),
        )
            .into_response(),
    }
}

/// A controller's clearance: checked like a command, then shown to every client
/// (the pilot stations); the simulation flies it only when a pilot sends it.
async fn clearance(
    State(s): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
    body: Body,
) -> Response {
    let allowed = [Role::Controller, Role::Operator];
    match check_instruction(&s, &headers, &q, body, Message::Clearance, &allowed).await {
        Ok(Checked {
            json: mut v,
            role: r,
            ..
        }) => {
            let id = s.hub.next_clearance();
            v["id"] = id.into();
            v["from"] = r.name().into();
            s.hub.event("clearance", &v);
            Json(json!({ "outcome": "sent", "id": id })).into_response()
        }
        Err(e) => reject(&s.hub, e),
    }
}

async fn control(
    State(s): State<AppState>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
    body: Body,
) -> Response {
    let checked = async {
        let r = role(&s, &headers, &q)?;
        require(r, &[Role::Operator], "simulation control")?;
        let v = validate::parse(Message::Control, &body_bytes(body).await?)?;
        let value = v["value"].as_f64().unwrap_or_default();
        let c = match v["action"].as_str().unwrap_or_default() {
            "scenario" => {
                let name = v["value"].as_str().unwrap_or_default();
                s.hub.check_scenario(name)?;
                Control::Load(name.to_string())
            }
            "pause" => Control::Pause,
            "resume" => Control::Resume,
            "step" => Control::Step,
            "stop" => Control::Stop,
            "rate" => Control::Rate(value),
            _ => Control::Speed(value),
        };
        s.hub.control(c)
    };
    match checked.await {
        Ok(()) => Json(json!({ "outcome": "sent" })).into_response(),
        Err(e) => reject(&s.hub, e),
    }
}

async fn stream(State(s): State<AppState>, ws: WebSocketUpgrade) -> Response {
    // Larger messages break the connection; up to this size a message too large for
    // the schema gets an error reply.
    ws.max_message_size(64 * 1024)
        .on_upgrade(move |socket| crate::stream::serve(socket, s.hub.clone()))
}

async fn page(uri: axum::http::Uri) -> Response {
    let path = match uri.path() {
        "/" | "/pilot" | "/controller" | "/control" | "/radar" => "/index.html",
        p => p,
    };
    asset(path)
}

/// The embedded front-end's file at `path` (`/index.html`, `/app.js`, ...), or a page
/// saying how to build the front-end when this binary was built without it.
pub(crate) fn asset(path: &str) -> Response {
    match assets::ASSETS.iter().find(|(p, _, _)| *p == path) {
        Some((_, mime, bytes)) => ([(header::CONTENT_TYPE, *mime)], *bytes).into_response(),
        None if path.ends_with(".html") => (
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            "<!doctype html><title>glidepath</title><p>The web front-end was not built into this binary: run <code>bash scripts/build-web.sh</code> (needs node and npm), then rebuild. The API under <code>/api/</code> works without it.</p>",
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}
