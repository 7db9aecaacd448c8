//! The laboratory's hosts: two network namespaces joined by a veth pair, the kernel
//! shaper on that pair, the processes started inside, and their removal.
//!
//! Names carry the creating process's id (`gplab-<pid>-<n>-a`), so a later run can
//! tell a namespace whose creator died (SIGKILL, a crash) from one in use and remove
//! it ([`sweep_stale`], run by every [`Lab::create`]). Processes started in a lab get
//! a parent-death signal (SIGKILL), so they end with the process that started them,
//! whatever way it ends; `glidepath netlab` also tears its labs down on SIGINT,
//! SIGTERM and SIGHUP ([`teardown_on_signals`]).

use std::ffi::OsStr;
use std::fs::File;
use std::io;
use std::net::Ipv4Addr;
use std::os::unix::io::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{bail, Context};
use parking_lot::Mutex;

/// Every laboratory namespace's name starts with this.
pub const NAMESPACE_PREFIX: &str = "gplab-";

/// The first host's address on the link: it runs the `nats-server` (the report's
/// RTI host, where its CRC ran).
pub const SERVER_HOST_ADDR: Ipv4Addr = Ipv4Addr::new(10, 86, 0, 1);
/// The second host's address on the link.
pub const REMOTE_HOST_ADDR: Ipv4Addr = Ipv4Addr::new(10, 86, 0, 2);

/// Which of the two hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Host {
    /// The host of the `nats-server` (and the executive).
    Server,
    /// The host across the link.
    Remote,
}

/// Whether the two directions of the link have a budget each or share one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Duplex {
    /// Each direction has the whole bandwidth (the report's default, 100BASE-TX FD).
    Full,
    /// Both directions share the bandwidth (the report's Table 3, half duplex).
    Half,
}

/// The namespaces this process created and has not removed yet, for the signal
/// handler.
static LIVE: Mutex<Vec<String>> = Mutex::new(Vec::new());
static NEXT_LAB: AtomicU64 = AtomicU64::new(0);
/// The signal [`teardown_on_signals`] is handling (0: none).
static SIGNALLED: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// The signal being handled, if one arrived: the laboratory is being torn down and
/// the process will exit with 128 + it. A caller whose work failed meanwhile (its
/// processes were killed by the teardown) should wait for that exit instead of
/// reporting the failure ([`wait_if_signalled`]).
pub fn signalled() -> Option<i32> {
    match SIGNALLED.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// Parks the calling thread for good when a signal is being handled (the signal
/// thread exits the process once the teardown is done); returns at once otherwise.
pub fn wait_if_signalled() {
    if signalled().is_some() {
        loop {
            std::thread::park();
        }
    }
}

/// Two hosts and a link. Removed (processes killed, namespaces deleted) when dropped.
pub struct Lab {
    namespaces: [String; 2],
    children: Vec<Option<Child>>,
    kernel_shape: Option<(u64, Duplex)>,
}

impl Lab {
    /// Creates the two namespaces and the veth pair between them, addressed
    /// [`SERVER_HOST_ADDR`] and [`REMOTE_HOST_ADDR`] (/24), loopback up, no shaping.
    /// Removes stale namespaces of dead runs first.
    pub fn create() -> anyhow::Result<Lab> {
        check_privileges()?;
        for name in sweep_stale()? {
            tracing_note(&format!("removed a stale laboratory namespace: {name}"));
        }
        let n = NEXT_LAB.fetch_add(1, Ordering::Relaxed);
        let base = format!("{NAMESPACE_PREFIX}{}-{n}", std::process::id());
        let namespaces = [format!("{base}-a"), format!("{base}-b")];
        let mut lab = Lab {
            namespaces: namespaces.clone(),
            children: Vec::new(),
            kernel_shape: None,
        };
        for ns in &namespaces {
            ip(&["netns", "add", ns])?;
            LIVE.lock().push(ns.clone());
        }
        let [a, b] = &namespaces;
        ip(&[
            "-n", a, "link", "add", "eth0", "type", "veth", "peer", "name", "eth0", "netns", b,
        ])?;
        for (ns, addr) in [(a, SERVER_HOST_ADDR), (b, REMOTE_HOST_ADDR)] {
            ip(&[
                "-n",
                ns,
                "addr",
                "add",
                &format!("{addr}/24"),
                "dev",
                "eth0",
            ])?;
            ip(&["-n", ns, "link", "set", "eth0", "up"])?;
            ip(&["-n", ns, "link", "set", "lo", "up"])?;
        }
        lab.shape_kernel(None)?;
        Ok(lab)
    }

    /// The namespace of `host`.
    pub fn namespace(&self, host: Host) -> &str {
        match host {
            Host::Server => &self.namespaces[0],
            Host::Remote => &self.namespaces[1],
        }
    }

    /// The address of `host` on the link.
    pub fn address(host: Host) -> Ipv4Addr {
        match host {
            Host::Server => SERVER_HOST_ADDR,
            Host::Remote => REMOTE_HOST_ADDR,
        }
    }

    /// Shapes the veth pair with the kernel's token bucket filter: `Some((bit/s,
    /// duplex))` limits each direction (full duplex: a `tbf` on each end's egress;
    /// half duplex: both directions redirected through one `ifb` with one `tbf`),
    /// `None` removes all shaping.
    ///
    /// A token bucket lets a burst of up to its bucket size through at once, so it
    /// limits throughput but does not serialise a message that follows an idle
    /// moment: see [`crate::link`] for the shaper that does.
    pub fn shape_kernel(&mut self, shape: Option<(u64, Duplex)>) -> anyhow::Result<()> {
        let [a, b] = self.namespaces.clone();
        for ns in [&a, &b] {
            // Absent qdiscs are fine: this resets whatever a previous point set.
            let _ = tc_quiet(ns, &["qdisc", "del", "dev", "eth0", "root"]);
            let _ = tc_quiet(ns, &["qdisc", "del", "dev", "eth0", "ingress"]);
        }
        let _ = ip_quiet(&["-n", &a, "link", "del", "ifb0"]);
        self.kernel_shape = None;
        let Some((bits_per_s, duplex)) = shape else {
            return Ok(());
        };
        if bits_per_s == 0 {
            bail!("a link bandwidth must be above 0 bit/s");
        }
        let rate = format!("{bits_per_s}bit");
        // One full frame, or 1 ms at the rate, whichever is larger: the bucket must
        // hold a frame, and a larger one lets bigger bursts through unshaped.
        let burst = format!("{}", (bits_per_s / 8 / 1000).max(1600));
        let tbf = [
            "root", "tbf", "rate", &rate, "burst", &burst, "latency", "400ms",
        ];
        match duplex {
            Duplex::Full => {
                for ns in [&a, &b] {
                    let mut args = vec!["qdisc", "add", "dev", "eth0"];
                    args.extend_from_slice(&tbf);
                    tc(ns, &args)?;
                }
            }
            Duplex::Half => {
                ip(&["-n", &a, "link", "add", "ifb0", "type", "ifb"])?;
                ip(&["-n", &a, "link", "set", "ifb0", "up"])?;
                let mut args = vec!["qdisc", "add", "dev", "ifb0"];
                args.extend_from_slice(&tbf);
                tc(&a, &args)?;
                // Both directions of the server host's end through the one ifb.
                let redirect = [
                    "protocol", "all", "u32", "match", "u32", "0", "0", "action", "mirred",
                    "egress", "redirect", "dev", "ifb0",
                ];
                tc(&a, &["qdisc", "add", "dev", "eth0", "ingress"])?;
                let mut args = vec!["filter", "add", "dev", "eth0", "parent", "ffff:"];
                args.extend_from_slice(&redirect);
                tc(&a, &args)?;
                tc(
                    &a,
                    &["qdisc", "add", "dev", "eth0", "root", "handle", "1:", "htb"],
                )?;
                let mut args = vec!["filter", "add", "dev", "eth0", "parent", "1:"];
                args.extend_from_slice(&redirect);
                tc(&a, &args)?;
            }
        }
        self.kernel_shape = shape;
        Ok(())
    }

    /// The bandwidth the kernel shaper limits the link to, if it does.
    pub fn kernel_bandwidth(&self) -> Option<u64> {
        self.kernel_shape.map(|(bps, _)| bps)
    }

    /// Starts `program args…` inside `host`'s namespace (see [`Lab::command`]).
    pub fn spawn<I, S>(&mut self, host: Host, program: &Path, args: I) -> anyhow::Result<usize>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut command = self.command(host, program);
        command.args(args);
        self.start(command)
    }

    /// A command that runs `program` inside `host`'s namespace, stdout piped (read
    /// it with [`Child::stdout`]), stderr inherited, with a parent-death signal
    /// (SIGKILL) — sent when the *thread* that starts it ends, so start it from a
    /// thread that lives as long as the lab (the main thread). Add arguments,
    /// environment or redirections, then [`Lab::start`] it.
    pub fn command(&self, host: Host, program: &Path) -> Command {
        let mut command = Command::new("ip");
        command
            .args(["netns", "exec", self.namespace(host)])
            .arg(program)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            command.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(io::Error::last_os_error());
                }
                Ok(())
            });
        }
        command
    }

    /// Starts a [`Lab::command`]; the lab kills it when dropped. Returns its index
    /// for [`Lab::child`].
    pub fn start(&mut self, mut command: Command) -> anyhow::Result<usize> {
        let child = command
            .spawn()
            .with_context(|| format!("starting {command:?}"))?;
        self.children.push(Some(child));
        Ok(self.children.len() - 1)
    }

    /// The process [`Lab::spawn`] returned `index` for.
    ///
    /// # Panics
    /// When it was forgotten by [`Lab::forget_exited`].
    pub fn child(&mut self, index: usize) -> &mut Child {
        self.children[index]
            .as_mut()
            .expect("a laboratory process asked for after it was forgotten")
    }

    /// Forgets the processes that have exited (and reaps them); the others keep
    /// their indices.
    pub fn forget_exited(&mut self) {
        for slot in &mut self.children {
            if let Some(child) = slot {
                if matches!(child.try_wait(), Ok(Some(_))) {
                    *slot = None;
                }
            }
        }
    }

    /// Kills and reaps every process started in the lab so far, the last started
    /// first (clients before the servers they use).
    pub fn kill_all(&mut self) {
        for child in self.children.iter_mut().rev().flatten() {
            let _ = child.kill();
            let _ = child.wait();
        }
        self.children.clear();
    }

    /// Kills the processes and deletes the namespaces (which deletes the veth pair
    /// and the ifb with them).
    pub fn teardown(&mut self) {
        self.kill_all();
        for ns in &self.namespaces {
            remove_namespace(ns);
            LIVE.lock().retain(|n| n != ns);
        }
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        self.teardown();
    }
}

/// Fails with a message that says what is missing when this process cannot build a
/// laboratory (not root, no `ip` or `tc`).
pub fn check_privileges() -> anyhow::Result<()> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        bail!("the network laboratory needs root (network namespaces and tc need CAP_NET_ADMIN): run it with sudo");
    }
    for tool in ["ip", "tc"] {
        let found = Command::new(tool)
            .arg("-V")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok();
        if !found {
            bail!("the network laboratory needs `{tool}` (Debian: apt install iproute2)");
        }
    }
    Ok(())
}

/// The laboratory namespaces that exist now, this process's and others'.
pub fn namespaces() -> anyhow::Result<Vec<String>> {
    let out = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .context("running ip netns list")?;
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(NAMESPACE_PREFIX))
        .map(str::to_string)
        .collect())
}

/// Removes the laboratory namespaces whose creating process is gone (and kills what
/// still runs in them); returns their names.
pub fn sweep_stale() -> anyhow::Result<Vec<String>> {
    let mut removed = Vec::new();
    for ns in namespaces()? {
        let pid = ns[NAMESPACE_PREFIX.len()..]
            .split('-')
            .next()
            .and_then(|p| p.parse::<u32>().ok());
        let alive = pid.is_some_and(|p| Path::new(&format!("/proc/{p}")).exists());
        if !alive {
            remove_namespace(&ns);
            removed.push(ns);
        }
    }
    Ok(removed)
}

/// Removes every laboratory namespace, in use or not (`glidepath netlab cleanup`).
pub fn remove_all() -> anyhow::Result<Vec<String>> {
    let all = namespaces()?;
    for ns in &all {
        remove_namespace(ns);
    }
    Ok(all)
}

/// Blocks SIGINT, SIGTERM and SIGHUP in this process and starts a thread that waits
/// for them, removes this process's laboratories and exits with 128 + the signal.
/// Call it before starting any other thread, so that every thread inherits the mask
/// (child processes do not: the standard library resets it).
pub fn teardown_on_signals() -> anyhow::Result<()> {
    let set = block_termination_signals()?;
    std::thread::Builder::new()
        .name("netlab-signals".into())
        .spawn(move || {
            let signal = wait_for_signal(&set);
            SIGNALLED.store(signal.max(1), Ordering::SeqCst);
            let names: Vec<String> = LIVE.lock().clone();
            for ns in &names {
                remove_namespace(ns);
            }
            eprintln!(
                "netlab: signal {signal}: removed {} namespaces",
                names.len()
            );
            // Children die with this process (their parent-death signal).
            std::process::exit(128 + signal);
        })
        .context("starting the signal thread")?;
    Ok(())
}

/// Blocks SIGINT, SIGTERM and SIGHUP on the calling thread (and on the threads it
/// starts from then on); returns the set for [`wait_for_signal`]. (`glidepath server
/// --transport shm` uses it too, to remove its files when stopped.)
pub fn block_termination_signals() -> anyhow::Result<libc::sigset_t> {
    // SAFETY: plain libc calls on a sigset_t this function owns.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        let rc = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        if rc != 0 {
            bail!("blocking signals: {}", io::Error::from_raw_os_error(rc));
        }
        Ok(set)
    }
}

/// Waits for one of the signals of `set` (blocked by [`block_termination_signals`])
/// and returns it.
pub fn wait_for_signal(set: &libc::sigset_t) -> i32 {
    let mut signal = 0;
    // SAFETY: `set` is initialised; sigwait writes the signal number.
    unsafe { libc::sigwait(set, &mut signal) };
    signal
}

/// Enters namespace `name` on the calling thread only (setns(2) with CLONE_NEWNET):
/// sockets it creates afterwards belong to that namespace, and threads it starts
/// inherit it.
pub fn enter_namespace(name: &str) -> io::Result<()> {
    let file = File::open(format!("/var/run/netns/{name}"))?;
    // SAFETY: a valid namespace file descriptor; affects this thread only.
    if unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn remove_namespace(ns: &str) {
    // Processes still inside (started by a process that is gone, and not yet killed
    // by their parent-death signal) keep the namespace's devices alive: kill them.
    if let Ok(out) = Command::new("ip").args(["netns", "pids", ns]).output() {
        for pid in String::from_utf8_lossy(&out.stdout).split_whitespace() {
            if let Ok(pid) = pid.parse::<i32>() {
                // SAFETY: kill has no memory-safety preconditions.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }
    let _ = ip_quiet(&["netns", "del", ns]);
}

fn ip(args: &[&str]) -> anyhow::Result<()> {
    run("ip", args)
}

fn tc(ns: &str, args: &[&str]) -> anyhow::Result<()> {
    let mut all = vec!["-n", ns];
    all.extend_from_slice(args);
    run("tc", &all)
}

fn ip_quiet(args: &[&str]) -> io::Result<std::process::ExitStatus> {
    Command::new("ip").args(args).stderr(Stdio::null()).status()
}

fn tc_quiet(ns: &str, args: &[&str]) -> io::Result<std::process::ExitStatus> {
    Command::new("tc")
        .args(["-n", ns])
        .args(args)
        .stderr(Stdio::null())
        .status()
}

fn run(tool: &str, args: &[&str]) -> anyhow::Result<()> {
    let out = Command::new(tool)
        .args(args)
        .output()
        .with_context(|| format!("running {tool}"))?;
    if !out.status.success() {
        bail!(
            "`{tool} {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

fn tracing_note(line: &str) {
    eprintln!("netlab: {line}");
}
