//! `ddm`: data distribution management against class-based subscription (issue 14).
//!
//! One publisher moves `entities` (default 64) entities on a latitude × longitude
//! plane (`foms/ddm-bench.xml`, both dimensions normalized to `[0, 65536]`), each step
//! a small random walk, and updates each entity's `position` after every move. `N`
//! subscribers (default sweep 1, 4, 16, 64) each cover one cell of an even grid over
//! the plane, so one subscriber's region is 1/N of it. Each subscriber count runs
//! twice in the same process and on the same transport:
//!
//! - `no-ddm`, the baseline: subscribers subscribe the class, the publisher updates
//!   without regions; every subscriber gets every update.
//! - `regions`: subscribers subscribe `position` with their cell's region; the
//!   publisher registers every entity with a point region, moves it (set range
//!   bounds and commit) before each update, and updates with it.
//! - `scope` (with `--scope-advisories`): as `regions`, every subscriber with its
//!   attribute scope advisory switch on, so the publisher sends a region notice
//!   after every move (routed, like the update, by the cells it covers).
//! - `one-region`, with one subscriber only: the subscriber subscribes with its
//!   region (the whole plane), the publisher registers every entity with one region
//!   covering the plane and never moves it — regions with nothing to filter, whose
//!   cost is the publisher's time against `no-ddm` (the goal: ≤ 10 %).
//!
//! After the set-up settles (two marker rounds), per subscriber it counts the
//! envelopes its RTI took in (`LocalStats::received`),
//! on NATS the bytes its connection read from the server (`wire_in_bytes`, all
//! traffic), and the reflections it got. Every update carries its sequence number and
//! position, so a subscriber checks each reflection against its region (a false
//! positive is one outside) and the publisher knows how many updates overlapped each
//! region (a false negative is one of those that never arrived). The `regions` row
//! carries the ratios to the `no-ddm` row: messages, wire bytes (NATS) and the
//! publisher's time (the sender's cost of moving and committing a region per update).
//! `count` is the total of updates (default 6400: 100 moves of 64 entities).

use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use bytes::Bytes;
use glidepath::{
    AttributeHandle, Callback, Fom, FomModule, InteractionClassHandle, ObjectClassHandle,
    RangeBounds,
};

use crate::harness::{Bench, BenchOptions, Member, Progress, TransportChoice};
use crate::result::{BenchResult, DdmFigures};

/// The suite's FOM, embedded so the binary runs from anywhere.
pub const DDM_FOM: &str = include_str!("../../../../foms/ddm-bench.xml");
/// The dimensions' upper bound in the FOM.
const UPPER: u64 = 65_536;
/// Subscriber counts of the default sweep (a square grid each).
pub const DEFAULT_SUBSCRIBERS: &[usize] = &[1, 4, 16, 64];
/// Entities the publisher moves.
pub const DEFAULT_ENTITIES: u64 = 64;
/// Updates per run.
pub const DEFAULT_COUNT: u64 = 6400;
/// How long a subscriber waits for the end marker once nothing comes.
const LINGER: Duration = Duration::from_secs(30);

/// The FOM's handles.
#[derive(Clone, Copy)]
struct Handles {
    entity: ObjectClassHandle,
    position: AttributeHandle,
    done: InteractionClassHandle,
    latitude: glidepath::DimensionHandle,
    longitude: glidepath::DimensionHandle,
}

/// A half-open box on the plane.
#[derive(Clone, Copy, Debug)]
struct Cell {
    lat: (u64, u64),
    lon: (u64, u64),
}

impl Cell {
    fn contains(&self, lat: u64, lon: u64) -> bool {
        (self.lat.0..self.lat.1).contains(&lat) && (self.lon.0..self.lon.1).contains(&lon)
    }
}

/// Subscriber `k` of `n`'s cell: rows × columns with rows the largest divisor of
/// `n` not above its square root.
fn cell(k: usize, n: usize) -> Cell {
    let rows = (1..=n)
        .filter(|r| n.is_multiple_of(*r) && r * r <= n)
        .max()
        .unwrap_or(1);
    let cols = n / rows;
    let (row, col) = ((k / cols) as u64, (k % cols) as u64);
    let (rows, cols) = (rows as u64, cols as u64);
    Cell {
        lat: (row * UPPER / rows, (row + 1) * UPPER / rows),
        lon: (col * UPPER / cols, (col + 1) * UPPER / cols),
    }
}

/// A small deterministic generator (xorshift64*): the same walk in both modes.
struct Walk(u64);

impl Walk {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// A step of up to ±1/64 of the plane, wrapping at the edges.
    fn step(&mut self, v: u64) -> u64 {
        let span = UPPER / 32;
        (v + UPPER + self.next() % span - span / 2) % UPPER
    }
}

/// Runs both modes for each subscriber count; two rows per count.
pub fn run(
    bench: &Bench,
    opts: &BenchOptions,
    progress: &dyn Progress,
) -> anyhow::Result<Vec<BenchResult>> {
    if opts.raw {
        bail!("the ddm suite has no raw peer: its baseline is its own run without regions (drop --raw)");
    }
    let fom = Fom::merge(&[FomModule::parse_str("ddm-bench.xml", DDM_FOM)
        .context("parsing the embedded DDM benchmark FOM")?])
    .context("merging the DDM benchmark FOM")?;
    let count = opts.count_or(DEFAULT_COUNT);
    let entities = DEFAULT_ENTITIES.min(count.max(1));
    let counts = opts.subscribers_or(DEFAULT_SUBSCRIBERS);
    let mut results = Vec::new();
    for (i, n) in counts.iter().copied().enumerate() {
        progress.stage(&format!("ddm, {n} subscribers"));
        let baseline = run_mode(bench, &fom, n, count, entities, Variant::NoDdm)?;
        let with = run_mode(bench, &fom, n, count, entities, Variant::Regions)?;
        results.push(row(opts, n, count, entities, &baseline, None));
        results.push(row(opts, n, count, entities, &with, Some(&baseline)));
        if opts.scope_advisories {
            let scope = run_mode(bench, &fom, n, count, entities, Variant::Scope)?;
            results.push(row(opts, n, count, entities, &scope, Some(&baseline)));
        }
        if n == 1 {
            // The other goal: one region, nothing to filter.
            let one = run_mode(bench, &fom, n, count, entities, Variant::OneRegion)?;
            results.push(row(opts, n, count, entities, &one, Some(&baseline)));
        }
        progress.set(i as u64 + 1, counts.len() as u64);
    }
    Ok(results)
}

/// What a run subscribes and updates with.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Variant {
    /// Class subscription, updates without regions.
    NoDdm,
    /// Subscription with the cell's region; every entity's point region moved and
    /// committed before each update.
    Regions,
    /// As `Regions`, every subscriber's attribute scope advisory switch on.
    Scope,
    /// Subscription with the cell's region; every entity registered with one region
    /// covering the plane, never moved (run with one subscriber: nothing to filter).
    OneRegion,
}

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::NoDdm => "no-ddm",
            Variant::Regions => "regions",
            Variant::Scope => "scope",
            Variant::OneRegion => "one-region",
        }
    }
}

/// What one run measured.
struct Run {
    variant: Variant,
    /// Per subscriber: envelopes its RTI took in, wire bytes read, reflections,
    /// updates that overlapped its cell, false positives.
    subscribers: Vec<SubscriberCount>,
    sender_s: f64,
    elapsed_s: f64,
}

#[derive(Clone, Copy, Default)]
struct SubscriberCount {
    messages: u64,
    wire_bytes: u64,
    callbacks: u64,
    expected: u64,
    false_positives: u64,
    /// Updates that overlapped and arrived (each at most once).
    overlapping_received: u64,
}

fn handles(f: &Member) -> anyhow::Result<Handles> {
    let entity = f.object_class_handle("Entity")?;
    Ok(Handles {
        entity,
        position: f.attribute_handle(entity, "position")?,
        done: f.interaction_class_handle("Done")?,
        latitude: f.dimension_handle("Latitude")?,
        longitude: f.dimension_handle("Longitude")?,
    })
}

fn run_mode(
    bench: &Bench,
    fom: &Fom,
    n: usize,
    count: u64,
    entities: u64,
    variant: Variant,
) -> anyhow::Result<Run> {
    let regions = variant != Variant::NoDdm;
    let federation = bench.new_federation_with_fom("ddm", fom.clone())?;
    let publisher = bench.join(&federation, "publisher")?;
    let h = handles(&publisher)?;
    publisher.publish_object_class_attributes(h.entity, &[h.position])?;
    publisher.publish_interaction_class(h.done)?;
    let mut subscribers = Vec::with_capacity(n);
    for k in 0..n {
        let s = bench.join(&federation, &format!("subscriber-{k}"))?;
        if regions {
            let c = cell(k, n);
            let region = s.create_region(&[h.latitude, h.longitude])?;
            s.set_range_bounds(region, h.latitude, RangeBounds::new(c.lat.0, c.lat.1))?;
            s.set_range_bounds(region, h.longitude, RangeBounds::new(c.lon.0, c.lon.1))?;
            s.commit_region_modifications(&[region])?;
            s.subscribe_object_class_attributes_with_regions(
                h.entity,
                &[(&[h.position], &[region])],
            )?;
            if variant == Variant::Scope {
                s.enable_attribute_scope_advisory_switch()?;
            }
        } else {
            s.subscribe_object_class_attributes(h.entity, &[h.position])?;
        }
        s.subscribe_interaction_class(h.done)?;
        subscribers.push(s);
    }
    // Entities start spread over the plane, each with its own point region.
    let mut walk = Walk(0x9e37_79b9_7f4a_7c15);
    let mut at: Vec<(u64, u64)> = (0..entities)
        .map(|_| (walk.next() % UPPER, walk.next() % UPPER))
        .collect();
    let mut instances = Vec::with_capacity(entities as usize);
    let plane = if variant == Variant::OneRegion {
        let region = publisher.create_region(&[h.latitude, h.longitude])?;
        publisher.set_range_bounds(region, h.latitude, RangeBounds::new(0, UPPER))?;
        publisher.set_range_bounds(region, h.longitude, RangeBounds::new(0, UPPER))?;
        publisher.commit_region_modifications(&[region])?;
        Some(region)
    } else {
        None
    };
    for &(lat, lon) in &at {
        let instance = if let Some(region) = plane {
            let i = publisher.register_object_instance_with_regions(
                h.entity,
                &[(&[h.position], &[region])],
                None,
            )?;
            (i, None)
        } else if regions {
            let region = publisher.create_region(&[h.latitude, h.longitude])?;
            point(&publisher, &h, region, lat, lon)?;
            let i = publisher.register_object_instance_with_regions(
                h.entity,
                &[(&[h.position], &[region])],
                None,
            )?;
            (i, Some(region))
        } else {
            (publisher.register_object_instance(h.entity)?, None)
        };
        instances.push(instance);
    }
    if variant == Variant::Scope {
        // The publisher (evoked) takes in the subscribers' switches, behind which
        // each sends a marker: from then on it sends region notices, and it has
        // answered each subscriber with where every entity is.
        publisher.subscribe_interaction_class(h.done)?;
        for s in &subscribers {
            s.publish_interaction_class(h.done)?;
            s.send_interaction(h.done, [], "watching")?;
        }
        let mut watching = 0;
        while watching < n {
            publisher.wait_for("the subscribers' switches", |cb| match cb {
                Callback::ReceiveInteraction { class, tag, .. }
                    if class == h.done && tag == b"watching".as_slice() =>
                {
                    Some(())
                }
                _ => None,
            })?;
            watching += 1;
        }
    }
    // Settle: everything of the set-up (joins, their answering statuses,
    // registrations) is taken in before the counters are read. Two rounds: the
    // statuses a subscriber sends while draining the first reach the others before
    // the second marker (on `inproc`; over NATS a few may still be on their way).
    for round in ["settle-1", "settle-2"] {
        publisher.send_interaction(h.done, [], round)?;
        for s in &subscribers {
            s.wait_for("the settling marker", |cb| match cb {
                Callback::ReceiveInteraction { class, tag, .. }
                    if class == h.done && tag == round.as_bytes() =>
                {
                    Some(())
                }
                _ => None,
            })?;
        }
    }
    let before: Vec<(u64, u64)> = subscribers
        .iter()
        .map(|s| (s.stats().received, s.transport_stats().wire_in_bytes))
        .collect();
    let mut expected = vec![0u64; n];
    let cells: Vec<Cell> = (0..n).map(|k| cell(k, n)).collect();
    let began = Instant::now();
    let (sender_s, counts) = std::thread::scope(|scope| -> anyhow::Result<_> {
        let readers: Vec<_> = subscribers
            .iter()
            .zip(&cells)
            .map(|(s, c)| {
                let c = *c;
                scope.spawn(move || read_until_done(s, &h, c, regions, count))
            })
            .collect();
        let sending = Instant::now();
        for seq in 0..count {
            let e = (seq % entities) as usize;
            let (lat, lon) = (walk.step(at[e].0), walk.step(at[e].1));
            at[e] = (lat, lon);
            let (instance, region) = instances[e];
            if let Some(region) = region {
                point(&publisher, &h, region, lat, lon)?;
            }
            let mut value = Vec::with_capacity(24);
            value.extend_from_slice(&seq.to_be_bytes());
            value.extend_from_slice(&lat.to_be_bytes());
            value.extend_from_slice(&lon.to_be_bytes());
            publisher.update_attribute_values(instance, [(h.position, Bytes::from(value))], "")?;
            for (k, c) in cells.iter().enumerate() {
                if !regions || c.contains(lat, lon) {
                    expected[k] += 1;
                }
            }
        }
        let sender_s = sending.elapsed().as_secs_f64();
        publisher.send_interaction(h.done, [], "done")?;
        let mut counts = Vec::with_capacity(n);
        for r in readers {
            counts.push(r.join().expect("a reader thread panicked")?);
        }
        Ok((sender_s, counts))
    })?;
    let elapsed_s = began.elapsed().as_secs_f64();
    let mut out = Vec::with_capacity(n);
    for (k, s) in subscribers.iter().enumerate() {
        let mut c: SubscriberCount = counts[k];
        c.messages = s.stats().received - before[k].0;
        c.wire_bytes = s.transport_stats().wire_in_bytes - before[k].1;
        c.expected = expected[k];
        out.push(c);
    }
    let mut members = vec![publisher];
    members.extend(subscribers);
    bench.finish(&federation, members)?;
    Ok(Run {
        variant,
        subscribers: out,
        sender_s,
        elapsed_s,
    })
}

/// Moves a point region to (lat, lon) and commits it.
fn point(
    f: &Member,
    h: &Handles,
    region: glidepath::RegionHandle,
    lat: u64,
    lon: u64,
) -> anyhow::Result<()> {
    f.set_range_bounds(region, h.latitude, RangeBounds::new(lat, lat + 1))?;
    f.set_range_bounds(region, h.longitude, RangeBounds::new(lon, lon + 1))?;
    f.commit_region_modifications(&[region])?;
    Ok(())
}

/// Reads a subscriber's callbacks until the publisher's `Done`, counting
/// reflections and checking each against the subscriber's cell.
fn read_until_done(
    s: &Member,
    h: &Handles,
    cell: Cell,
    regions: bool,
    count: u64,
) -> anyhow::Result<SubscriberCount> {
    let mut c = SubscriberCount::default();
    let mut seen = vec![false; count as usize];
    loop {
        let Some(cb) = s.next_callback(LINGER) else {
            bail!(
                "{}: no end marker within {LINGER:?} ({} reflections so far)",
                s.name(),
                c.callbacks
            );
        };
        match cb {
            Callback::ReflectAttributeValues { values, .. } => {
                for (a, v) in values.iter() {
                    if *a != h.position || v.len() != 24 {
                        continue;
                    }
                    let word = |i: usize| {
                        u64::from_be_bytes(v[i * 8..i * 8 + 8].try_into().expect("8 bytes"))
                    };
                    let (seq, lat, lon) = (word(0), word(1), word(2));
                    c.callbacks += 1;
                    let inside = !regions || cell.contains(lat, lon);
                    if !inside {
                        c.false_positives += 1;
                    } else if let Some(slot) = seen.get_mut(seq as usize) {
                        if !*slot {
                            *slot = true;
                            c.overlapping_received += 1;
                        }
                    }
                }
            }
            Callback::ReceiveInteraction { class, tag, .. }
                if class == h.done && tag == "done".as_bytes() =>
            {
                return Ok(c)
            }
            _ => {}
        }
    }
}

fn mean(v: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = v.fold((0.0, 0u32), |(s, n), x| (s + x, n + 1));
    if n == 0 {
        0.0
    } else {
        sum / f64::from(n)
    }
}

/// One row: the run's figures, with the ratios to the baseline when given.
fn row(
    opts: &BenchOptions,
    n: usize,
    count: u64,
    entities: u64,
    run: &Run,
    baseline: Option<&Run>,
) -> BenchResult {
    let mut r = opts.result("ddm", run.variant.name());
    r.subscribers = n as u64;
    r.federates = n as u64 + 1;
    r.size_bytes = 24;
    let subs = &run.subscribers;
    let expected: u64 = subs.iter().map(|s| s.expected).sum();
    let arrived: u64 = subs.iter().map(|s| s.overlapping_received).sum();
    r.count = expected;
    r.received = arrived;
    r.lost = expected - arrived;
    r.elapsed_s = run.elapsed_s;
    r.rate_per_s = count as f64 / run.sender_s.max(1e-9);
    let nats = opts.transport == TransportChoice::Nats;
    let per = |f: fn(&SubscriberCount) -> u64| mean(subs.iter().map(|s| f(s) as f64));
    let ratio = |f: fn(&SubscriberCount) -> u64| {
        baseline.map(|b| {
            mean(
                subs.iter()
                    .zip(&b.subscribers)
                    .map(|(s, b)| f(s) as f64 / (f(b) as f64).max(1.0)),
            )
        })
    };
    r.ddm = Some(DdmFigures {
        entities,
        messages_per_subscriber: per(|s| s.messages),
        baseline_messages_per_subscriber: baseline.map_or(per(|s| s.messages), |b| {
            mean(b.subscribers.iter().map(|s| s.messages as f64))
        }),
        messages_ratio: ratio(|s| s.messages).unwrap_or(1.0),
        wire_bytes_per_subscriber: nats.then(|| per(|s| s.wire_bytes)),
        baseline_wire_bytes_per_subscriber: nats.then(|| {
            baseline.map_or(per(|s| s.wire_bytes), |b| {
                mean(b.subscribers.iter().map(|s| s.wire_bytes as f64))
            })
        }),
        wire_bytes_ratio: if nats {
            ratio(|s| s.wire_bytes).or(Some(1.0))
        } else {
            None
        },
        callbacks_per_subscriber: per(|s| s.callbacks),
        expected_per_subscriber: per(|s| s.expected),
        false_negatives: expected - arrived,
        false_positives: subs.iter().map(|s| s.false_positives).sum(),
        sender_time_ratio: baseline.map_or(1.0, |b| run.sender_s / b.sender_s.max(1e-9)),
    });
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_tile_the_plane_once() {
        for n in [1, 2, 4, 6, 16, 64] {
            for (lat, lon) in [
                (0, 0),
                (UPPER - 1, UPPER - 1),
                (12_345, 54_321),
                (32_768, 1),
            ] {
                let covering = (0..n).filter(|k| cell(*k, n).contains(lat, lon)).count();
                assert_eq!(covering, 1, "n {n} at ({lat}, {lon})");
            }
        }
        let c = cell(5, 16);
        assert_eq!((c.lat, c.lon), ((16_384, 32_768), (16_384, 32_768)));
    }

    #[test]
    fn the_walk_stays_on_the_plane() {
        let mut w = Walk(7);
        let mut v = 0;
        for _ in 0..10_000 {
            v = w.step(v);
            assert!(v < UPPER);
        }
    }
}
