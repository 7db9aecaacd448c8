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
    /// No process hosts the shared-memory system (or its host died).
    #[error(
        "no process hosts the shared-memory system `{name}` (files in {dir}): start one with `glidepath server --transport shm --shm-name {name}`"
    )]
    NoShmHost {
        /// The system's name.
        name: String,
        /// The directory of its files.
        dir: String,
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
    /// No connection to the messaging server: nothing answered, or it refused us.
    #[error("{}", connect_failed_text(url, *cause, reason))]
    ConnectFailed {
        /// The URL tried, any password or token in it masked.
        url: String,
        /// Why, as far as the client can tell.
        cause: ConnectCause,
        /// The client's explanation.
        reason: String,
    },
    /// The messaging server refused a publication or subscription: the connection's
    /// permissions do not allow the subject.
    #[error("the NATS server refused an operation for this connection's permissions: {detail} (see docs/security.md for the subjects each role needs)")]
    PermissionDenied {
        /// The server's words (the operation and subject).
        detail: String,
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

/// Why a connection to the messaging server failed: each asks for a different fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConnectCause {
    /// Nothing answered (refused, timed out, name not found).
    Unreachable,
    /// The server answered and refused our credentials: "authorization violation".
    Authorization,
    /// Our credential could not be used to sign in (a bad NKey seed or `.creds`).
    Authentication,
    /// TLS failed: the server's certificate is not trusted, ours was refused, or one
    /// side wants TLS and the other does not.
    Tls,
    /// The URL itself is not a server address.
    InvalidAddress,
}

fn connect_failed_text(url: &str, cause: ConnectCause, reason: &str) -> String {
    match cause {
        ConnectCause::Unreachable => format!(
            "cannot connect to the NATS server at {url}: {reason} (is `nats-server` running there?)"
        ),
        ConnectCause::Authorization => format!(
            "the NATS server at {url} refused the connection: authorization ({reason}); \
             check the user and password, token, NKey or credentials file"
        ),
        ConnectCause::Authentication => format!(
            "could not authenticate to the NATS server at {url}: {reason}; \
             the NKey seed or credentials file is not usable"
        ),
        ConnectCause::Tls => format!(
            "TLS with the NATS server at {url} failed: {reason}; check the CA file, \
             the client certificate and key, and whether the server expects TLS"
        ),
        ConnectCause::InvalidAddress => format!("`{url}` is not a NATS server address: {reason}"),
    }
}
