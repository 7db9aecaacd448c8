//! Choosing the transport by configuration rather than by rebuilding.

use std::fmt;
use std::str::FromStr;

/// The environment variable [`RtiConfig::from_env`] reads the transport name from.
pub const TRANSPORT_ENV: &str = "GLIDEPATH_TRANSPORT";

/// Which transport backend an [`crate::Rti`] uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum TransportKind {
    /// All federates in this process, envelopes moved, never serialised. The default,
    /// because it needs no server and is the fastest when everything fits one process.
    #[default]
    Inproc,
}

impl TransportKind {
    /// Every backend this build knows, by configuration name.
    pub const ALL: &'static [TransportKind] = &[TransportKind::Inproc];

    /// The name used in configuration and in `GLIDEPATH_TRANSPORT`.
    pub fn name(self) -> &'static str {
        match self {
            TransportKind::Inproc => "inproc",
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
}

/// How to build an [`crate::Rti`]. Fields are public; start from [`RtiConfig::default`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RtiConfig {
    /// The transport backend. Default: [`TransportKind::Inproc`], the embedded bus,
    /// so a program with every federate in one process works with no setup.
    pub transport: TransportKind,
}

impl RtiConfig {
    /// The default configuration with overrides from the environment:
    /// `GLIDEPATH_TRANSPORT` (unset or empty keeps the default).
    pub fn from_env() -> Result<RtiConfig, ConfigError> {
        let mut config = RtiConfig::default();
        match std::env::var(TRANSPORT_ENV) {
            Ok(v) if !v.trim().is_empty() => config.transport = v.parse()?,
            Ok(_) | Err(std::env::VarError::NotPresent) => {}
            Err(std::env::VarError::NotUnicode(_)) => {
                return Err(ConfigError::NotUnicode(TRANSPORT_ENV))
            }
        }
        Ok(config)
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
        let e = "nats".parse::<TransportKind>().unwrap_err();
        assert_eq!(
            e,
            ConfigError::UnknownTransport {
                name: "nats".into(),
                known: "inproc".into()
            }
        );
        assert_eq!(
            e.to_string(),
            "unknown transport `nats`; this build knows: inproc"
        );
    }
}
