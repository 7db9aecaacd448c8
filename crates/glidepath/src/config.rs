//! Choosing the transport by configuration rather than by rebuilding.

use std::fmt;
use std::str::FromStr;

/// The environment variable [`RtiConfig::from_env`] reads the transport name from.
pub const TRANSPORT_ENV: &str = "GLIDEPATH_TRANSPORT";

/// The environment variable [`RtiConfig::from_env`] reads the NATS server URL from.
pub const NATS_URL_ENV: &str = "GLIDEPATH_NATS_URL";

/// Where the `nats` transport looks for a NATS server unless told otherwise: the
/// address `nats-server` listens on by default, on this host.
pub const DEFAULT_NATS_URL: &str = "nats://127.0.0.1:4222";

/// Which transport backend an [`crate::Rti`] uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransportKind {
    /// All federates in this process, envelopes moved, never serialised. The default,
    /// because it needs no server and is the fastest when everything fits one process.
    #[default]
    Inproc,
    /// Federates in any number of processes and hosts, connected through a NATS
    /// server ([`RtiConfig::nats_url`]) with a `glidepath server` hosting the
    /// federations. Built with the `transport-nats` feature (on by default).
    #[cfg(feature = "transport-nats")]
    Nats,
}

impl TransportKind {
    /// Every backend this build knows, by configuration name.
    pub const ALL: &'static [TransportKind] = &[
        TransportKind::Inproc,
        #[cfg(feature = "transport-nats")]
        TransportKind::Nats,
    ];

    /// The name used in configuration and in `GLIDEPATH_TRANSPORT`.
    pub fn name(self) -> &'static str {
        match self {
            TransportKind::Inproc => "inproc",
            #[cfg(feature = "transport-nats")]
            TransportKind::Nats => "nats",
        }
    }
}

impl fmt::Display for TransportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TransportKind {
    type Err = ConfigError;

    /// Parses a backend name, ignoring case and surrounding blanks.
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        let wanted = s.trim();
        TransportKind::ALL
            .iter()
            .copied()
            .find(|k| k.name().eq_ignore_ascii_case(wanted))
            .ok_or_else(|| ConfigError::UnknownTransport {
                name: s.to_string(),
                known: TransportKind::ALL
                    .iter()
                    .map(|k| k.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

/// A configuration value was not understood.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigError {
    /// The transport name names no backend of this build.
    #[error("unknown transport `{name}`; this build knows: {known}")]
    UnknownTransport {
        /// The name as given.
        name: String,
        /// The names this build accepts, comma-separated.
        known: String,
    },
    /// An environment variable was set to something that is not Unicode.
    #[error("environment variable {0} is not valid Unicode")]
    NotUnicode(&'static str),
    /// A command-line option was given without its value.
    #[error("option {0} needs a value")]
    MissingValue(&'static str),
    /// The configured transport cannot be used (for example, no NATS server answers).
    #[error("the {transport} transport is not available: {reason}")]
    Unavailable {
        /// The transport's configuration name.
        transport: &'static str,
        /// What went wrong, and what to do about it.
        reason: String,
    },
}

/// How to build an [`crate::Rti`]. Fields are public; start from [`RtiConfig::default`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RtiConfig {
    /// The transport backend. Default: [`TransportKind::Inproc`], the embedded bus,
    /// so a program with every federate in one process works with no setup.
    pub transport: TransportKind,
    /// The NATS server the `nats` transport connects to. Default
    /// [`DEFAULT_NATS_URL`], where a `nats-server` started with no options listens.
    /// Unused by other transports.
    pub nats_url: String,
}

impl Default for RtiConfig {
    fn default() -> Self {
        RtiConfig {
            transport: TransportKind::default(),
            nats_url: DEFAULT_NATS_URL.to_string(),
        }
    }
}

/// An environment variable's value; `None` when unset or blank.
fn env_value(name: &'static str) -> Result<Option<String>, ConfigError> {
    match std::env::var(name) {
        Ok(v) if !v.trim().is_empty() => Ok(Some(v.trim().to_string())),
        Ok(_) | Err(std::env::VarError::NotPresent) => Ok(None),
        Err(std::env::VarError::NotUnicode(_)) => Err(ConfigError::NotUnicode(name)),
    }
}

impl RtiConfig {
    /// The default configuration with overrides from the environment:
    /// `GLIDEPATH_TRANSPORT` and `GLIDEPATH_NATS_URL` (unset or empty keeps the default).
    pub fn from_env() -> Result<RtiConfig, ConfigError> {
        let mut config = RtiConfig::default();
        if let Some(v) = env_value(TRANSPORT_ENV)? {
            config.transport = v.parse()?;
        }
        if let Some(v) = env_value(NATS_URL_ENV)? {
            config.nats_url = v;
        }
        Ok(config)
    }

    /// [`RtiConfig::from_env`], then overrides from this program's command line:
    /// `--transport NAME` and `--nats-url URL` (also as `--transport=NAME`). Other
    /// arguments are left alone, so any program can offer these two without a parser.
    pub fn from_env_and_args() -> Result<RtiConfig, ConfigError> {
        let mut config = RtiConfig::from_env()?;
        config.apply_args(std::env::args().skip(1))?;
        Ok(config)
    }

    /// Applies `--transport NAME` and `--nats-url URL` from `args`, ignoring the rest.
    pub fn apply_args(
        &mut self,
        args: impl IntoIterator<Item = impl Into<String>>,
    ) -> Result<(), ConfigError> {
        let mut args = args.into_iter().map(Into::into);
        while let Some(arg) = args.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((f, v)) => (f.to_string(), Some(v.to_string())),
                None => (arg.clone(), None),
            };
            let flag: &'static str = match flag.as_str() {
                "--transport" => "--transport",
                "--nats-url" => "--nats-url",
                _ => continue,
            };
            let value = match inline.or_else(|| args.next()) {
                Some(v) if !v.trim().is_empty() => v,
                _ => return Err(ConfigError::MissingValue(flag)),
            };
            match flag {
                "--transport" => self.transport = value.parse()?,
                _ => self.nats_url = value.trim().to_string(),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transport_names_parse_case_insensitively() {
        assert_eq!("inproc".parse::<TransportKind>(), Ok(TransportKind::Inproc));
        assert_eq!(
            " InProc ".parse::<TransportKind>(),
            Ok(TransportKind::Inproc)
        );
        assert_eq!(TransportKind::Inproc.to_string(), "inproc");
        assert_eq!(RtiConfig::default().transport, TransportKind::Inproc);
    }

    #[test]
    fn unknown_transport_names_list_the_known_ones() {
        let e = "zmq".parse::<TransportKind>().unwrap_err();
        let known = TransportKind::ALL
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", ");
        assert_eq!(
            e,
            ConfigError::UnknownTransport {
                name: "zmq".into(),
                known: known.clone()
            }
        );
        assert_eq!(
            e.to_string(),
            format!("unknown transport `zmq`; this build knows: {known}")
        );
    }

    #[cfg(feature = "transport-nats")]
    #[test]
    fn nats_is_known_with_a_default_url() {
        assert_eq!(" NATS".parse::<TransportKind>(), Ok(TransportKind::Nats));
        assert_eq!(TransportKind::Nats.to_string(), "nats");
        assert_eq!(RtiConfig::default().nats_url, "nats://127.0.0.1:4222");
    }

    #[test]
    fn arguments_override_and_others_are_ignored() {
        let mut config = RtiConfig::default();
        config
            .apply_args([
                "--steps",
                "3",
                "--nats-url",
                "nats://h:1",
                "--transport=inproc",
                "x",
            ])
            .unwrap();
        assert_eq!(config.nats_url, "nats://h:1");
        assert_eq!(config.transport, TransportKind::Inproc);
        assert_eq!(
            config.apply_args(["--transport"]),
            Err(ConfigError::MissingValue("--transport"))
        );
        assert!(matches!(
            config.apply_args(["--transport", "pigeon"]),
            Err(ConfigError::UnknownTransport { .. })
        ));
    }
}
