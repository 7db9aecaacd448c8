//! `glidepath-py-peer`: the Python interoperability tests' Rust federate as a
//! program of its own, for runs over NATS in separate processes.
//!
//! ```text
//! glidepath-py-peer lockstep FEDERATION STEPS [--transport nats --nats-url URL ...]
//! glidepath-py-peer flood FEDERATION UPDATES [...]
//! ```
//!
//! The transport comes from `GLIDEPATH_*` variables and the usual flags. Prints one
//! line, `grants=G matched=M last_grant=T` or `sent=N receivers_given_up=G`, and exits 0; on failure
//! prints the reason to standard error and exits 1.

#[path = "../rust_peer.rs"]
#[allow(dead_code)]
mod rust_peer;

use glidepath::{Rti, RtiConfig};

fn main() {
    if let Err(e) = run() {
        eprintln!("glidepath-py-peer: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    // The positional arguments come first; the configuration flags follow them.
    let args: Vec<String> = std::env::args()
        .skip(1)
        .take_while(|a| !a.starts_with("--"))
        .collect();
    let usage = "usage: glidepath-py-peer lockstep|flood FEDERATION COUNT [--transport ...]";
    let [mode, federation, count, ..] = args.as_slice() else {
        return Err(usage.into());
    };
    let count: u32 = count.parse().map_err(|e| format!("COUNT `{count}`: {e}"))?;
    let config = RtiConfig::from_env_and_args().map_err(|e| e.to_string())?;
    let rti = Rti::from_config(&config).map_err(|e| e.to_string())?;
    match mode.as_str() {
        "lockstep" => {
            let r = rust_peer::lockstep(&rti, federation, count).map_err(|e| e.to_string())?;
            println!(
                "grants={} matched={} last_grant={}",
                r.grants, r.matched, r.last_grant
            );
        }
        "flood" => {
            let r =
                rust_peer::flood(&rti, federation, u64::from(count)).map_err(|e| e.to_string())?;
            println!(
                "sent={} receivers_given_up={}",
                r.sent, r.receivers_given_up
            );
        }
        _ => return Err(usage.into()),
    }
    Ok(())
}
