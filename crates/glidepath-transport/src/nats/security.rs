//! Secured connections: TLS and the NATS server's ways of authenticating a client
//! (user and password, token, NKey seed, a JWT `.creds` file).
//!
//! Secrets never print: [`Secret`] hides its value from `Debug`, and every URL that
//! reaches an error or a log line goes through [`redact_url`] first. Credentials in a
//! URL (`nats://USER:PASS@host:port`, `nats://TOKEN@host:port`, the NATS clients' own
//! convention) are taken out of it here and handed to the client as options: the
//! client we use does not read them from the URL itself.

use std::{fmt, path::PathBuf};

use async_nats::ConnectOptions;
use glidepath_core::{ConnectCause, TransportError};

/// A secret value (a password, a token, an NKey seed): compares and clones, but
/// `Debug` shows `***`.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    /// The value itself, for handing to the client. Never print it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(***)")
    }
}

/// How a client proves who it is to the NATS server.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum NatsAuth {
    /// No credentials (or only those in the URL).
    #[default]
    None,
    /// A user name and password (`authorization { users = [...] }`, or accounts).
    UserPassword {
        /// The user name.
        user: String,
        /// The password.
        password: Secret,
    },
    /// A token (`authorization { token = ... }`).
    Token(Secret),
    /// An NKey seed (`SU...`): the client signs the server's nonce with it.
    NKeySeed(Secret),
    /// A `.creds` file holding a user JWT and its NKey seed (decentralised
    /// authentication, operator mode).
    CredsFile(PathBuf),
}

impl NatsAuth {
    /// What kind of credential this is, for messages (never the value).
    pub fn kind(&self) -> &'static str {
        match self {
            NatsAuth::None => "none",
            NatsAuth::UserPassword { .. } => "user and password",
            NatsAuth::Token(_) => "token",
            NatsAuth::NKeySeed(_) => "NKey seed",
            NatsAuth::CredsFile(_) => "credentials file",
        }
    }
}

/// TLS towards the NATS server.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct NatsTls {
    /// A PEM file of the certificate authorities that sign the server's certificate.
    /// Given, TLS is required.
    pub ca_file: Option<PathBuf>,
    /// The client's own certificate (PEM), for servers that verify clients; needs
    /// [`NatsTls::key_file`].
    pub cert_file: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    pub key_file: Option<PathBuf>,
    /// Refuse to talk to a server that does not offer TLS (also implied by a CA, a
    /// client certificate or a `tls://` URL).
    pub required: bool,
}

/// TLS and authentication of every connection a transport opens. Default: neither,
/// as a `nats-server` started with no options expects.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct NatsSecurity {
    /// The credential.
    pub auth: NatsAuth,
    /// TLS settings.
    pub tls: NatsTls,
}

/// `url` (one URL or a comma-separated list) with every password or token replaced
/// by `***`, for messages and logs.
pub fn redact_url(url: &str) -> String {
    url.split(',')
        .map(|one| {
            let one = one.trim();
            let rest_start = one.find("://").map_or(0, |i| i + 3);
            let (scheme, rest) = one.split_at(rest_start);
            let authority_end = rest.find('/').unwrap_or(rest.len());
            match rest[..authority_end].rfind('@') {
                Some(at) => {
                    let userinfo = &rest[..at];
                    let shown = match userinfo.split_once(':') {
                        Some((user, _)) => format!("{user}:***"),
                        None => "***".to_string(),
                    };
                    format!("{scheme}{shown}{}", &rest[at..])
                }
                None => one.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Splits credentials out of a server list: the URLs without them, and what they
/// carried (`USER:PASS@` a user and password, `TOKEN@` a token). Every URL of the
/// list that carries credentials must carry the same ones.
pub fn split_url_credentials(url: &str) -> Result<(Vec<String>, NatsAuth), TransportError> {
    let mut found = NatsAuth::None;
    let mut plain = Vec::new();
    for one in url.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let with_scheme = if one.contains("://") {
            one.to_string()
        } else {
            format!("nats://{one}")
        };
        let mut parsed =
            url::Url::parse(&with_scheme).map_err(|e| TransportError::ConnectFailed {
                url: redact_url(one),
                cause: ConnectCause::InvalidAddress,
                reason: e.to_string(),
            })?;
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        };
        let auth = match (parsed.username(), parsed.password()) {
            ("", None) => NatsAuth::None,
            (user, Some(pass)) => NatsAuth::UserPassword {
                user: decode(user),
                password: Secret::new(decode(pass)),
            },
            (token, None) => NatsAuth::Token(Secret::new(decode(token))),
        };
        if auth != NatsAuth::None {
            if found != NatsAuth::None && found != auth {
                return Err(TransportError::InvalidConfiguration(format!(
                    "the NATS server list {} carries different credentials in different URLs",
                    redact_url(url)
                )));
            }
            found = auth;
            // Cannot fail on a URL that has a host.
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
        }
        plain.push(parsed.to_string().trim_end_matches('/').to_string());
    }
    if plain.is_empty() {
        return Err(TransportError::ConnectFailed {
            url: String::new(),
            cause: ConnectCause::InvalidAddress,
            reason: "no NATS server URL given".into(),
        });
    }
    Ok((plain, found))
}

fn readable(what: &str, path: &PathBuf) -> Result<(), TransportError> {
    std::fs::metadata(path).map(|_| ()).map_err(|e| {
        TransportError::InvalidConfiguration(format!(
            "the NATS {what} `{}` cannot be read: {e}",
            path.display()
        ))
    })
}

impl NatsSecurity {
    /// Whether anything is configured.
    pub fn is_set(&self) -> bool {
        *self != NatsSecurity::default()
    }

    /// Applies TLS and the credential to `options` for connecting to `url`, and
    /// returns them with the server list to connect to (credentials taken out of the
    /// URLs and applied unless a credential is configured here as well, which is
    /// refused as ambiguous). Files are checked now, so a missing one is named.
    pub async fn configure(
        &self,
        mut options: ConnectOptions,
        url: &str,
    ) -> Result<(ConnectOptions, Vec<String>), TransportError> {
        let (servers, in_url) = split_url_credentials(url)?;
        let auth = match (&self.auth, in_url) {
            (NatsAuth::None, a) => a,
            (a, NatsAuth::None) => a.clone(),
            (a, b) => {
                return Err(TransportError::InvalidConfiguration(format!(
                    "credentials both in the NATS URL ({}) and configured ({}): give one",
                    b.kind(),
                    a.kind()
                )))
            }
        };
        options = match auth {
            NatsAuth::None => options,
            NatsAuth::UserPassword { user, password } => {
                options.user_and_password(user, password.expose().to_string())
            }
            NatsAuth::Token(token) => options.token(token.expose().to_string()),
            NatsAuth::NKeySeed(seed) => {
                nkeys::KeyPair::from_seed(seed.expose().trim()).map_err(|e| {
                    TransportError::InvalidConfiguration(format!(
                        "the NKey seed is not usable: {e}"
                    ))
                })?;
                options.nkey(seed.expose().trim().to_string())
            }
            NatsAuth::CredsFile(path) => {
                readable("credentials file", &path)?;
                options.credentials_file(&path).await.map_err(|e| {
                    TransportError::InvalidConfiguration(format!(
                        "the NATS credentials file `{}` is not usable: {e}",
                        path.display()
                    ))
                })?
            }
        };
        let tls = &self.tls;
        if let Some(ca) = &tls.ca_file {
            readable("CA file", ca)?;
            options = options.add_root_certificates(ca.clone());
        }
        match (&tls.cert_file, &tls.key_file) {
            (Some(cert), Some(key)) => {
                readable("client certificate", cert)?;
                readable("client key", key)?;
                options = options.add_client_certificate(cert.clone(), key.clone());
            }
            (None, None) => {}
            _ => {
                return Err(TransportError::InvalidConfiguration(
                    "a NATS client certificate needs both the certificate and its key".into(),
                ))
            }
        }
        if tls.required || tls.ca_file.is_some() || tls.cert_file.is_some() {
            options = options.require_tls(true);
        }
        Ok((options, servers))
    }
}

/// The [`TransportError`] of a failed connection, with its cause told apart.
pub(crate) fn connect_error(url: &str, e: async_nats::ConnectError) -> TransportError {
    use async_nats::ConnectErrorKind as K;
    let cause = match e.kind() {
        K::AuthorizationViolation => ConnectCause::Authorization,
        K::Authentication => ConnectCause::Authentication,
        K::Tls => ConnectCause::Tls,
        K::ServerParse => ConnectCause::InvalidAddress,
        K::Dns | K::TimedOut | K::Io | K::MaxReconnects => ConnectCause::Unreachable,
    };
    let mut reason = e.to_string();
    // A server that refuses our certificate ends the handshake with a TLS alert
    // ("received fatal alert: CertificateExpired"), which the client reports as I/O.
    let lower = reason.to_ascii_lowercase();
    if cause == ConnectCause::Unreachable
        && (lower.contains("tls") || lower.contains("certificate") || lower.contains("alert"))
    {
        return TransportError::ConnectFailed {
            url: redact_url(url),
            cause: ConnectCause::Tls,
            reason,
        };
    }
    if reason.is_empty() {
        reason = format!("{:?}", e.kind());
    }
    TransportError::ConnectFailed {
        url: redact_url(url),
        cause,
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_hides_passwords_and_tokens_in_every_url() {
        assert_eq!(
            redact_url("nats://alice:s3cret@127.0.0.1:4222"),
            "nats://alice:***@127.0.0.1:4222"
        );
        assert_eq!(
            redact_url("tok3n@host:1,nats://h2:2"),
            "***@host:1,nats://h2:2"
        );
        assert_eq!(redact_url("nats://127.0.0.1:4222"), "nats://127.0.0.1:4222");
        assert!(!format!("{:?}", Secret::new("s3cret")).contains("s3cret"));
    }

    #[test]
    fn credentials_come_out_of_the_urls() {
        let (servers, auth) = split_url_credentials(
            "nats://al%40ice:p%3Ass@127.0.0.1:4222, nats://al%40ice:p%3Ass@127.0.0.1:4223",
        )
        .unwrap();
        assert_eq!(servers, ["nats://127.0.0.1:4222", "nats://127.0.0.1:4223"]);
        assert_eq!(
            auth,
            NatsAuth::UserPassword {
                user: "al@ice".into(),
                password: Secret::new("p:ss")
            }
        );
        let (servers, auth) = split_url_credentials("tok@127.0.0.1:4222").unwrap();
        assert_eq!(servers, ["nats://127.0.0.1:4222"]);
        assert_eq!(auth, NatsAuth::Token(Secret::new("tok")));
        let e = split_url_credentials("nats://a:b@h:1,nats://c:d@h:2").unwrap_err();
        assert!(
            !e.to_string().contains('b') || !e.to_string().contains(":b@"),
            "{e}"
        );
        assert!(e.to_string().contains("different credentials"), "{e}");
    }
}
