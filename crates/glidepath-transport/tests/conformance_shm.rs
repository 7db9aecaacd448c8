//! The transport conformance suite run against the `shm` backend: every endpoint here
//! lives in this process, but each one's envelopes still go through its ring in
//! shared memory, encoded, exactly as between processes. `tests/shm_processes.rs`
//! crosses real process boundaries.

use glidepath_transport::{conformance, ShmOptions, ShmTransport, Transport};

/// A fresh system (its own name) hosted by this process for each check.
struct Fixture {
    transport: ShmTransport,
}

fn fixture() -> Fixture {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let name = format!(
        "conf-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    Fixture {
        transport: ShmTransport::host(&name, ShmOptions::default())
            .unwrap_or_else(|e| panic!("{e}")),
    }
}

glidepath_transport::conformance_tests!(fixture, many = 200_000);

#[test]
fn run_all_on_one_shared_system() {
    let t = fixture().transport;
    conformance::run_all(&t);
    assert_eq!(t.name(), "shm");
}
