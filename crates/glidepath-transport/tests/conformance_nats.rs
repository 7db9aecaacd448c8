//! The transport conformance suite run against the `nats` backend, with a real
//! `nats-server` and an in-process executive server started by each test.
//!
//! Without `nats-server` (on PATH or in GLIDEPATH_NATS_SERVER) these tests fail and
//! say how to install it: `bash scripts/test.sh`.

use glidepath_transport::nats::{
    serve_executive_with, NatsOptions, NatsServerProcess, NatsTestbed,
};
use glidepath_transport::{conformance, NatsTransport, Transport};

/// A fresh NATS server, executive server and transport; dropped in reverse order.
struct Fixture {
    transport: NatsTransport,
    _testbed: NatsTestbed,
}

/// A fixture whose executive server and transport both use `options`.
fn fixture_with(options: NatsOptions) -> Fixture {
    let server = NatsServerProcess::start().unwrap_or_else(|e| panic!("{e}"));
    let executive = serve_executive_with(&server.url(), options.clone()).unwrap();
    let testbed = NatsTestbed { executive, server };
    let transport = NatsTransport::connect_with(&testbed.url(), options)
        .unwrap_or_else(|e| panic!("connecting to {}: {e}", testbed.url()));
    Fixture {
        transport,
        _testbed: testbed,
    }
}

fn fixture() -> Fixture {
    fixture_with(NatsOptions::default())
}

glidepath_transport::conformance_tests!(fixture, many = 200_000);

#[test]
fn run_all_on_one_shared_server() {
    let f = fixture();
    conformance::run_all(&f.transport);
    assert_eq!(f.transport.name(), "nats");
}

/// The same suite with the whole encoder chain and bundling on: lz4 (on everything
/// from 16 bytes, so most envelopes really are compressed), a federation key (the
/// executive server has it too) and 16 KiB / 1 ms bundles. It passes unchanged:
/// bundling keeps per-sender FIFO across topics, and frames hide nothing the
/// contract needs.
mod with_lz4_key_and_bundling {
    use glidepath_transport::nats::{
        BundleConfig, ChainConfig, Compression, FederationKey, MessagingOptions, NatsOptions,
    };
    use glidepath_transport::{conformance, Transport};

    fn options() -> NatsOptions {
        NatsOptions {
            messaging: MessagingOptions {
                chain: ChainConfig {
                    compression: Compression::Lz4,
                    compress_bytes_min: 16,
                    key: Some(FederationKey::from_bytes([7; 32])),
                    ..ChainConfig::default()
                },
                bundle: BundleConfig {
                    bundle_bytes_max: 16 << 10,
                    bundle_time_ns_max: 1_000_000,
                },
                ..MessagingOptions::default()
            },
            ..NatsOptions::default()
        }
    }

    fn fixture() -> super::Fixture {
        super::fixture_with(options())
    }

    glidepath_transport::conformance_tests!(fixture, many = 200_000);

    #[test]
    fn run_all_on_one_shared_server() {
        let f = fixture();
        conformance::run_all(&f.transport);
        assert_eq!(f.transport.name(), "nats");
    }
}
