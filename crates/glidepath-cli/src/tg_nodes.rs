//! Processing nodes as processes of this program over NATS (`glidepath tg --transport
//! nats`, `glidepath bench tg --transport nats`), and DASE's "two hosts" on one machine
//! (`glidepath bench tg --hosts 2`): two network namespaces joined by a veth pair
//! (`glidepath_netlab::lab::Lab`), the NATS server, the executive and the simulation
//! server on the first, the nodes on the second and the first in turn, so that even a
//! one-node run sends every state across the link.

use std::path::Path;
use std::process::{Child, Command as Process};

use anyhow::Context;
use glidepath::RtiConfig;
use glidepath_netlab::lab::{Host, Lab};
use glidepath_tg::bench;
use glidepath_tg::server::SimulationServer;

/// Node processes, killed if the server ends early.
pub(crate) struct Children(pub(crate) Vec<Child>);

/// How to start processing nodes as processes of this program over NATS.
pub(crate) struct NodeProcess<'a> {
    pub(crate) config: &'a RtiConfig,
    pub(crate) federation: &'a str,
    pub(crate) threads: usize,
    pub(crate) model: &'a str,
    pub(crate) stand_in_us: f64,
    pub(crate) performance: Option<&'a std::path::Path>,
    /// The network namespaces the nodes run in, in turn (empty: this host's).
    pub(crate) hosts: &'a [String],
}

impl NodeProcess<'_> {
    /// Starts nodes `tg-node-1` to `tg-node-N`, saying each one's pid when `say`.
    pub(crate) fn start_all(&self, nodes: usize, say: bool) -> anyhow::Result<Children> {
        let mut children = Children(Vec::new());
        let program = std::env::current_exe().context("finding this program to start the nodes")?;
        for k in 0..nodes {
            let mut cmd = match self.hosts.get(k % self.hosts.len().max(1)) {
                None => Process::new(&program),
                Some(namespace) => {
                    let mut cmd = Process::new("ip");
                    cmd.args(["netns", "exec", namespace]).arg(&program);
                    cmd
                }
            };
            cmd.args(["tg", "--role", "node", "--transport", "nats"]);
            // The URL and any credentials through the environment, never the command line.
            self.config.configure_child(&mut cmd);
            cmd.env(glidepath::NATS_URL_ENV, &self.config.nats_url);
            cmd.args([
                "--federation",
                self.federation,
                "--name",
                &format!("tg-node-{}", k + 1),
            ]);
            cmd.args([
                "--threads",
                &self.threads.to_string(),
                "--model",
                self.model,
                "--stand-in-us",
                &self.stand_in_us.to_string(),
            ]);
            if let Some(p) = self.performance {
                cmd.arg("--performance").arg(p);
            }
            if !say {
                // A benchmark's table is not interleaved with the nodes' farewells; a
                // node that fails shows in its exit status.
                cmd.stderr(std::process::Stdio::null());
            }
            let child = cmd
                .stdin(std::process::Stdio::null())
                .spawn()
                .context("starting a node process")?;
            if say {
                println!("node tg-node-{} pid {}", k + 1, child.id());
            }
            children.0.push(child);
        }
        Ok(children)
    }
}

/// One run of `glidepath bench tg --transport nats`: node processes and the server.
pub(crate) struct ProcessRun {
    pub(crate) server: Option<SimulationServer>,
    pub(crate) children: Children,
    pub(crate) rti: glidepath::Rti,
    pub(crate) federation: String,
}

impl bench::BenchRun for ProcessRun {
    fn server(&mut self) -> &mut SimulationServer {
        self.server.as_mut().expect("a running server")
    }

    fn finish(mut self: Box<Self>) -> Result<(), glidepath_tg::federation::TgError> {
        if let Some(server) = self.server.take() {
            server.stop()?;
        }
        for (k, child) in self.children.0.iter_mut().enumerate() {
            let status = child.wait().map_err(|e| node_failed(k, e))?;
            if !status.success() {
                return Err(node_failed(k, format!("ended with {status}")));
            }
        }
        self.children.0.clear();
        self.rti.destroy_federation_execution(&self.federation)?;
        Ok(())
    }
}

pub(crate) fn node_failed(
    k: usize,
    reason: impl std::fmt::Display,
) -> glidepath_tg::federation::TgError {
    glidepath_tg::federation::TgError::NodeFailed {
        node: format!("tg-node-{}", k + 1),
        reason: reason.to_string(),
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// The port of the NATS server on the first host.
const HOSTS_NATS_PORT: u16 = 4222;

/// Two hosts on this machine, with a NATS server on the first. Dropping it stops the
/// server and removes the namespaces.
pub(crate) struct TwoHosts {
    lab: Lab,
    /// The NATS server's JetStream directory (the executive keeps saves there).
    store: std::path::PathBuf,
}

impl Drop for TwoHosts {
    fn drop(&mut self) {
        self.lab.teardown();
        let _ = std::fs::remove_dir_all(&self.store);
    }
}

impl TwoHosts {
    /// Creates the namespaces and starts `nats_server` on the first host. Call from the
    /// main thread (the server ends when the thread that started it does).
    pub(crate) fn start(nats_server: &Path) -> anyhow::Result<TwoHosts> {
        glidepath_netlab::lab::check_privileges()
            .context("--hosts 2 builds two network namespaces")?;
        let mut lab = Lab::create()?;
        let store = std::env::temp_dir().join(format!("glidepath-hosts-{}", std::process::id()));
        let mut nats = lab.command(Host::Server, nats_server);
        nats.args([
            "-a",
            &Lab::address(Host::Server).to_string(),
            "-p",
            &HOSTS_NATS_PORT.to_string(),
            "--jetstream",
            "--store_dir",
        ])
        .arg(&store)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
        lab.start(nats)?;
        // Built first, so that its Drop removes everything if the server never listens.
        let hosts = TwoHosts { lab, store };
        glidepath_netlab::experiment::wait_for_port(
            hosts.lab.namespace(Host::Server),
            std::net::SocketAddr::from((Lab::address(Host::Server), HOSTS_NATS_PORT)),
        )
        .context("waiting for nats-server on the first host")?;
        Ok(hosts)
    }

    /// The NATS server's URL, from either host.
    pub(crate) fn nats_url(&self) -> String {
        format!("nats://{}:{HOSTS_NATS_PORT}", Lab::address(Host::Server))
    }

    /// The namespaces nodes run in, in turn: the second host first.
    pub(crate) fn node_hosts(&self) -> Vec<String> {
        [Host::Remote, Host::Server]
            .map(|h| self.lab.namespace(h).to_string())
            .to_vec()
    }

    /// Runs `f` on a thread inside the first host; threads it starts (the NATS
    /// client's runtime among them) are inside too.
    pub(crate) fn inside<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
    ) -> anyhow::Result<T> {
        glidepath_netlab::experiment::in_namespace(self.lab.namespace(Host::Server), move || {
            f().map_err(|e| std::io::Error::other(format!("{e:#}")))
        })
    }
}
