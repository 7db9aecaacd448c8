//! Federation save and restore, and what they cost: N time-managed federates
//! register M aircraft between them, discover each other's, save the federation,
//! then restore it, timing both.
//!
//! ```text
//! cargo run --release -p glidepath --example save_restore -- --federates 8 --instances 10000
//! ```
//!
//! Saves go to `--save-dir` (default `glidepath-saves` under the working
//! directory); `--transport nats` runs it against `glidepath server`, which keeps
//! saves in its memory.
//!
//! Each federate answers *initiate federate save* with its own state (here, the
//! handles of the aircraft it flies) and gets it back in *initiate federate
//! restore*. One thread drives every federate in turn, so the times include that
//! turn-taking; they are wall-clock times of the whole federation's save and
//! restore, from the request to the last federate's *federation saved / restored*.

use std::error::Error;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use glidepath::{Bytes, Callback, Federate, JoinOptions, ResignAction, Rti, RtiConfig};

const WAIT: Duration = Duration::from_secs(120);
const FEDERATION: &str = "save-restore-example";

fn arg(name: &str, default: usize) -> Result<usize, String> {
    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|a| a == name) {
        None => Ok(default),
        Some(i) => args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("{name} takes a number")),
    }
}

fn expect(f: &Federate, what: &str, want: impl Fn(&Callback) -> bool) -> Result<Callback, String> {
    loop {
        match f.next_callback(WAIT) {
            Some(cb) if want(&cb) => return Ok(cb),
            Some(_) => continue,
            None => return Err(format!("{}: no {what} within {WAIT:?}", f.name())),
        }
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let federates = arg("--federates", 8)?.max(1);
    let instances = arg("--instances", 10_000)?;
    let config = RtiConfig::from_env_and_args()?;
    let fom = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../foms/air-traffic.xml");
    let rti = Rti::from_config(&config)?;
    rti.create_federation_execution(FEDERATION, &[&fom])?;
    let members: Vec<Federate> = (0..federates)
        .map(|i| rti.join(FEDERATION, JoinOptions::named(format!("f{i}"), "sim")))
        .collect::<Result<_, _>>()?;
    let aircraft = members[0].object_class_handle("Aircraft")?;
    let latitude = members[0].attribute_handle(aircraft, "latitudeDeg")?;
    for f in &members {
        f.publish_object_class_attributes(aircraft, &[latitude])?;
        f.subscribe_object_class_attributes(aircraft, &[latitude])?;
    }
    let started = Instant::now();
    let mut own: Vec<Vec<u64>> = vec![Vec::new(); federates];
    for i in 0..instances {
        let f = i % federates;
        own[f].push(members[f].register_object_instance(aircraft)?.0);
    }
    for (i, f) in members.iter().enumerate() {
        let others = instances - own[i].len();
        for _ in 0..others {
            expect(f, "a discovery", |c| {
                matches!(c, Callback::DiscoverObjectInstance { .. })
            })?;
        }
    }
    for f in &members {
        f.enable_time_regulation(1.0)?;
        expect(f, "regulation", |c| {
            matches!(c, Callback::TimeRegulationEnabled { .. })
        })?;
        f.enable_time_constrained()?;
        expect(f, "constrained", |c| {
            matches!(c, Callback::TimeConstrainedEnabled { .. })
        })?;
    }
    println!(
        "{federates} federates, {instances} instances registered and discovered in {:.1} ms ({})",
        started.elapsed().as_secs_f64() * 1e3,
        rti.transport_name()
    );

    let started = Instant::now();
    members[0].request_federation_save("checkpoint")?;
    for (i, f) in members.iter().enumerate() {
        expect(f, "initiate federate save", |c| {
            matches!(c, Callback::InitiateFederateSave { .. })
        })?;
        f.federate_save_begun()?;
        let mine: Vec<u8> = own[i].iter().flat_map(|h| h.to_be_bytes()).collect();
        f.federate_save_complete(Bytes::from(mine))?;
    }
    for f in &members {
        expect(f, "federation saved", |c| {
            matches!(c, Callback::FederationSaved { .. })
        })?;
    }
    let save_ms = started.elapsed().as_secs_f64() * 1e3;
    let file = config.save_dir.join(FEDERATION).join("checkpoint.gpsave");
    let size = std::fs::metadata(&file).map(|m| m.len()).ok();

    let started = Instant::now();
    members[federates - 1].request_federation_restore("checkpoint")?;
    for (i, f) in members.iter().enumerate() {
        let cb = expect(f, "initiate federate restore", |c| {
            matches!(c, Callback::InitiateFederateRestore { .. })
        })?;
        let Callback::InitiateFederateRestore { user_state, .. } = cb else {
            unreachable!()
        };
        if user_state.len() != own[i].len() * 8 {
            return Err(format!("{}: its saved state came back altered", f.name()).into());
        }
        f.federate_restore_complete()?;
    }
    for f in &members {
        expect(f, "federation restored", |c| {
            matches!(c, Callback::FederationRestored { .. })
        })?;
    }
    let restore_ms = started.elapsed().as_secs_f64() * 1e3;
    match size {
        Some(bytes) => println!(
            "save {save_ms:.1} ms ({bytes} bytes in {}), restore {restore_ms:.1} ms",
            file.display()
        ),
        None => println!("save {save_ms:.1} ms, restore {restore_ms:.1} ms"),
    }
    for f in members {
        f.resign(ResignAction::DeleteObjects)?;
    }
    rti.destroy_federation_execution(FEDERATION)?;
    Ok(())
}
