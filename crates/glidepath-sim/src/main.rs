//! `glidepath-sim`: run or replay deterministic simulations of the RTI services.
//!
//! `glidepath-sim --seed 42 --verbose` replays one seed event by event;
//! `glidepath-sim --seeds 10000 --start 0` runs a long batch and prints the first failure.

use std::process::ExitCode;

use glidepath_sim::{run, SimConfig};

fn usage() -> ExitCode {
    eprintln!("usage: glidepath-sim [--seed N | --seeds COUNT [--start N]] [--federates N] [--advances N] [--verbose]");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (mut seed, mut seeds, mut start, mut federates, mut advances, mut verbose) =
        (None, 1u64, 0u64, None, None, false);
    while let Some(a) = args.next() {
        let mut num = |name: &str| -> Option<u64> {
            let v = args.next().and_then(|v| v.parse().ok());
            if v.is_none() {
                eprintln!("{name} needs a non-negative integer");
            }
            v
        };
        match a.as_str() {
            "--seed" => match num("--seed") {
                Some(v) => seed = Some(v),
                None => return usage(),
            },
            "--seeds" => match num("--seeds") {
                Some(v) => seeds = v,
                None => return usage(),
            },
            "--start" => match num("--start") {
                Some(v) => start = v,
                None => return usage(),
            },
            "--federates" => match num("--federates") {
                Some(v) if (2..=64).contains(&v) => federates = Some(v as usize),
                _ => return usage(),
            },
            "--advances" => match num("--advances") {
                Some(v) => advances = Some(v as u32),
                None => return usage(),
            },
            "--verbose" => verbose = true,
            other => {
                eprintln!("unknown argument `{other}`");
                return usage();
            }
        }
    }
    let range = match seed {
        Some(s) => s..s + 1,
        None => start..start + seeds,
    };
    let (mut events, mut largest, mut ok) = (0u64, 0usize, 0u64);
    for s in range {
        let mut cfg = SimConfig::for_seed(s);
        cfg.verbose = verbose;
        cfg.federates = federates;
        if let Some(a) = advances {
            cfg.advances = a;
        }
        match run(&cfg) {
            Ok(o) => {
                events += o.events;
                largest = largest.max(o.federates);
                ok += 1;
                if verbose || seed.is_some() {
                    println!("{o:?}");
                }
            }
            Err(f) => {
                eprintln!("{f}");
                return ExitCode::FAILURE;
            }
        }
    }
    println!("{ok} seeds passed, {events} events, largest federation {largest} federates");
    ExitCode::SUCCESS
}
