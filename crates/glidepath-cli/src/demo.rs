//! `glidepath demo`: aircraft federates publish positions in time lock-step while a
//! monitor federate discovers them and counts what it reflects.
//!
//! Every federate is regulating and constrained with lookahead 1 and runs on its own
//! thread. They meet at a synchronization point, advance `steps` times (each
//! aircraft updating its position with the next step's time stamp before asking to
//! advance), then the aircraft resign deleting their objects and the monitor waits
//! for every removal before resigning itself.
//!
//! Over NATS the federation can be spread over processes (`--role`): a monitor
//! process waits until it has discovered `--federates` aircraft, whichever process
//! they run in, before it registers the synchronization point; aircraft processes
//! run their aircraft only. Every process creates the federation if nobody has yet.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use crossbeam_channel::{Receiver, Sender};
use glidepath::{
    AttributeHandle, Bytes, Callback, Federate, FederateAmbassador, FederateHandle,
    FederationError, JoinOptions, LogicalTime, ObjectClassHandle, ObjectInstanceHandle,
    ProcessModel, ResignAction, Rti, RtiConfig, RtiError,
};
const SYNC_LABEL: &str = "start";
/// Generous: a step takes microseconds; only a wedged federation waits this long.
const WAIT: Duration = Duration::from_secs(30);
const LOOKAHEAD: f64 = 1.0;

/// What `glidepath demo` was asked to do.
pub struct DemoOptions {
    /// Aircraft in the federation (`All`, `Monitor`) or in this process (`Aircraft`).
    pub federates: u32,
    pub steps: u32,
    pub process_model: ProcessModel,
    pub fom: PathBuf,
    pub config: RtiConfig,
    pub role: Role,
    pub federation: String,
}

/// Which part of the federation this process runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The monitor and every aircraft.
    All,
    /// The monitor only; the aircraft are elsewhere.
    Monitor,
    /// `federates` aircraft numbered from `first`; the monitor is elsewhere.
    Aircraft { first: u32 },
}

/// Runs the demo and prints what happened.
pub fn run(opts: &DemoOptions) -> anyhow::Result<()> {
    if !opts.fom.is_file() {
        bail!(
            "FOM module {} not found (run from the repository root, or pass --fom PATH to the air-traffic FOM)",
            opts.fom.display()
        );
    }
    let rti = Rti::from_config(&opts.config)?;
    match opts.role {
        Role::All => run_all(opts, &rti),
        Role::Monitor => run_monitor(opts, &rti),
        Role::Aircraft { first } => run_aircraft(opts, &rti, first),
    }
}

/// Creates the federation unless another process already has.
fn create(opts: &DemoOptions, rti: &Rti) -> anyhow::Result<()> {
    match rti.create_federation_execution(&opts.federation, &[&opts.fom]) {
        Ok(()) => {
            println!(
                "created federation {} from {}",
                opts.federation,
                opts.fom.display()
            );
            Ok(())
        }
        Err(RtiError::Federation(FederationError::FederationExecutionAlreadyExists(_))) => {
            println!("joining federation {}, created elsewhere", opts.federation);
            Ok(())
        }
        Err(e) => Err(e.into()),
    }
}

/// `--role monitor`: the monitor alone; aircraft come from other processes.
fn run_monitor(opts: &DemoOptions, rti: &Rti) -> anyhow::Result<()> {
    println!(
        "glidepath demo: monitor for {} aircraft, {} steps, {} callbacks, {} transport",
        opts.federates,
        opts.steps,
        model_name(opts.process_model),
        rti.transport_name()
    );
    create(opts, rti)?;
    let started = Instant::now();
    let (monitor, handles) = join_monitor(opts, rti)?;
    let w = watch(&monitor, &handles, opts, Readiness::Discovered)?;
    println!(
        "monitor discovered {} aircraft: {}",
        w.discovered.len(),
        w.discovered.join(", ")
    );
    let counts: Vec<String> = w
        .reflections
        .iter()
        .map(|(producer, count)| format!("{producer} {count}"))
        .collect();
    println!("reflections at monitor: {}", counts.join(", "));
    let total: u64 = w.reflections.values().sum();
    println!(
        "delivered in time-stamp order: {} of {total}",
        w.tso_reflections
    );
    println!("grants: {}, final logical time {}", w.grants, w.final_time);
    for (callsign, (lat, lon, alt)) in &w.last_position {
        println!("  {callsign}: {lat:.4} N {lon:.4} E {alt:.0} ft");
    }
    println!("resigned after {} removals", w.removals);
    match rti.destroy_federation_execution(&opts.federation) {
        Ok(()) => println!("federation destroyed"),
        Err(e) => println!("federation left in place: {e}"),
    }
    let seconds = started.elapsed().as_secs_f64();
    println!("monitor done after {seconds:.3} s");
    Ok(())
}

/// `--role aircraft`: aircraft only; the monitor runs elsewhere.
fn run_aircraft(opts: &DemoOptions, rti: &Rti, first: u32) -> anyhow::Result<()> {
    let last = first + opts.federates - 1;
    println!(
        "glidepath demo: aircraft {first} to {last}, {} steps, {} callbacks, {} transport",
        opts.steps,
        model_name(opts.process_model),
        rti.transport_name()
    );
    create(opts, rti)?;
    let probe = Member::join(
        rti,
        &opts.federation,
        &format!("aircraft-{first}-{last}-lookup"),
        "lookup",
        ProcessModel::Evoked,
    )?;
    let handles = Handles::lookup(&probe.federate)?;
    probe.federate.resign(ResignAction::DeleteObjects)?;
    let (ready_tx, _ready_rx) = crossbeam_channel::unbounded();
    let reports = fly_all(opts, rti, first..=last, &handles, &ready_tx)?;
    for r in reports {
        println!(
            "{} as {}: {} grants, final logical time {}, resigned",
            r.name, r.handle, r.grants, r.final_time
        );
    }
    Ok(())
}

/// Joins the monitor federate and subscribes every Aircraft attribute.
fn join_monitor(opts: &DemoOptions, rti: &Rti) -> anyhow::Result<(Member, Handles)> {
    let monitor = Member::join(
        rti,
        &opts.federation,
        "monitor",
        "monitor",
        opts.process_model,
    )?;
    let handles = Handles::lookup(&monitor.federate)?;
    monitor
        .federate
        .subscribe_object_class_attributes(handles.aircraft, &handles.all())?;
    Ok((monitor, handles))
}

fn model_name(model: ProcessModel) -> &'static str {
    match model {
        ProcessModel::Evoked => "evoked",
        ProcessModel::Immediate => "immediate",
    }
}

/// Runs aircraft `indices`, each on its own thread; their reports in order.
fn fly_all(
    opts: &DemoOptions,
    rti: &Rti,
    indices: std::ops::RangeInclusive<u32>,
    handles: &Handles,
    ready: &Sender<()>,
) -> anyhow::Result<Vec<FlightReport>> {
    let aircraft: Vec<_> = indices
        .map(|i| {
            let (rti, ready, handles) = (rti.clone(), ready.clone(), handles.clone());
            let (steps, model, federation) =
                (opts.steps, opts.process_model, opts.federation.clone());
            thread::Builder::new()
                .name(format!("aircraft-{i}"))
                .spawn(move || fly(&rti, &federation, i, steps, model, &handles, &ready))
                .context("starting an aircraft thread")
        })
        .collect::<Result<_, _>>()?;
    let mut reports = Vec::new();
    for handle in aircraft {
        reports.push(
            handle
                .join()
                .map_err(|_| anyhow!("an aircraft thread panicked"))?,
        );
    }
    reports.into_iter().collect()
}

/// The whole federation in this process (the default).
fn run_all(opts: &DemoOptions, rti: &Rti) -> anyhow::Result<()> {
    let rti = rti.clone();
    let model = model_name(opts.process_model);
    println!(
        "glidepath demo: {} aircraft and 1 monitor, {} steps, {model} callbacks, {} transport",
        opts.federates,
        opts.steps,
        rti.transport_name()
    );
    rti.create_federation_execution(&opts.federation, &[&opts.fom])?;
    println!(
        "created federation {} from {}",
        opts.federation,
        opts.fom.display()
    );
    let started = Instant::now();

    // Subscribed before any aircraft exists, so the monitor reflects every update.
    let (monitor, handles) = join_monitor(opts, &rti)?;
    let (ready_tx, ready_rx) = crossbeam_channel::unbounded();
    let (reports, watched) = thread::scope(|s| {
        let (rti, handles) = (&rti, &handles);
        // The sender moves in, so the monitor hears at once if every aircraft gave up.
        let flying = s.spawn(move || fly_all(opts, rti, 1..=opts.federates, handles, &ready_tx));
        let watched = watch(&monitor, handles, opts, Readiness::Signalled(&ready_rx));
        let reports = flying
            .join()
            .unwrap_or_else(|_| Err(anyhow!("an aircraft thread panicked")));
        (reports, watched)
    });
    // Report the first failure: an aircraft's own error explains a monitor timeout.
    let reports = reports?;
    let watched = watched?;

    let mut joined: Vec<String> = reports
        .iter()
        .map(|r| format!("{} as {}", r.name, r.handle))
        .collect();
    joined.insert(0, format!("monitor as {}", monitor.federate.handle()));
    println!("joined: {}", joined.join(", "));
    println!(
        "synchronized at `{SYNC_LABEL}`: {} federates",
        reports.len() + 1
    );
    println!(
        "monitor discovered {} aircraft: {}",
        watched.discovered.len(),
        watched.discovered.join(", ")
    );
    let counts: Vec<String> = reports
        .iter()
        .map(|r| {
            format!(
                "{} {}",
                r.name,
                watched.reflections.get(&r.handle).copied().unwrap_or(0)
            )
        })
        .collect();
    println!("reflections at monitor: {}", counts.join(", "));
    let total: u64 = watched.reflections.values().sum();
    println!(
        "delivered in time-stamp order: {} of {total}",
        watched.tso_reflections
    );
    let grants: u32 = reports.iter().map(|r| r.grants).sum::<u32>() + watched.grants;
    let finals: Vec<LogicalTime> = reports
        .iter()
        .map(|r| r.final_time)
        .chain([watched.final_time])
        .collect();
    let all_same = finals.iter().all(|t| *t == finals[0]);
    if all_same {
        println!(
            "grants: {grants} ({} per federate), final logical time {} for every federate",
            opts.steps, finals[0]
        );
    } else {
        let list: Vec<String> = finals.iter().map(|t| t.to_string()).collect();
        println!("grants: {grants}, final logical times {}", list.join(", "));
    }
    for (callsign, (lat, lon, alt)) in &watched.last_position {
        println!("  {callsign}: {lat:.4} N {lon:.4} E {alt:.0} ft");
    }
    println!(
        "resigned: {} aircraft (objects deleted, {} removals seen by the monitor), monitor",
        reports.len(),
        watched.removals
    );
    rti.destroy_federation_execution(&opts.federation)?;
    let seconds = started.elapsed().as_secs_f64();
    println!(
        "federation destroyed after {seconds:.3} s ({:.0} grants/s)",
        f64::from(grants) / seconds.max(1e-9)
    );
    Ok(())
}

/// The FOM handles the demo uses.
#[derive(Clone)]
struct Handles {
    aircraft: ObjectClassHandle,
    callsign: AttributeHandle,
    latitude: AttributeHandle,
    longitude: AttributeHandle,
    altitude: AttributeHandle,
}

impl Handles {
    fn lookup(f: &Federate) -> anyhow::Result<Handles> {
        let aircraft = f
            .object_class_handle("Aircraft")
            .context("the demo needs the air-traffic FOM")?;
        Ok(Handles {
            aircraft,
            callsign: f.attribute_handle(aircraft, "callsign")?,
            latitude: f.attribute_handle(aircraft, "latitudeDeg")?,
            longitude: f.attribute_handle(aircraft, "longitudeDeg")?,
            altitude: f.attribute_handle(aircraft, "altitudeFt")?,
        })
    }

    fn all(&self) -> [AttributeHandle; 4] {
        [self.callsign, self.latitude, self.longitude, self.altitude]
    }
}

/// Forwards immediate callbacks from the RTI thread to the federate's own thread.
struct Forward(Sender<Callback>);

impl FederateAmbassador for Forward {
    fn callback(&mut self, callback: Callback) {
        // The receiver is gone only when the demo has given up on this federate.
        let _ = self.0.send(callback);
    }
}

/// A federate and where its callbacks come from in the chosen process model.
struct Member {
    federate: Federate,
    immediate: Option<Receiver<Callback>>,
}

impl Member {
    fn join(
        rti: &Rti,
        federation: &str,
        name: &str,
        federate_type: &str,
        model: ProcessModel,
    ) -> anyhow::Result<Member> {
        let options = JoinOptions::named(name, federate_type);
        let member = match model {
            ProcessModel::Evoked => Member {
                federate: rti.join(federation, options)?,
                immediate: None,
            },
            ProcessModel::Immediate => {
                let (tx, rx) = crossbeam_channel::unbounded();
                Member {
                    federate: rti.join_immediate(federation, options, Forward(tx))?,
                    immediate: Some(rx),
                }
            }
        };
        Ok(member)
    }

    fn next(&self, what: &str) -> anyhow::Result<Callback> {
        let callback = match &self.immediate {
            Some(rx) => rx.recv_timeout(WAIT).ok(),
            None => self.federate.next_callback(WAIT),
        };
        callback.ok_or_else(|| {
            anyhow!(
                "{}: no callback within {WAIT:?} while waiting for {what}",
                self.federate.name()
            )
        })
    }

    /// Hands every callback to `seen` until one matches `done`.
    fn until(
        &self,
        what: &str,
        mut seen: impl FnMut(&Callback),
        done: impl Fn(&Callback) -> bool,
    ) -> anyhow::Result<Callback> {
        loop {
            let callback = self.next(what)?;
            seen(&callback);
            if done(&callback) {
                return Ok(callback);
            }
        }
    }

    fn regulating_and_constrained(&self, mut seen: impl FnMut(&Callback)) -> anyhow::Result<()> {
        self.federate.enable_time_regulation(LOOKAHEAD)?;
        self.until("time regulation", &mut seen, |c| {
            matches!(c, Callback::TimeRegulationEnabled { .. })
        })?;
        self.federate.enable_time_constrained()?;
        self.until("time constrained", &mut seen, |c| {
            matches!(c, Callback::TimeConstrainedEnabled { .. })
        })?;
        Ok(())
    }

    /// Achieves the demo's synchronization point (after waiting for its announcement,
    /// unless it was already seen) and waits for the federation to synchronize.
    fn synchronize(&self, announced: bool, mut seen: impl FnMut(&Callback)) -> anyhow::Result<()> {
        if !announced {
            self.until("the synchronization point", &mut seen, is_announcement)?;
        }
        self.federate.synchronization_point_achieved(SYNC_LABEL)?;
        self.until(
            "the federation to synchronize",
            &mut seen,
            |c| matches!(c, Callback::FederationSynchronized { label, .. } if label == SYNC_LABEL),
        )?;
        Ok(())
    }

    fn advance(&self, time: f64, seen: impl FnMut(&Callback)) -> anyhow::Result<LogicalTime> {
        self.federate.time_advance_request(time)?;
        match self.until("a time advance grant", seen, |c| {
            matches!(c, Callback::TimeAdvanceGrant { .. })
        })? {
            Callback::TimeAdvanceGrant { time } => Ok(time),
            _ => unreachable!("until returns the callback that matched"),
        }
    }
}

/// One aircraft federate's account of its run.
struct FlightReport {
    name: String,
    handle: FederateHandle,
    grants: u32,
    final_time: LogicalTime,
}

fn is_announcement(c: &Callback) -> bool {
    matches!(c, Callback::AnnounceSynchronizationPoint { label, .. } if label == SYNC_LABEL)
}

fn fly(
    rti: &Rti,
    federation: &str,
    index: u32,
    steps: u32,
    model: ProcessModel,
    h: &Handles,
    ready: &Sender<()>,
) -> anyhow::Result<FlightReport> {
    let name = format!("aircraft-{index}");
    let me = Member::join(rti, federation, &name, "aircraft", model)?;
    let f = &me.federate;
    f.publish_object_class_attributes(h.aircraft, &h.all())?;
    let callsign = format!("GP{}", 100 + index);
    f.reserve_object_instance_name(&callsign)?;
    match me.next("the name reservation")? {
        Callback::ObjectInstanceNameReservationSucceeded { .. } => {}
        other => bail!("{name}: reserving {callsign}: {other:?}"),
    }
    let plane = f.register_object_instance_with_name(h.aircraft, &callsign)?;
    // A monitor in another process announces once it has discovered every aircraft,
    // which may be while this one is still enabling time management.
    let mut announced = false;
    me.regulating_and_constrained(|c| announced |= is_announcement(c))?;
    // Nobody listens when the monitor runs elsewhere.
    let _ = ready.send(());
    me.synchronize(announced, |_| {})?;
    // The callsign goes out once the federation is synchronized: the monitor
    // subscribed before it registered the point, so it reflects this update even
    // when it runs in another process and joined after this aircraft registered.
    f.update_attribute_values(
        plane,
        [(h.callsign, hla_unicode_string(&callsign))],
        "registered",
    )?;

    let mut now = LogicalTime::ZERO;
    for step in 1..=steps {
        let time = f64::from(step);
        let (lat, lon, alt) = position(index, time);
        f.update_attribute_values_at(
            plane,
            [
                (h.latitude, hla_float64(lat)),
                (h.longitude, hla_float64(lon)),
                (h.altitude, hla_float64(alt)),
            ],
            "position",
            time,
        )?;
        let granted = me.advance(time, |_| {})?;
        if granted < now {
            bail!("{name}: granted {granted} after {now}");
        }
        now = granted;
    }
    let report = FlightReport {
        name,
        handle: f.handle(),
        grants: steps,
        final_time: now,
    };
    f.resign(ResignAction::DeleteObjects)?;
    Ok(report)
}

/// Where aircraft `index` is at `time`: a straight climb out of Schiphol.
fn position(index: u32, time: f64) -> (f64, f64, f64) {
    let i = f64::from(index);
    (
        52.31 + 0.001 * time * i.sin(),
        4.76 + 0.001 * time * i.cos(),
        1000.0 + 50.0 * time,
    )
}

/// What the monitor saw.
struct Watched {
    discovered: Vec<String>,
    reflections: BTreeMap<FederateHandle, u64>,
    /// Reflections the RTI delivered in time-stamp order (the FOM orders the track
    /// attributes by time stamp and the monitor is time-constrained).
    tso_reflections: u64,
    last_position: BTreeMap<String, (f64, f64, f64)>,
    grants: u32,
    final_time: LogicalTime,
    removals: usize,
}

/// How the monitor knows every aircraft is there before it registers the
/// synchronization point.
enum Readiness<'a> {
    /// Each aircraft thread in this process signals when it is ready.
    Signalled(&'a Receiver<()>),
    /// Aircraft in other processes: wait until each one's object is discovered (an
    /// aircraft registers it after joining, so it is then in the point's set).
    Discovered,
}

fn watch(
    monitor: &Member,
    h: &Handles,
    opts: &DemoOptions,
    readiness: Readiness<'_>,
) -> anyhow::Result<Watched> {
    let f = &monitor.federate;
    let mut w = Watched {
        discovered: Vec::new(),
        reflections: BTreeMap::new(),
        tso_reflections: 0,
        last_position: BTreeMap::new(),
        grants: 0,
        final_time: LogicalTime::ZERO,
        removals: 0,
    };
    let mut names: BTreeMap<ObjectInstanceHandle, String> = BTreeMap::new();
    // Removals may arrive during the last advance already: counted wherever they come.
    let removals = std::cell::Cell::new(0usize);
    let discovered = std::cell::Cell::new(0u32);
    let mut seen = |c: &Callback| match c {
        Callback::DiscoverObjectInstance { instance, name, .. } => {
            names.insert(*instance, name.clone());
            w.discovered.push(name.clone());
            discovered.set(discovered.get() + 1);
        }
        Callback::ReflectAttributeValues {
            instance,
            values,
            info,
            ..
        } => {
            *w.reflections.entry(info.producer).or_default() += 1;
            if info.received_order == glidepath::OrderType::TimeStamp {
                w.tso_reflections += 1;
            }
            let get = |a: AttributeHandle| {
                values
                    .iter()
                    .find(|(x, _)| *x == a)
                    .and_then(|(_, v)| decode_float64(v))
            };
            if let (Some(lat), Some(lon), Some(alt), Some(name)) = (
                get(h.latitude),
                get(h.longitude),
                get(h.altitude),
                names.get(instance),
            ) {
                w.last_position.insert(name.clone(), (lat, lon, alt));
            }
        }
        Callback::RemoveObjectInstance { .. } => removals.set(removals.get() + 1),
        _ => {}
    };
    // Every callback goes through `seen`: discoveries and reflections can come
    // whatever the monitor is waiting for.
    monitor.regulating_and_constrained(&mut seen)?;
    match readiness {
        Readiness::Signalled(ready) => {
            for _ in 0..opts.federates {
                ready.recv_timeout(WAIT).map_err(|_| {
                    anyhow!("monitor: not every aircraft got ready within {WAIT:?}")
                })?;
            }
        }
        Readiness::Discovered => {
            while discovered.get() < opts.federates {
                let callback = monitor.next("every aircraft to register its object")?;
                seen(&callback);
            }
        }
    }
    f.register_federation_synchronization_point(SYNC_LABEL, "")?;
    monitor.synchronize(false, &mut seen)?;
    let (mut grants, mut final_time) = (0, LogicalTime::ZERO);
    for step in 1..=opts.steps {
        final_time = monitor.advance(f64::from(step), &mut seen)?;
        grants += 1;
    }
    while removals.get() < opts.federates as usize {
        let callback = monitor.next("the aircraft to resign")?;
        seen(&callback);
    }
    f.resign(ResignAction::DeleteObjects)?;
    w.removals = removals.get();
    w.grants = grants;
    w.final_time = final_time;
    w.discovered.sort();
    Ok(w)
}

/// `HLAfloat64BE`.
fn hla_float64(x: f64) -> Bytes {
    Bytes::copy_from_slice(&x.to_be_bytes())
}

fn decode_float64(bytes: &[u8]) -> Option<f64> {
    Some(f64::from_be_bytes(bytes.try_into().ok()?))
}

/// `HLAunicodeString`: a 32-bit big-endian count of UTF-16 units, then the units big-endian.
fn hla_unicode_string(s: &str) -> Bytes {
    let units: Vec<u16> = s.encode_utf16().collect();
    let mut out = Vec::with_capacity(4 + 2 * units.len());
    out.extend_from_slice(&(units.len() as u32).to_be_bytes());
    for u in units {
        out.extend_from_slice(&u.to_be_bytes());
    }
    Bytes::from(out)
}
