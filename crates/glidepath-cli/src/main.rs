//! The `glidepath` command-line tool: check FOM modules, run the demo federation.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use glidepath::{Fom, ProcessModel};

mod demo;

/// glidepath: an HLA run-time infrastructure for distributed simulation.
#[derive(Parser, Debug)]
#[command(name = "glidepath", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Work with FOM (Federation Object Model) modules.
    Fom {
        #[command(subcommand)]
        command: FomCommand,
    },
    /// Run a demo federation in this process: aircraft federates publish their
    /// positions in time lock-step while a monitor federate watches.
    Demo(DemoArgs),
}

#[derive(Subcommand, Debug)]
enum FomCommand {
    /// Load and merge FOM modules (IEEE 1516-2010 OMT XML) and print what they define.
    Check {
        /// Module files, merged in the order given.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
}

#[derive(clap::Args, Debug)]
struct DemoArgs {
    /// How many aircraft federates to run.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    federates: u32,
    /// How many time steps every federate advances.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    steps: u32,
    /// How callbacks are delivered: inside evoke calls, or on each federate's RTI thread.
    #[arg(long, value_enum, default_value_t = ProcessModelArg::Evoked)]
    process_model: ProcessModelArg,
    /// The air-traffic FOM module (relative paths are relative to the current directory).
    #[arg(long, default_value = "foms/air-traffic.xml", value_name = "FILE")]
    fom: PathBuf,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ProcessModelArg {
    /// Callbacks run inside evoke calls on the federate's own thread.
    Evoked,
    /// Callbacks run on the federate's RTI thread as soon as they happen.
    Immediate,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Fom {
            command: FomCommand::Check { files },
        } => fom_check(&files),
        Command::Demo(args) => demo::run(&demo::DemoOptions {
            federates: args.federates,
            steps: args.steps,
            process_model: match args.process_model {
                ProcessModelArg::Evoked => ProcessModel::Evoked,
                ProcessModelArg::Immediate => ProcessModel::Immediate,
            },
            fom: args.fom,
        }),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// `glidepath fom check`: loads and merges the modules, prints a summary table.
fn fom_check(files: &[PathBuf]) -> anyhow::Result<()> {
    // The FOM error already reads `file:line:col: message`; add nothing around it.
    let fom = Fom::load_files(files)?;
    let s = fom.summary();
    println!("FOM OK: {} module(s) merged with the MIM", s.modules);
    let rows = [
        ("modules", s.modules, fom.module_names.join(", ")),
        ("object classes", s.object_classes, String::new()),
        ("attributes", s.attributes, String::new()),
        ("interaction classes", s.interaction_classes, String::new()),
        ("parameters", s.parameters, String::new()),
        ("dimensions", s.dimensions, String::new()),
        ("data types", s.data_types, String::new()),
    ];
    for (what, count, note) in rows {
        let line = format!("  {what:<20} {count:>6}  {note}");
        println!("{}", line.trim_end());
    }
    println!("(classes, attributes and data types include those the MIM defines)");
    Ok(())
}
