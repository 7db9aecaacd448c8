//! The memorandum's own numbers (Tables 4.2, 4.3, 4.5, 4.7 and runs 1A, 2A, 4A),
//! printed under ours.

/// A row of the memorandum: Min, P25, P50, P75, Max, Mean, SD, Count.
pub(super) struct MemoRow {
    pub(super) label: &'static str,
    pub(super) cells: [f64; 7],
    pub(super) count: u64,
}

/// Table 4.2 of the memorandum.
pub(super) const MEMO_LENGTHS: MemoRow = MemoRow {
    label: "Lengths (memorandum)",
    cells: [193.0, 207.0, 210.0, 212.0, 219.0, 209.63, 3.15],
    count: 43_308_919,
};
pub(super) const MEMO_FREQUENCIES: MemoRow = MemoRow {
    label: "Frequencies (memorandum)",
    cells: [24.0, 247.0, 525.0, 704.0, 1779.0, 501.26, 281.79],
    count: 86_400,
};

/// Table 4.3 of the memorandum (whole milliseconds: its clocks had 1 ms resolution).
pub(super) const MEMO_LATENCY: [MemoRow; 4] = [
    MemoRow {
        label: "1A in-memory (memorandum)",
        cells: [0.0, 0.0, 0.0, 0.0, 70.0, 0.0113, 0.119],
        count: 43_308_919,
    },
    MemoRow {
        label: "2A ActiveMQ (memorandum)",
        cells: [0.0, 0.0, 0.0, 0.0, 38.0, 0.134, 0.342],
        count: 43_308_919,
    },
    MemoRow {
        label: "3A Basic (memorandum)",
        cells: [0.0, 5.0, 26.0, 27.0, 57.0, 19.7, 11.5],
        count: 43_304_541,
    },
    MemoRow {
        label: "4A NATS (memorandum)",
        cells: [0.0, 0.0, 1.0, 2.0, 139.0, 1.49, 3.144],
        count: 43_308_917,
    },
];

/// Table 4.5 of the memorandum, runs 1A and 4A, in the order of [`STATES`].
pub(super) const MEMO_DURATIONS_1A: [f64; 7] =
    [2.874, 1.534, 117.521, 663.702, 0.655, 9.403, 0.011];
pub(super) const MEMO_DURATIONS_4A: [f64; 7] =
    [3.374, 1.620, 108.598, 673.550, 0.281, 1.036, 0.009];

/// Messages and bytes of the memorandum's day (sections 4.1 and 4.4).
pub(super) const MEMO_MESSAGES: u64 = 43_308_919;
pub(super) const MEMO_BYTES: u64 = 9_078_643_231;
/// Figure 4.1(a): the most flights airborne in one second, and the first second it
/// was observed (section 4.1: at both 20:44:43Z and 20:44:44Z).
pub(super) const MEMO_PEAK_FLIGHTS: u64 = 4_744;
pub(super) const MEMO_PEAK_FLIGHTS_AT: &str = "2016-03-23T20:44:43Z";

/// One run of the memorandum for [`matrix_table`].
pub(super) struct MemoRun {
    pub(super) run: &'static str,
    pub(super) what: &'static str,
    pub(super) execution_s: f64,
    pub(super) throughput_mbit_s: f64,
    pub(super) latency_ms: [f64; 3], // P50, mean, max
    pub(super) received: u64,
}

pub(super) const MEMO_RUNS: [MemoRun; 3] = [
    MemoRun {
        run: "1A",
        what: "in-memory (Java calls)",
        execution_s: 663.702,
        throughput_mbit_s: 109.430,
        latency_ms: [0.0, 0.0113, 70.0],
        received: 43_308_919,
    },
    MemoRun {
        run: "2A",
        what: "ActiveMQ, compression + persistence",
        execution_s: 4786.092,
        throughput_mbit_s: 15.175,
        latency_ms: [0.0, 0.134, 38.0],
        received: 43_308_919,
    },
    MemoRun {
        run: "4A",
        what: "NATS",
        execution_s: 673.550,
        throughput_mbit_s: 107.831,
        latency_ms: [1.0, 1.49, 139.0],
        received: 43_308_917,
    },
];
