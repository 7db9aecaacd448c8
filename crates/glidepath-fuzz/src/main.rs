//! `glidepath-fuzz [TARGET|all] [--cases N] [--seed S]`: the long fuzz run. Prints
//! each target's cases, rate and crashes; saves each crashing input under
//! `corpus/<target>/regressions/`, where the tests replay it. Exit status 1 when
//! anything crashed.

use std::time::Instant;

use glidepath_fuzz::{fuzz, regressions_dir, Target};

fn usage() -> ! {
    let names: Vec<&str> = Target::ALL.iter().map(|t| t.name()).collect();
    eprintln!(
        "usage: glidepath-fuzz [all|{}] [--cases N (default 1000000)] [--seed S (default 1)]",
        names.join("|")
    );
    std::process::exit(2)
}

fn main() {
    let mut targets = Target::ALL.to_vec();
    let mut cases = 1_000_000u64;
    let mut seed = 1u64;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut number = |what: &str| -> u64 {
            match args.next().map(|v| v.parse::<u64>()) {
                Some(Ok(v)) => v,
                _ => {
                    eprintln!("{what} needs a whole number");
                    usage()
                }
            }
        };
        match arg.as_str() {
            "--cases" => cases = number("--cases"),
            "--seed" => seed = number("--seed"),
            "all" => targets = Target::ALL.to_vec(),
            "--write-samples" => {
                // Writes the built-in samples into the corpus (done once; the files
                // are kept in the repository).
                for target in Target::ALL {
                    for (i, sample) in target.samples().iter().enumerate() {
                        let dir = glidepath_fuzz::corpus_dir(target);
                        let _ = std::fs::create_dir_all(&dir);
                        let path = dir.join(format!("sample-{i}.bin"));
                        std::fs::write(&path, sample).expect("writing the corpus");
                    }
                }
                return;
            }
            "-h" | "--help" => usage(),
            name => match Target::from_name(name) {
                Some(t) => targets = vec![t],
                None => {
                    eprintln!("unknown target `{name}`");
                    usage()
                }
            },
        }
    }
    let mut crashed = false;
    for target in targets {
        let started = Instant::now();
        let report = fuzz(target, cases, seed);
        let secs = started.elapsed().as_secs_f64();
        println!(
            "{:<13} {:>10} cases in {:>7.1} s ({:>9.0}/s), seed {seed}: {} crash(es)",
            target.name(),
            report.cases,
            secs,
            report.cases as f64 / secs.max(1e-9),
            report.crashes.len()
        );
        for crash in &report.crashes {
            crashed = true;
            let dir = regressions_dir(target);
            let _ = std::fs::create_dir_all(&dir);
            let name = format!("crash-{:016x}", fnv(&crash.input));
            let path = dir.join(name);
            match std::fs::write(&path, &crash.input) {
                Ok(()) => println!("  {}: {}", path.display(), crash.message),
                Err(e) => println!("  (not saved: {e}): {}", crash.message),
            }
        }
    }
    if crashed {
        std::process::exit(1);
    }
}

/// A stable name for an input.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    })
}
