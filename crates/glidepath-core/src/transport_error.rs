//! `TransportError`: why a transport operation failed, one variant per situation a
//! caller may want to tell apart (defined here, beside `RtiError`, which carries it;
//! re-exported by `glidepath-transport`, whose `Endpoint` methods return it).

use std::time::Duration;

use thiserror::Error;

/// Why a transport operation failed.
///
/// Match the variant, never the text: the texts say what failed and where (URL,
/// subject, size) for people reading a log.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum TransportError {
    /// The endpoint was closed; it can do nothing more.
    #[error("the endpoint is closed")]
    Closed,
    /// The executive did not answer in time.
    #[error("no answer from the executive within {0:?}")]
    Timeout(Duration),
    /// An executive already answers requests where this one was to be hosted.
    #[error("another executive server already answers on `{subject}` at {url}")]
    ExecutiveAlreadyHosted {
        /// The messaging server's URL.
        url: String,
        /// The subject the other executive answers on.
        subject: String,
    },
    /// No executive answers requests.
    #[error(
        "no executive server answers on `{subject}` at {url}: start one with `glidepath server --nats-url {url}`"
    )]
    NoExecutive {
        /// The messaging server's URL.
        url: String,
        /// The subject requests were sent on.
        subject: String,
    },
    /// The executive received the request but could not answer it; `message` is its
    /// own explanation.
    #[error("the executive server could not answer: {message}")]
    ExecutiveFailed {
        /// What the executive said.
        message: String,
    },
    /// The executive's reply could not be read (`what` says how), or was not the
    /// kind of reply the request expects.
    #[error("{what} reply from the executive server: {reason}")]
    UnexpectedReply {
        /// `"unreadable"` (the encoder chain refused it), `"undecodable"`, ...
        what: &'static str,
        /// Why.
        reason: String,
    },
    /// A message is larger than the messaging server accepts.
    #[error(
        "the {what} exceeds the NATS server's max_payload ({max_payload_bytes} bytes); raise `max_payload` in the server's configuration"
    )]
    PayloadTooLarge {
        /// What was too large (`"request"`, `"message"`).
        what: &'static str,
        /// The server's limit.
        max_payload_bytes: usize,
    },
    /// The messaging server could not be reached.
    #[error(
        "cannot connect to the NATS server at {url}: {reason} (is `nats-server` running there?)"
    )]
    ConnectFailed {
        /// The URL tried.
        url: String,
        /// The client's explanation.
        reason: String,
    },
    /// An operation on an established connection failed (the connection was lost,
    /// the client's queue refused it, ...).
    #[error("{operation} failed: {reason}")]
    ConnectionFailed {
        /// What was attempted: `"publish"`, `"subscribe"`, `"request to the executive"`,
        /// `"round trip through the NATS server"`, ...
        operation: &'static str,
        /// The client's explanation.
        reason: String,
    },
    /// A frame of the encoder chain could not be made or read (for example it failed
    /// authentication with the federation key).
    #[error("{what}: {reason}")]
    Codec {
        /// What the chain was doing.
        what: &'static str,
        /// The codec's explanation.
        reason: String,
    },
    /// The configuration asks for something the backend cannot do.
    #[error("{0}")]
    InvalidConfiguration(String),
    /// Persistence is configured but the messaging server offers none.
    #[error(
        "persistence is `jetstream` but the NATS server offers no JetStream ({reason}): start it with `nats-server --jetstream --store_dir DIR`"
    )]
    PersistenceUnavailable {
        /// The server's answer.
        reason: String,
    },
    /// A federation has no stream to read or replay.
    #[error(
        "no JetStream stream `{stream}` ({reason}): does the executive server run with persistence `jetstream`?"
    )]
    StreamNotFound {
        /// The stream's name.
        stream: String,
        /// The server's answer.
        reason: String,
    },
    /// An operation of persistence (JetStream) failed.
    #[error("{operation} failed: {reason}")]
    PersistenceFailed {
        /// What was attempted, naming the stream when there is one.
        operation: String,
        /// The server's or client's explanation.
        reason: String,
    },
    /// The operating system refused a thread or a runtime.
    #[error("cannot start {what}: {reason}")]
    Io {
        /// What could not be started.
        what: &'static str,
        /// The operating system's explanation.
        reason: String,
    },
    /// A backend failure no other variant names; the text says what and where.
    #[error("transport backend failure: {0}")]
    Backend(String),
}
