//! One measured result of a suite: the row of the human table and the object written
//! to `--json PATH` (issue 4, point 5). Every suite returns these, so the table, the
//! JSON and the plots are written in one place for all of them.

use serde::Serialize;

use glidepath::stats::{Recorder, Summary};

/// One result: a suite run with one configuration (size, federates, subscribers).
#[derive(Clone, Debug, Serialize)]
pub struct BenchResult {
    /// `latency`, `throughput`, `loopback`, `timeadv` or `fanout`.
    pub suite: String,
    /// Which variant of the suite (`sender`/`receiver` for throughput, `send-only`,
    /// `send-receive` or `throughput` for fanout, `round-trip` for latency...).
    pub variant: String,
    /// `inproc` or `nats`.
    pub transport: String,
    /// `evoked` or `immediate`.
    pub process_model: String,
    /// `spin`, `spin-park` or `park`.
    pub wait: String,
    pub size_bytes: u64,
    /// Federates taking part (including the measuring one).
    pub federates: u64,
    pub subscribers: u64,
    /// Bus benchmarks: where the subscribers ran, `threads` of the measuring process
    /// or `processes` of their own (`--processes`), the raw peer's alike.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub subscribers_in: Option<String>,
    /// Messages (or, for `timeadv`, grants) sent or expected.
    pub count: u64,
    /// Messages received (grants for `timeadv`).
    pub received: u64,
    /// Sent but never received: `count - received` where the suite expects every one.
    pub lost: u64,
    /// Received more than once.
    pub duplicated: u64,
    /// Bus benchmarks: deliveries out of the order every subscriber must share.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order_violations: Option<u64>,
    pub min_us: f64,
    pub p25_us: f64,
    pub p50_us: f64,
    pub p75_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
    pub mean_us: f64,
    pub sd_us: f64,
    /// Messages per second delivered; for `timeadv`, grants per second per federate.
    pub rate_per_s: f64,
    /// Payload megabits per second delivered (0 for `timeadv`).
    pub mbit_per_s: f64,
    /// For `timeadv`: grants per second over all federates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_rate_per_s: Option<f64>,
    /// The raw peer's figures from the same run, when `--raw` was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_p50_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_p99_us: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_rate_per_s: Option<f64>,
    /// glidepath's P50 over the raw peer's (above 1: glidepath is slower).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio_p50: Option<f64>,
    /// glidepath's P99 over the raw peer's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio_p99: Option<f64>,
    /// glidepath's rate over the raw peer's (below 1: glidepath is slower).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio_rate: Option<f64>,
    /// Wall-clock seconds the measured phase took.
    pub elapsed_s: f64,
    /// Per-sample latencies in microseconds, kept for the plots (not written to JSON).
    #[serde(skip)]
    pub samples_us: Vec<f64>,
    /// The `ddm` suite's figures, written as keys of the same object.
    #[serde(flatten)]
    pub ddm: Option<DdmFigures>,
}

/// What `glidepath bench ddm` measures of one subscriber count, per subscriber and
/// averaged over subscribers: the run with regions against the run without (class
/// subscription only) on the same transport, in the same process.
#[derive(Clone, Debug, Default, Serialize)]
pub struct DdmFigures {
    /// Moving entities the publisher updates.
    pub entities: u64,
    /// Envelopes a subscriber's RTI took in, with regions and without.
    pub messages_per_subscriber: f64,
    pub baseline_messages_per_subscriber: f64,
    /// `messages_per_subscriber / baseline_messages_per_subscriber`, averaged over
    /// subscribers.
    pub messages_ratio: f64,
    /// Bytes a subscriber's connection read from the NATS server (data and control
    /// traffic), with regions and without; absent on `inproc`, which has no wire.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wire_bytes_per_subscriber: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baseline_wire_bytes_per_subscriber: Option<f64>,
    /// A subscriber's wire bytes with regions over without, averaged over subscribers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wire_bytes_ratio: Option<f64>,
    /// Reflections a subscriber got with regions, and how many updates overlapped
    /// its region when sent.
    pub callbacks_per_subscriber: f64,
    pub expected_per_subscriber: f64,
    /// Updates that overlapped a subscriber's region and never reached it, and
    /// reflections of updates that did not overlap (both must be 0).
    pub false_negatives: u64,
    pub false_positives: u64,
    /// The publisher's time for its updates with regions (moving its region and
    /// committing before each update) over without.
    pub sender_time_ratio: f64,
}

impl BenchResult {
    /// A result with identity fields set and every figure zero.
    pub fn new(
        suite: &str,
        variant: &str,
        transport: &str,
        process_model: &str,
        wait: &str,
    ) -> Self {
        BenchResult {
            suite: suite.into(),
            variant: variant.into(),
            transport: transport.into(),
            process_model: process_model.into(),
            wait: wait.into(),
            size_bytes: 0,
            federates: 0,
            subscribers: 0,
            subscribers_in: None,
            count: 0,
            received: 0,
            lost: 0,
            duplicated: 0,
            order_violations: None,
            min_us: 0.0,
            p25_us: 0.0,
            p50_us: 0.0,
            p75_us: 0.0,
            p99_us: 0.0,
            p999_us: 0.0,
            max_us: 0.0,
            mean_us: 0.0,
            sd_us: 0.0,
            rate_per_s: 0.0,
            mbit_per_s: 0.0,
            total_rate_per_s: None,
            raw_p50_us: None,
            raw_p99_us: None,
            raw_rate_per_s: None,
            ratio_p50: None,
            ratio_p99: None,
            ratio_rate: None,
            elapsed_s: 0.0,
            samples_us: Vec::new(),
            ddm: None,
        }
    }

    /// Fills the latency columns from a summary in microseconds.
    pub fn set_latency(&mut self, s: &Summary) {
        self.min_us = s.min;
        self.p25_us = s.p25;
        self.p50_us = s.p50;
        self.p75_us = s.p75;
        self.p99_us = s.p99;
        self.p999_us = s.p999;
        self.max_us = s.max;
        self.mean_us = s.mean;
        self.sd_us = s.sd;
    }

    /// Fills the latency columns from a recorder of nanosecond samples.
    pub fn set_latency_ns(&mut self, ns: &Recorder) {
        if let Some(s) = ns.summary() {
            let us = |x: f64| x / 1000.0;
            self.set_latency(&Summary {
                count: s.count,
                min: us(s.min),
                p25: us(s.p25),
                p50: us(s.p50),
                p75: us(s.p75),
                p99: us(s.p99),
                p999: us(s.p999),
                max: us(s.max),
                mean: us(s.mean),
                sd: us(s.sd),
            });
        }
    }

    /// Records the raw peer's figures and the ratios to them.
    pub fn set_raw(&mut self, raw_p50_us: f64, raw_p99_us: f64, raw_rate_per_s: f64) {
        let ratio = |a: f64, b: f64| if b > 0.0 { Some(a / b) } else { None };
        self.raw_p50_us = Some(raw_p50_us);
        self.raw_p99_us = Some(raw_p99_us);
        self.raw_rate_per_s = Some(raw_rate_per_s);
        self.ratio_p50 = ratio(self.p50_us, raw_p50_us);
        self.ratio_p99 = ratio(self.p99_us, raw_p99_us);
        self.ratio_rate = ratio(self.rate_per_s, raw_rate_per_s);
    }
}
