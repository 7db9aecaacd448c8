//! Hosting the executive for the `nats` transport and reading back a kept run: what
//! `glidepath server`, `glidepath replay`, the ATM runs and the benchmarks call,
//! configured by an [`RtiConfig`] instead of the backend's own options.

use glidepath_core::FederationId;
use glidepath_transport::nats::{self, ExecutiveServer, Replay};
use glidepath_transport::TransportError;

use crate::config::RtiConfig;
use crate::BundleConfig;

/// The subject the executive server answers requests on (for messages to people;
/// clients never need it).
pub const EXECUTIVE_SUBJECT: &str = nats::subject::EXEC_SUBJECT;

/// Starts the executive server on `config.nats_url` with the configuration's encoder
/// chain (its federation key, if any, is then required of every request) and
/// persistence. Returns once it answers requests; it stops when dropped.
///
/// Fails with [`TransportError::ExecutiveAlreadyHosted`] when another executive
/// already answers there (run exactly one per NATS system).
pub fn serve_executive(config: &RtiConfig) -> Result<ExecutiveServer, TransportError> {
    nats::serve_executive_with(&config.nats_url, executive_options(config))
}

/// [`serve_executive`] unless an executive already answers on `config.nats_url`:
/// `None` when one does (a `glidepath server`, or another run's), so a program can
/// bring its own executive when it needs one.
pub fn ensure_executive(config: &RtiConfig) -> Result<Option<ExecutiveServer>, TransportError> {
    match serve_executive(config) {
        Ok(server) => Ok(Some(server)),
        Err(TransportError::ExecutiveAlreadyHosted { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Reads federation `federation`'s JetStream stream on `config.nats_url` from stream
/// sequence `from_sequence` (1 for the beginning) to its end at the time of the
/// call, opening frames with the configuration's encoder chain (the run's key).
pub fn replay(
    config: &RtiConfig,
    federation: FederationId,
    from_sequence: u64,
) -> Result<Replay, TransportError> {
    let options = glidepath_transport::NatsOptions {
        messaging: nats::MessagingOptions {
            chain: config.chain.clone(),
            ..Default::default()
        },
        security: config.nats_security.clone(),
        ..Default::default()
    };
    nats::replay(&config.nats_url, federation, from_sequence, &options)
}

/// The executive server's options: the configuration's, with bundling at its
/// default, since the executive publishes only notifications, which never wait in a
/// bundle (and its options must not depend on the run's bundling flags).
fn executive_options(config: &RtiConfig) -> glidepath_transport::NatsOptions {
    let mut options = config.nats_options();
    options.messaging.bundle = BundleConfig::default();
    options
}
