//! The network laboratory (`glidepath netlab`): two "hosts" as Linux network
//! namespaces joined by a veth pair, an emulated link between them (bandwidth per
//! direction, one-way delay, full or half duplex), federates running in them over a
//! `nats-server` on the first host, and the JAXA report's experiments (seed 002:
//! formula (1), its α and β, Fig. 8, Table 3) rerun across that link.
//!
//! - [`lab`]: the namespaces, the veth pair, the kernel shaper (`tc tbf`, and an
//!   `ifb` for half duplex), the processes started in them, and their removal, also
//!   after a crash (stale namespaces are found by the dead process id in their name).
//! - [`link`]: the user-space link emulator. The kernel's `netem` is not available on
//!   the machines this runs on, so delay (and, by default, bandwidth) is emulated by
//!   a TCP relay that models a serial line exactly.
//! - [`peer`]: the benchmark federates (the report's Fig. 3 program), run as
//!   processes inside the namespaces by `glidepath netlab peer`.
//! - [`experiment`]: one measured point (start the server and the peers, collect).
//! - [`fit`]: formula (1)'s α and β, by the report's crossing points and by least
//!   squares, with R² and residuals.
//! - [`grid`] and [`report`]: the grids (quick, full), the tables and figures.
//!
//! Linux only, and root only (namespaces and `tc` need `CAP_NET_ADMIN`).

pub mod experiment;
pub mod fit;
pub mod grid;
pub mod lab;
pub mod link;
pub mod peer;
pub mod report;
