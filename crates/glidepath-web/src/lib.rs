//! glidepath-web: the external server of the target generator (seed `004_...`,
//! section V.B–V.C). It serves the radar, pilot and control pages and a JSON API over
//! HTTP and a websocket, translates between browsers and the simulation, and checks
//! every external message against the published schema (`/api/schema`) and the
//! aircraft's envelope before anything is forwarded ([`validate`]).
//!
//! The simulation runs on its own thread and calls a [`hub::TgObserver`] after every
//! frame; the web runs on a small tokio runtime of its own. The two meet in a
//! [`hub::Hub`] through channels that never make the simulation wait.
//!
//! ```no_run
//! # fn demo(catalog: glidepath_web::hub::Catalog) -> Result<(), glidepath_web::WebError> {
//! let (controls, _runner_side) = crossbeam_channel::unbounded();
//! let config = glidepath_web::WebConfig::new("127.0.0.1:8080".parse().unwrap());
//! let (server, _observer) = glidepath_web::start(config, catalog, controls)?;
//! println!("radar at http://{}/", server.addr());
//! # Ok(()) }
//! ```
#![warn(missing_docs)]

pub mod api;
pub mod atm;
pub mod hub;
pub mod stream;
pub mod validate;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;

use glidepath_tg::runner::Control;
use rand::Rng;

pub use hub::{Catalog, Hub, TgObserver};

/// What a token lets its holder do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// Watch (no token needed).
    Viewer,
    /// Command aircraft.
    Pilot,
    /// Watch the traffic with its flight plans (clearances are a later addition).
    Controller,
    /// Command aircraft and control the simulation.
    Operator,
}

impl Role {
    /// Its name in tokens and replies.
    pub fn name(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Pilot => "pilot",
            Role::Controller => "controller",
            Role::Operator => "operator",
        }
    }

    /// The role a name gives.
    pub fn parse(name: &str) -> Option<Role> {
        [Role::Viewer, Role::Pilot, Role::Controller, Role::Operator]
            .into_iter()
            .find(|r| r.name() == name)
    }
}

/// Why the web server could not start.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// A token setting that is not `ROLE=TOKEN,...`.
    #[error("web tokens: {0}")]
    Tokens(String),
    /// The address could not be bound.
    #[error("web: cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The runtime could not be made.
    #[error("web: {0}")]
    Runtime(std::io::Error),
}

/// How to serve.
#[derive(Clone, Debug)]
pub struct WebConfig {
    /// Where to listen (port 0: any free port).
    pub addr: SocketAddr,
    /// Token → role. Empty: [`start`] makes one random token per role.
    pub tokens: HashMap<String, Role>,
    /// At most this many snapshots a second are taken from the simulation.
    pub max_rate_hz: f64,
    /// The scenarios the operator may load (name, description), the run's caller
    /// starting each one it is asked for ([`glidepath_tg::runner::RunEnd::Load`]);
    /// empty: the scenario cannot change.
    pub scenarios: Vec<(String, String)>,
}

impl WebConfig {
    /// Serving at `addr` with generated tokens and snapshots up to 30 Hz.
    pub fn new(addr: SocketAddr) -> WebConfig {
        WebConfig {
            addr,
            tokens: HashMap::new(),
            max_rate_hz: 30.0,
            scenarios: Vec::new(),
        }
    }

    /// Adds tokens from `ROLE=TOKEN[,ROLE=TOKEN...]`.
    pub fn add_tokens(&mut self, spec: &str) -> Result<(), WebError> {
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (role, token) = part
                .split_once('=')
                .ok_or_else(|| WebError::Tokens(format!("`{part}` is not ROLE=TOKEN")))?;
            let role = Role::parse(role.trim()).ok_or_else(|| {
                WebError::Tokens(format!(
                    "`{role}` is not a role (viewer, pilot, controller, operator)"
                ))
            })?;
            let token = token.trim();
            if token.len() < 8
                || !token
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            {
                return Err(WebError::Tokens(format!(
                    "the {} token must be at least 8 characters of letters, digits, - or _",
                    role.name()
                )));
            }
            self.tokens.insert(token.to_string(), role);
        }
        Ok(())
    }
}

/// A router served on a tokio runtime of its own; dropping it stops both.
pub(crate) struct Served {
    pub(crate) addr: SocketAddr,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Served {
    /// Binds `addr` and serves `app` on `threads` tokio threads named `name`.
    pub(crate) fn start(
        addr: SocketAddr,
        threads: usize,
        name: &str,
        app: axum::Router,
    ) -> Result<Served, WebError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .thread_name(name)
            .enable_all()
            .build()
            .map_err(WebError::Runtime)?;
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind(addr))
            .map_err(|source| WebError::Bind { addr, source })?;
        let addr = listener.local_addr().map_err(WebError::Runtime)?;
        let (shutdown, stopped) = tokio::sync::oneshot::channel::<()>();
        let name = name.to_string();
        runtime.spawn(async move {
            let served = axum::serve(listener, app).with_graceful_shutdown(async {
                let _ = stopped.await;
            });
            if let Err(e) = served.await {
                tracing::error!("{name}: {e}");
            }
        });
        Ok(Served {
            addr,
            shutdown: Some(shutdown),
            runtime: Some(runtime),
        })
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_timeout(std::time::Duration::from_secs(2));
        }
    }
}

/// A running web server. Dropping it stops it.
pub struct WebServer {
    served: Served,
    hub: Arc<Hub>,
    tokens: HashMap<String, Role>,
}

impl WebServer {
    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.served.addr
    }

    /// The hub (counters, latest snapshot).
    pub fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }

    /// The token of each role, for telling the user.
    pub fn tokens(&self) -> Vec<(Role, &str)> {
        let mut v: Vec<(Role, &str)> = self.tokens.iter().map(|(t, r)| (*r, t.as_str())).collect();
        v.sort_by_key(|(r, _)| *r as u8);
        v
    }
}

pub(crate) fn random_token() -> String {
    let mut rng = rand::thread_rng();
    (0..20)
        .map(|_| char::from(b"abcdefghijkmnpqrstuvwxyz23456789"[rng.gen_range(0..32)]))
        .collect()
}

/// Starts serving `catalog`'s run; controls from the web go to `controls`. Give the
/// returned observer to the run (`glidepath_tg::runner::run`).
pub fn start(
    mut config: WebConfig,
    catalog: Catalog,
    controls: crossbeam_channel::Sender<Control>,
) -> Result<(WebServer, TgObserver), WebError> {
    if config.tokens.is_empty() {
        for r in [Role::Pilot, Role::Controller, Role::Operator] {
            config.tokens.insert(random_token(), r);
        }
    }
    let (hub, incoming) = Hub::new(catalog, config.scenarios.clone(), controls);
    let state = api::AppState {
        hub: hub.clone(),
        tokens: Arc::new(config.tokens.clone()),
    };
    let served = Served::start(config.addr, 2, "glidepath-web", api::router(state))?;
    let observer = TgObserver::new(hub.clone(), incoming, config.max_rate_hz);
    Ok((
        WebServer {
            served,
            hub,
            tokens: config.tokens,
        },
        observer,
    ))
}
