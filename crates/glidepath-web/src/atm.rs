//! The ATM layer's web (memorandum `000_...` section 2: layouts are made in a web
//! drag-and-drop editor, simulations are monitored through a web portal):
//!
//! - the **run monitoring portal** (`/portal`) of `glidepath run LAYOUT --web ADDR`:
//!   the state of the seven, each block's count, messages per simulated second as
//!   Figure 4.1(b) draws them, latency percentiles and loss, read from the run's
//!   [`Live`] view (`GET /api/run`), and the report's tables and figures once written
//!   (`GET /api/report`, `/report/FILE`);
//! - the **layout editor** (`/editor`) of `glidepath edit LAYOUT --web ADDR`: blocks
//!   placed and linked by dragging, checked on every change by the TOML loader itself
//!   (`POST /api/layout/check`, so the rules and messages are exactly the loader's),
//!   and saved as the TOML `glidepath run` reads (`POST /api/layout/save`, the
//!   operator's token; the text is checked again and written whole or not at all).
//!
//! Every request body is bounded and checked; a bad one gets a JSON error saying what
//! and where, is counted (`GET /api/stats`), and changes nothing.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use axum::body::{to_bytes, Body};
use axum::extract::{Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use glidepath_atm::layout::{parse_layout, LayoutError};
use glidepath_atm::run::Live;
use serde_json::{json, Value};

use crate::api::{asset, require, role_of};
use crate::{random_token, Role, Served, WebError};

/// The largest layout a request may carry.
pub const MAX_LAYOUT_BYTES: usize = 1 << 20;

/// What the ATM web serves.
#[derive(Clone, Debug)]
pub struct AtmWebConfig {
    /// Where to listen (port 0: any free port).
    pub addr: SocketAddr,
    /// Token → role; saving a layout needs the operator. Empty: [`start_atm`] makes
    /// an operator token.
    pub tokens: HashMap<String, Role>,
    /// The run the portal shows (`glidepath run --web`).
    pub live: Option<Arc<Live>>,
    /// The layout the editor opens (it may not exist yet: a new layout).
    pub layout: Option<PathBuf>,
    /// Whether the editor may save over [`AtmWebConfig::layout`] (`glidepath edit`;
    /// a running layout is not overwritten: its editor offers a download instead).
    pub save: bool,
}

impl AtmWebConfig {
    /// Serving at `addr`, nothing to show yet.
    pub fn new(addr: SocketAddr) -> AtmWebConfig {
        AtmWebConfig {
            addr,
            tokens: HashMap::new(),
            live: None,
            layout: None,
            save: false,
        }
    }
}

/// What the ATM web counted (`GET /api/stats`).
#[derive(Default)]
struct Counters {
    checks: AtomicU64,
    invalid_layouts: AtomicU64,
    saves: AtomicU64,
    refused: AtomicU64,
}

#[derive(Clone)]
struct AtmState {
    tokens: Arc<HashMap<String, Role>>,
    live: Option<Arc<Live>>,
    layout: Option<PathBuf>,
    save: bool,
    counters: Arc<Counters>,
}

/// A running ATM web server. Dropping it stops it.
pub struct AtmWebServer {
    served: Served,
    tokens: HashMap<String, Role>,
}

impl AtmWebServer {
    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.served.addr
    }

    /// The operator's token (for the editor's Save), when there is one.
    pub fn operator_token(&self) -> Option<&str> {
        self.tokens
            .iter()
            .find(|(_, r)| **r == Role::Operator)
            .map(|(t, _)| t.as_str())
    }
}

/// Starts the portal and the editor.
pub fn start_atm(mut config: AtmWebConfig) -> Result<AtmWebServer, WebError> {
    if config.tokens.is_empty() {
        config.tokens.insert(random_token(), Role::Operator);
    }
    let state = AtmState {
        tokens: Arc::new(config.tokens.clone()),
        live: config.live,
        layout: config.layout,
        save: config.save,
        counters: Arc::default(),
    };
    let app = Router::new()
        .route("/", get(home))
        .route("/portal", get(|| async { asset("/portal.html") }))
        .route("/editor", get(|| async { asset("/editor.html") }))
        .route("/api/run", get(run_view))
        .route("/api/report", get(report_files))
        .route("/report/{file}", get(report_file))
        .route("/api/layout", get(layout))
        .route("/api/layout/check", post(check))
        .route("/api/layout/save", post(save))
        .route("/api/stats", get(stats))
        .fallback(get(|uri: axum::http::Uri| async move { asset(uri.path()) }))
        .with_state(state);
    let served = Served::start(config.addr, 1, "glidepath-atm-web", app)?;
    Ok(AtmWebServer {
        served,
        tokens: config.tokens,
    })
}

async fn home(State(s): State<AtmState>) -> Redirect {
    Redirect::to(if s.live.is_some() {
        "/portal"
    } else {
        "/editor"
    })
}

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({ "error": message.into() }))).into_response()
}

async fn run_view(State(s): State<AtmState>, Query(q): Query<HashMap<String, String>>) -> Response {
    let Some(live) = &s.live else {
        return error(
            StatusCode::NOT_FOUND,
            "no run: this server was started without one (glidepath run LAYOUT --web ADDR shows one)",
        );
    };
    let from = match q.get("from").map(|f| f.parse::<usize>()) {
        None => 0,
        Some(Ok(f)) => f,
        Some(Err(_)) => {
            s.counters.refused.fetch_add(1, Ordering::Relaxed);
            return error(
                StatusCode::BAD_REQUEST,
                "query `from`: expected a simulated second, a whole number >= 0",
            );
        }
    };
    // A view is of its moment: never from a cache.
    (
        [(header::CACHE_CONTROL, "no-store")],
        Json(live.snapshot(from)),
    )
        .into_response()
}

/// The report's directory, once the run wrote it.
fn report_dir(s: &AtmState) -> Option<PathBuf> {
    s.live.as_ref()?.report_dir().map(PathBuf::from)
}

/// The report's files: plain files of its directory, by name.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

async fn report_files(State(s): State<AtmState>) -> Response {
    match report_dir(&s) {
        None => Json(json!({ "written": false, "files": [] })).into_response(),
        Some(dir) => Json(json!({
            "written": true,
            "dir": dir.display().to_string(),
            "files": listing(&dir),
        }))
        .into_response(),
    }
}

async fn report_file(
    State(s): State<AtmState>,
    axum::extract::Path(file): axum::extract::Path<String>,
) -> Response {
    let Some(dir) = report_dir(&s) else {
        return error(StatusCode::NOT_FOUND, "no report has been written yet");
    };
    // Only a name the listing gives: nothing outside the report's directory.
    if !listing(&dir).contains(&file) {
        s.counters.refused.fetch_add(1, Ordering::Relaxed);
        return error(
            StatusCode::NOT_FOUND,
            format!("`{file}` is not a file of the report"),
        );
    }
    let mime = match Path::new(&file).extension().and_then(|e| e.to_str()) {
        Some("png") => "image/png",
        Some("json") => "application/json",
        Some("md") | Some("txt") => "text/plain; charset=utf-8",
        Some("csv") => "text/csv; charset=utf-8",
        Some("html") => "text/html; charset=utf-8",
        _ => "application/octet-stream",
    };
    match tokio::fs::read(dir.join(&file)).await {
        Ok(bytes) => ([(header::CONTENT_TYPE, mime)], bytes).into_response(),
        Err(e) => error(StatusCode::INTERNAL_SERVER_ERROR, format!("{file}: {e}")),
    }
}

/// The name errors give the layout: its file's name, else `layout`.
fn origin(s: &AtmState) -> String {
    s.layout
        .as_ref()
        .and_then(|p| p.file_name())
        .map_or("layout".into(), |n| n.to_string_lossy().into_owned())
}

async fn layout(State(s): State<AtmState>) -> Response {
    let Some(path) = &s.layout else {
        return Json(json!({ "path": null, "toml": null, "name": "layout", "save": false }))
            .into_response();
    };
    let text = match tokio::fs::read_to_string(path).await {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("{}: {e}", path.display()),
            )
        }
    };
    let name = path
        .file_stem()
        .map_or("layout".into(), |n| n.to_string_lossy().into_owned());
    Json(json!({
        "path": path.display().to_string(),
        "toml": text,
        "name": name,
        "save": s.save,
    }))
    .into_response()
}

fn layout_error(e: &LayoutError) -> Value {
    json!({
        "message": e.to_string(),
        "line": e.line(),
        "block": e.block(),
        "property": e.property(),
    })
}

/// The body as layout text, or the JSON error saying why not.
async fn layout_text(s: &AtmState, body: Body) -> Result<String, Response> {
    let refuse = |status: StatusCode, message: String| {
        s.counters.invalid_layouts.fetch_add(1, Ordering::Relaxed);
        (
            status,
            Json(json!({
                "ok": false,
                "error": { "message": message, "line": null, "block": null, "property": null },
            })),
        )
            .into_response()
    };
    let bytes = to_bytes(body, MAX_LAYOUT_BYTES + 1).await.map_err(|_| {
        refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the layout is over {MAX_LAYOUT_BYTES} bytes"),
        )
    })?;
    String::from_utf8(bytes.to_vec()).map_err(|e| {
        refuse(
            StatusCode::BAD_REQUEST,
            format!(
                "the layout is not UTF-8 text (byte {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

async fn check(State(s): State<AtmState>, body: Body) -> Response {
    s.counters.checks.fetch_add(1, Ordering::Relaxed);
    let text = match layout_text(&s, body).await {
        Ok(t) => t,
        Err(r) => return r,
    };
    match parse_layout(&text, &origin(&s)) {
        Ok(l) => Json(json!({ "ok": true, "blocks": l.blocks.len(), "links": l.links.len() }))
            .into_response(),
        Err(e) => {
            s.counters.invalid_layouts.fetch_add(1, Ordering::Relaxed);
            Json(json!({ "ok": false, "error": layout_error(&e) })).into_response()
        }
    }
}

async fn save(
    State(s): State<AtmState>,
    headers: HeaderMap,
    Query(q): Query<HashMap<String, String>>,
    body: Body,
) -> Response {
    let allowed = role_of(&s.tokens, &headers, &q)
        .and_then(|role| require(role, &[Role::Operator], "saving a layout"));
    if let Err(r) = allowed {
        s.counters.refused.fetch_add(1, Ordering::Relaxed);
        let status = StatusCode::from_u16(r.status).unwrap_or(StatusCode::FORBIDDEN);
        return error(status, r.reason);
    }
    let (Some(path), true) = (&s.layout, s.save) else {
        s.counters.refused.fetch_add(1, Ordering::Relaxed);
        return error(
            StatusCode::CONFLICT,
            "this server does not save layouts (it shows a run; use Download, or glidepath edit LAYOUT --web ADDR)",
        );
    };
    let text = match layout_text(&s, body).await {
        Ok(t) => t,
        Err(r) => return r,
    };
    let layout = match parse_layout(&text, &origin(&s)) {
        Ok(l) => l,
        Err(e) => {
            s.counters.invalid_layouts.fetch_add(1, Ordering::Relaxed);
            return (
                StatusCode::BAD_REQUEST,
                Json(json!({ "ok": false, "error": layout_error(&e) })),
            )
                .into_response();
        }
    };
    // Whole or not at all: a temporary file beside it, then a rename.
    let tmp = path.with_extension("toml.saving");
    let written = async {
        tokio::fs::write(&tmp, text.as_bytes()).await?;
        tokio::fs::rename(&tmp, path).await
    }
    .await;
    if let Err(e) = written {
        let _ = tokio::fs::remove_file(&tmp).await;
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("{}: {e}", path.display()),
        );
    }
    s.counters.saves.fetch_add(1, Ordering::Relaxed);
    Json(json!({
        "ok": true,
        "path": path.display().to_string(),
        "blocks": layout.blocks.len(),
        "links": layout.links.len(),
    }))
    .into_response()
}

async fn stats(State(s): State<AtmState>) -> Response {
    let c = &s.counters;
    Json(json!({
        "checks": c.checks.load(Ordering::Relaxed),
        "invalid_layouts": c.invalid_layouts.load(Ordering::Relaxed),
        "saves": c.saves.load(Ordering::Relaxed),
        "refused": c.refused.load(Ordering::Relaxed),
    }))
    .into_response()
}
