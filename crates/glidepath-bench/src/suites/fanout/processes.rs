//! `fanout --processes`: every subscriber a process of its own (this program again,
//! through `harness::MemberProcess`), the publisher in this one.
//!
//! A subscriber process acknowledges each send-receive delivery with an `ACK` line on
//! its output (that paces the publisher, as the in-process channel does for threads;
//! it is not in the samples) and reports each size's deliveries in a `COLLECTED` line.
//! A sample is the subscriber's receive time minus the publisher's stamp, both read
//! on the host's monotonic clock (`harness::now_ns`, which every process anchors to
//! the same wall clock: comparable to within the anchors' microsecond or so).

use std::time::{Duration, Instant};

use anyhow::bail;
use glidepath::{AttributeHandle, ObjectInstanceHandle};

use super::{collect, publish_all, Collected, Variant, DEFAULT_COUNT, DEFAULT_SIZES};
use crate::harness::{
    self, payload, Bench, BenchOptions, Member, MemberProcess, Progress, RECEIVE_TIMEOUT,
};
use glidepath::stats::Recorder;

/// Starts `subscribers` subscriber processes for one (variant, subscriber count),
/// each told the sizes and count the publisher will send.
pub(super) fn spawn_subscribers(
    bench: &Bench,
    opts: &BenchOptions,
    federation: &str,
    subscribers: usize,
    variant: Variant,
    count: u64,
) -> anyhow::Result<Vec<MemberProcess>> {
    let sizes: Vec<String> = opts
        .sizes_or(DEFAULT_SIZES)
        .iter()
        .map(ToString::to_string)
        .collect();
    let args = [
        "--count".to_string(),
        count.to_string(),
        "--size".to_string(),
        sizes.join(","),
        "--member-role".to_string(),
        variant.name().to_string(),
    ];
    (0..subscribers)
        .map(|k| MemberProcess::spawn(bench, opts, "fanout", federation, k, &args))
        .collect()
}

/// One size of send-receive or throughput with the subscribers as processes.
#[allow(clippy::too_many_arguments)]
pub(super) fn round(
    publisher: &Member,
    children: &mut [MemberProcess],
    instance: ObjectInstanceHandle,
    attribute: AttributeHandle,
    size: usize,
    count: u64,
    base: u64,
    variant: Variant,
    progress: &dyn Progress,
) -> anyhow::Result<(Collected, f64)> {
    let body = payload(size);
    let started = Instant::now();
    let mut acked = || children.iter_mut().all(|c| c.expect("ACK", 1).is_ok());
    publish_all(
        publisher, instance, attribute, &body, count, base, variant, progress, &mut acked,
    )?;
    let mut all = Collected::default();
    for child in children.iter_mut() {
        all.merge(Collected::parse(&child.next_line("COLLECTED")?)?);
    }
    let elapsed_s = all
        .last_at
        .map_or(0.0, |t| t.saturating_duration_since(started).as_secs_f64());
    progress.set(count, count);
    Ok((all, elapsed_s))
}

/// `--member-of FEDERATION`: this process is subscriber `--member-index` of a
/// `fanout --processes` run (`--member-role` says which variant). Joins and
/// subscribes, says `READY`, then for each size collects `--count` deliveries (saying
/// `ACK` after each in send-receive) and says its `COLLECTED` line; resigns.
pub(super) fn serve_subscriber(
    bench: &Bench,
    federation: &str,
    opts: &BenchOptions,
) -> anyhow::Result<()> {
    let variant = match opts.member_role.as_deref() {
        Some("send-receive") => Variant::SendReceive,
        Some("throughput") => Variant::Throughput,
        other => bail!("a fanout subscriber process is send-receive or throughput, not {other:?}"),
    };
    let count = opts.count_or(DEFAULT_COUNT);
    let sub = bench.join(federation, &format!("subscriber-{}", opts.member_index))?;
    let class = sub.object_class_handle("BenchObject")?;
    let attribute = sub.attribute_handle(class, "payload")?;
    sub.subscribe_object_class_attributes(class, &[attribute])?;
    harness::say_ready()?;
    let gave_up = |idle: Duration| idle >= RECEIVE_TIMEOUT;
    let mut ack = || match variant {
        Variant::SendReceive => harness::say("ACK"),
        Variant::Throughput => Ok(()),
    };
    let mut base = 0u64;
    for _ in opts.sizes_or(DEFAULT_SIZES) {
        let c = collect(&sub, count, base, &gave_up, &mut ack)?;
        harness::say(&c.line())?;
        base += count;
    }
    sub.resign()
}

impl Collected {
    /// [`COLLECTED_LINE`]: the last delivery's instant and the samples in
    /// nanoseconds on [`harness::now_ns`] (0 when none).
    fn line(&self) -> String {
        format!(
            "COLLECTED {} {} {} {}",
            self.received,
            self.duplicated,
            self.last_at.map_or(0, harness::ns_of_instant),
            harness::list(
                self.samples_us
                    .iter()
                    .map(|us| (us * 1000.0).round() as u64)
            )
        )
    }

    /// Reads a subscriber process's `COLLECTED` line.
    fn parse(line: &str) -> anyhow::Result<Collected> {
        let said = harness::Said::parse(line, "a subscriber process", COLLECTED_LINE)?;
        let samples_ns = said.numbers(4)?;
        let mut latency_ns = Recorder::new();
        for &ns in &samples_ns {
            latency_ns.record(ns);
        }
        let last = said.number(3)?;
        Ok(Collected {
            latency_ns,
            samples_us: samples_ns.iter().map(|&ns| ns as f64 / 1000.0).collect(),
            received: said.number(1)?,
            duplicated: said.number(2)?,
            last_at: (last != 0).then(|| harness::instant_of_ns(last)),
        })
    }
}

/// What a subscriber process says after each size.
const COLLECTED_LINE: &str = "COLLECTED RECEIVED DUPLICATED LAST SAMPLES";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_subscribers_line_reads_back_and_a_garbled_one_is_refused() {
        let mut c = Collected::default();
        let mut tracker = crate::harness::SeqTracker::new(4);
        c.delivery(&mut tracker, 0, 1_000, 4_000);
        c.delivery(&mut tracker, 1, 2_000, 9_500);
        c.delivery(&mut tracker, 1, 2_000, 9_500);
        c.finish(&tracker);
        let back = Collected::parse(&c.line()).unwrap();
        assert_eq!((back.received, back.duplicated), (2, 1));
        assert_eq!(back.samples_us, vec![3.0, 7.5]);
        assert_eq!(back.latency_ns.count(), 2);
        assert!(back.last_at.is_some());
        let e = Collected::parse("COLLECTED 1 0 0 x")
            .err()
            .expect("a garbled sample is refused")
            .to_string();
        assert!(e.contains("samples `x`"), "{e}");
        assert!(Collected::parse("COLLECTED 1").is_err());
    }
}
