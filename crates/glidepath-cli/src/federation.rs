//! `glidepath federation save|restore|status` (status in `status.rs`): join a running federation over NATS as a
//! federate of type `glidepath-cli`, ask for a save or a restore, take part in it
//! (the tool is a member while it runs, so it answers its own *initiate federate
//! save / restore*), print what happened and leave.
//!
//! Because the tool is a member when the save is taken, the save lists one federate
//! of type `glidepath-cli`; `glidepath federation restore` provides it again (the
//! restore maps saved federates to joined ones by name and type, then by type).

use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use glidepath::{Callback, Federate, JoinOptions, ResignAction, Rti, RtiConfig, TransportKind};

use crate::nats_args::NatsArgs;

/// The federate type the tool joins as.
pub(crate) const CLI_FEDERATE_TYPE: &str = "glidepath-cli";

#[derive(clap::Subcommand, Debug)]
pub(crate) enum FederationCommand {
    /// Save a running federation under LABEL: every federate saves its RTI state
    /// and its own, and `glidepath server` keeps them.
    Save {
        /// The federation execution's name.
        name: String,
        /// The save's label (what a restore names).
        label: String,
        /// Save when every time-managed federate has been granted this logical time
        /// (default: now).
        #[arg(long, value_name = "T")]
        time: Option<String>,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Restore a running federation to the save LABEL: its federates (one of each
    /// saved type, plus this tool) take back what they saved.
    Restore {
        /// The federation execution's name.
        name: String,
        /// The save's label.
        label: String,
        #[command(flatten)]
        common: CommonArgs,
    },
    /// Print a running federation's members as its management object model reports
    /// them (name, type, host, time state, GALT, LITS, counts of updates,
    /// reflections and interactions), and the federation's own instance.
    Status {
        /// The federation execution's name.
        name: String,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        common: CommonArgs,
    },
}

#[derive(clap::Args, Debug)]
pub(crate) struct CommonArgs {
    #[command(flatten)]
    nats: NatsArgs,
    /// How long to wait for the federation to finish, in seconds (`status` waits at
    /// most 5 s for the members' answers).
    #[arg(long, default_value_t = 60, value_name = "SECONDS")]
    pub(crate) timeout_s: u64,
}

pub(crate) fn run(command: FederationCommand) -> anyhow::Result<()> {
    match command {
        FederationCommand::Save {
            name,
            label,
            time,
            common,
        } => save(&name, &label, time.as_deref(), common),
        FederationCommand::Restore {
            name,
            label,
            common,
        } => restore(&name, &label, common),
        FederationCommand::Status { name, json, common } => {
            crate::status::status(&name, json, common)
        }
    }
}

pub(crate) fn join(name: &str, common: &CommonArgs) -> anyhow::Result<Federate> {
    let mut config = RtiConfig::from_env()?;
    config.transport = TransportKind::Nats;
    common.nats.clone().apply(&mut config)?;
    let rti = Rti::from_config(&config)?;
    let me = format!("{CLI_FEDERATE_TYPE}-{}", std::process::id());
    rti.join(name, JoinOptions::named(me, CLI_FEDERATE_TYPE))
        .with_context(|| format!("joining federation `{name}`"))
}

/// The next callback, or an error once `deadline` passed.
pub(crate) fn next(f: &Federate, deadline: Instant, waiting_for: &str) -> anyhow::Result<Callback> {
    let left = deadline
        .checked_duration_since(Instant::now())
        .unwrap_or(Duration::ZERO);
    f.next_callback(left)
        .with_context(|| format!("no answer from the federation while waiting for {waiting_for}"))
}

pub(crate) fn leave(f: Federate) {
    // The outcome is already printed; a failed resign only means the federation
    // went away first.
    let _ = f.resign(ResignAction::NoAction);
}

fn save(name: &str, label: &str, time: Option<&str>, common: CommonArgs) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(common.timeout_s);
    let f = join(name, &common)?;
    let requested = match time {
        None => f.request_federation_save(label),
        Some(t) => match (t.parse::<i64>(), t.parse::<f64>()) {
            (Ok(i), _) => f.request_federation_save_at(label, i),
            (_, Ok(x)) => f.request_federation_save_at(label, x),
            _ => bail!("--time {t:?} is not a logical time (a number)"),
        },
    };
    if let Err(e) = requested {
        leave(f);
        bail!("federation `{name}` refused the save: {e}");
    }
    let result = loop {
        match next(&f, deadline, "the save to finish")? {
            Callback::InitiateFederateSave { .. } => {
                f.federate_save_begun()?;
                f.federate_save_complete(glidepath::Bytes::new())?;
            }
            Callback::FederationSaved { label } => {
                println!("federation `{name}` saved as `{label}`");
                break Ok(());
            }
            Callback::FederationNotSaved { label, reason } => {
                break Err(anyhow::anyhow!(
                    "federation `{name}` not saved as `{label}`: {reason}"
                ))
            }
            _ => {}
        }
    };
    leave(f);
    result
}

fn restore(name: &str, label: &str, common: CommonArgs) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(common.timeout_s);
    let f = join(name, &common)?;
    if let Err(e) = f.request_federation_restore(label) {
        leave(f);
        bail!("federation `{name}` refused the restore: {e}");
    }
    let result = loop {
        match next(&f, deadline, "the restore to finish")? {
            Callback::RequestFederationRestoreFailed { label, reason } => {
                break Err(anyhow::anyhow!(
                    "federation `{name}` refused to restore `{label}`: {reason}"
                ))
            }
            Callback::InitiateFederateRestore { .. } => f.federate_restore_complete()?,
            Callback::FederationRestored { label } => {
                println!("federation `{name}` restored to `{label}`");
                break Ok(());
            }
            Callback::FederationNotRestored { label, reason } => {
                break Err(anyhow::anyhow!(
                    "federation `{name}` not restored to `{label}`: {reason}"
                ))
            }
            _ => {}
        }
    };
    leave(f);
    result
}
