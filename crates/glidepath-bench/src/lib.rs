//! The benchmark suite's building blocks. Today: the statistics of the ATM TestBed
//! report (section 4.1), so every suite reports distributions the same way the papers
//! do. The suites themselves (latency, throughput, loopback, timeadv, fanout) follow.

pub mod result;
pub mod stats;
