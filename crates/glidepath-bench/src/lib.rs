//! The benchmark suite of `glidepath bench` (issue 4): the seed documents'
//! measurement procedures run against glidepath on any transport, each next to a raw
//! peer measured in the same run, with the ATM TestBed report's statistics.
//!
//! - [`harness`]: options, the running setup (RTI, NATS executive, federations),
//!   members that read callbacks the same way in both process models, raw peers.
//! - [`suites`]: latency, throughput, loopback, timeadv and fanout.
//! - [`bus`]: the formation-flying testbed bus's send, send-receive and throughput;
//!   [`bus_process`]: its subscribers as processes of their own (`--processes`).
//! - [`result`]: the result row, with the statistics of [`glidepath::stats`].
//! - [`output`]: the human table, the progress bar, JSON and plots.
//! - [`repeat`]: `--repeat N`, each run's ratio to the raw peer and their median.

pub mod bus;
pub mod bus_process;
pub mod bus_window;
pub mod harness;
pub mod output;
pub mod repeat;
pub mod result;
pub mod suites;

pub use harness::{Bench, BenchOptions, Member, NoProgress, Progress, TransportChoice};
pub use result::BenchResult;
