//! Choosing the transport by configuration rather than by rebuilding.

use std::fmt;
use std::str::FromStr;

use glidepath_codec::{BundleConfig, ChainConfig, Compression, FederationKey};

#[cfg(feature = "transport-nats")]
mod security;
#[cfg(feature = "transport-nats")]
pub use security::{
    NATS_CA_ENV, NATS_CERT_ENV, NATS_CREDS_ENV, NATS_KEY_ENV, NATS_NKEY_ENV, NATS_NKEY_FILE_ENV,
    NATS_PASSWORD_ENV, NATS_PASSWORD_FILE_ENV, NATS_TOKEN_ENV, NATS_TOKEN_FILE_ENV,
    NATS_URL_FILE_ENV, NATS_USER_ENV,
};

/// The environment variable [`RtiConfig::from_env`] reads the transport name from.
pub const TRANSPORT_ENV: &str = "GLIDEPATH_TRANSPORT";

/// The environment variable [`RtiConfig::from_env`] reads the NATS server URL from.
pub const NATS_URL_ENV: &str = "GLIDEPATH_NATS_URL";

/// The environment variable for [`RtiConfig::chain`]'s compression: `none`, `lz4`,
/// `zstd` or `zstd:LEVEL` (flag `--compression`).
pub const COMPRESSION_ENV: &str = "GLIDEPATH_COMPRESSION";

/// The environment variable for the size below which nothing is compressed, in
/// bytes (flag `--compress-min-bytes`).
pub const COMPRESS_MIN_BYTES_ENV: &str = "GLIDEPATH_COMPRESS_MIN_BYTES";

/// The environment variable naming a file that holds the federation key as 64 hex
/// digits (flag `--key-file`).
pub const KEY_FILE_ENV: &str = "GLIDEPATH_KEY_FILE";

/// The environment variable for [`BundleConfig::bundle_bytes_max`]; 0 turns bundling
/// off (flag `--bundle-bytes`).
pub const BUNDLE_BYTES_ENV: &str = "GLIDEPATH_BUNDLE_BYTES";

/// The environment variable for [`BundleConfig::bundle_time_ns_max`], in
/// microseconds (flag `--bundle-time-us`).
pub const BUNDLE_TIME_US_ENV: &str = "GLIDEPATH_BUNDLE_TIME_US";

/// The environment variable for [`RtiConfig::persistence`]: `none` or `jetstream`
/// (flag `--persistence`).
#[cfg(feature = "transport-nats")]
pub const PERSISTENCE_ENV: &str = "GLIDEPATH_PERSISTENCE";

/// The environment variable for [`RtiConfig::reliable_window_envelopes`] (flag
/// `--reliable-window`): envelopes a sender may run ahead of its slowest receiver over
/// core NATS; 0 turns acknowledgements and retransmission off.
#[cfg(feature = "transport-nats")]
pub const RELIABLE_WINDOW_ENV: &str = "GLIDEPATH_RELIABLE_WINDOW";

/// The environment variable for [`RtiConfig::request_timeout`] (flag
/// `--request-timeout-ms`): how long a request to the executive (and a closing
/// endpoint's wait for acknowledgements) may take, in milliseconds.
#[cfg(feature = "transport-nats")]
pub const REQUEST_TIMEOUT_MS_ENV: &str = "GLIDEPATH_REQUEST_TIMEOUT_MS";

/// The environment variable for [`RtiConfig::stream_replicas`] (flag
/// `--stream-replicas`): copies of each federation's JetStream stream in a cluster.
#[cfg(feature = "transport-nats")]
pub const STREAM_REPLICAS_ENV: &str = "GLIDEPATH_STREAM_REPLICAS";

/// The environment variable for [`RtiConfig::ddm_cells`] (flag `--ddm-cells`).
#[cfg(feature = "transport-nats")]
pub const DDM_CELLS_ENV: &str = "GLIDEPATH_DDM_CELLS";

/// The environment variable for [`RtiConfig::ddm_dimensions`] (flag
/// `--ddm-dimensions`, names separated by commas).
#[cfg(feature = "transport-nats")]
pub const DDM_DIMENSIONS_ENV: &str = "GLIDEPATH_DDM_DIMENSIONS";

/// The environment variable for [`RtiConfig::shm_name`] (flag `--shm-name`).
#[cfg(all(feature = "transport-shm", target_os = "linux"))]
pub const SHM_NAME_ENV: &str = "GLIDEPATH_SHM_NAME";

/// The environment variable for [`RtiConfig::shm_ring_bytes`] (flag `--shm-ring-bytes`).
#[cfg(all(feature = "transport-shm", target_os = "linux"))]
pub const SHM_RING_BYTES_ENV: &str = "GLIDEPATH_SHM_RING_BYTES";

/// The environment variable for [`RtiConfig::save_dir`] (flag `--save-dir`).
pub const SAVE_DIR_ENV: &str = "GLIDEPATH_SAVE_DIR";

/// Where the `inproc` transport keeps federation saves unless told otherwise, relative
/// to the working directory.
pub const DEFAULT_SAVE_DIR: &str = "glidepath-saves";

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
    /// Federates in separate processes of one host, through shared memory
    /// ([`RtiConfig::shm_name`]), with a `glidepath server --transport shm` hosting
    /// the federations. Linux, built with the `transport-shm` feature (on by default).
    #[cfg(all(feature = "transport-shm", target_os = "linux"))]
    Shm,
}

impl TransportKind {
    /// Every backend this build knows, by configuration name.
    pub const ALL: &'static [TransportKind] = &[
        TransportKind::Inproc,
        #[cfg(feature = "transport-nats")]
        TransportKind::Nats,
        #[cfg(all(feature = "transport-shm", target_os = "linux"))]
        TransportKind::Shm,
    ];

    /// The name used in configuration and in `GLIDEPATH_TRANSPORT`.
    pub fn name(self) -> &'static str {
        match self {
            TransportKind::Inproc => "inproc",
            #[cfg(feature = "transport-nats")]
            TransportKind::Nats => "nats",
            #[cfg(all(feature = "transport-shm", target_os = "linux"))]
            TransportKind::Shm => "shm",
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
    /// A setting has a value that cannot be used.
    #[error("invalid value `{value}` for {setting}: {reason}")]
    InvalidValue {
        /// The flag or environment variable, as the user wrote it.
        setting: &'static str,
        /// The value given.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
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
/// `Debug` masks a password or token in the NATS URL, and never shows a secret.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct RtiConfig {
    /// The transport backend. Default: [`TransportKind::Inproc`], the embedded bus,
    /// so a program with every federate in one process works with no setup.
    pub transport: TransportKind,
    /// The NATS server the `nats` transport connects to. Default
    /// [`DEFAULT_NATS_URL`], where a `nats-server` started with no options listens.
    /// Unused by other transports.
    pub nats_url: String,
    /// The encoder chain: compression (and its threshold) and the federation key.
    /// Default: none of them, so envelopes travel as they are. The `inproc`
    /// transport never serialises, so it accepts and ignores this.
    pub chain: ChainConfig,
    /// Bundling of small messages. Default: see [`BundleConfig`]'s default. Ignored
    /// by `inproc`, which moves envelopes without serialising them.
    pub bundle: BundleConfig,
    /// Where the `inproc` transport keeps federation saves (one file per save,
    /// `DIR/FEDERATION/LABEL.gpsave`). Default [`DEFAULT_SAVE_DIR`] under the working
    /// directory, so a save outlives the process with no setup.
    pub save_dir: std::path::PathBuf,
    /// The shared-memory system the `shm` transport joins (its files are
    /// `/dev/shm/glidepath-NAME.*`). Default `glidepath`.
    pub shm_name: String,
    /// Bytes of each `shm` endpoint's inbound ring (a power of two; the largest
    /// message is a quarter of it). Default 8 MiB.
    pub shm_ring_bytes: usize,
    /// Whether the `nats` transport keeps federations' messages in JetStream
    /// (`glidepath server` creates a stream per federation; see
    /// `glidepath_transport::nats::Persistence`). Default none: core NATS needs no
    /// JetStream-enabled server.
    #[cfg(feature = "transport-nats")]
    pub persistence: glidepath_transport::nats::Persistence,
    /// Reliable delivery over core NATS: how many envelopes a sender may publish
    /// beyond what its slowest receiver acknowledged before `publish` waits
    /// (`glidepath_transport::nats::flow`). Default 16,384; 0 turns acknowledgements
    /// and retransmission off (plain at-most-once core NATS, gaps only counted).
    #[cfg(feature = "transport-nats")]
    pub reliable_window_envelopes: usize,
    /// How long a request to the executive may take before it fails, and how long
    /// a closing endpoint waits for its receivers' acknowledgements. Default 10 s;
    /// a federate behind a slow link, whose replies queue behind its data (a
    /// 128 kbit/s line carries 160 KB in 10 s), needs more.
    #[cfg(feature = "transport-nats")]
    pub request_timeout: std::time::Duration,
    /// The copies a NATS cluster keeps of what the executive server puts in
    /// JetStream: each federation's stream with JetStream persistence, and the
    /// object store bucket of federation saves when the server creates it (1 to 5;
    /// the executive server creates them, so it is the executive's setting that
    /// counts). Default 1.
    #[cfg(feature = "transport-nats")]
    pub stream_replicas: usize,
    /// Data distribution management on the NATS wire: slices per axis of each
    /// federation's cell grid (`glidepath_transport::nats::cells`); updates and
    /// interactions with regions travel on their cells' subjects, and a subscriber
    /// reads only the cells its regions cover. Every process of a federation must use
    /// the same grid. Default 8; 0 sends everything on the topics' subjects.
    #[cfg(feature = "transport-nats")]
    pub ddm_cells: u32,
    /// The dimensions the cell grid is cut along, by name (at most three); empty, the
    /// default, takes the FOM's first two non-`HLA` dimensions.
    #[cfg(feature = "transport-nats")]
    pub ddm_dimensions: Vec<String>,
    /// For `glidepath server`: run as one of several executive servers with failover
    /// (a request log and a lease in JetStream, kept `stream_replicas` times; a
    /// standby takes over when the active server dies). Default off.
    #[cfg(feature = "transport-nats")]
    pub executive_failover: bool,
    /// With `executive_failover`: requests logged between two snapshots of the
    /// executive's state, after which the log before the snapshot is purged (flag
    /// `--snapshot-every`). Default 1024.
    #[cfg(feature = "transport-nats")]
    pub executive_snapshot_every: u64,
    /// For `glidepath server`: how long a member's endpoint may be gone before the
    /// executive resigns it as lost, so that a crashed regulator does not hold time
    /// back for ever (flag `--lost-after SECONDS`, 0 for never). Default 10 s.
    #[cfg(feature = "transport-nats")]
    pub executive_lost_after: Option<std::time::Duration>,
    /// TLS and the credential of every NATS connection (flags `--nats-ca`,
    /// `--nats-cert`, `--nats-key`, `--nats-user` with `--nats-password-file`,
    /// `--nats-token-file`, `--nats-nkey-file`, `--nats-creds`, and their variables).
    /// Default: none.
    #[cfg(feature = "transport-nats")]
    pub nats_security: glidepath_transport::nats::NatsSecurity,
}

impl fmt::Debug for RtiConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut d = f.debug_struct("RtiConfig");
        d.field("transport", &self.transport);
        #[cfg(feature = "transport-nats")]
        d.field(
            "nats_url",
            &glidepath_transport::nats::redact_url(&self.nats_url),
        );
        #[cfg(not(feature = "transport-nats"))]
        d.field("nats_url", &self.nats_url);
        d.field("chain", &self.chain)
            .field("bundle", &self.bundle)
            .field("save_dir", &self.save_dir);
        #[cfg(feature = "transport-nats")]
        d.field("persistence", &self.persistence)
            .field("reliable_window_envelopes", &self.reliable_window_envelopes)
            .field("request_timeout", &self.request_timeout)
            .field("stream_replicas", &self.stream_replicas)
            .field("ddm_cells", &self.ddm_cells)
            .field("ddm_dimensions", &self.ddm_dimensions)
            .field("executive_failover", &self.executive_failover)
            .field("executive_snapshot_every", &self.executive_snapshot_every)
            .field("executive_lost_after", &self.executive_lost_after)
            .field("nats_security", &self.nats_security);
        d.finish()
    }
}

impl Default for RtiConfig {
    fn default() -> Self {
        RtiConfig {
            transport: TransportKind::default(),
            nats_url: DEFAULT_NATS_URL.to_string(),
            chain: ChainConfig::default(),
            bundle: BundleConfig::default(),
            save_dir: DEFAULT_SAVE_DIR.into(),
            shm_name: "glidepath".into(),
            shm_ring_bytes: 8 << 20,
            #[cfg(feature = "transport-nats")]
            persistence: Default::default(),
            #[cfg(feature = "transport-nats")]
            reliable_window_envelopes: glidepath_transport::NatsOptions::default().window_envelopes,
            #[cfg(feature = "transport-nats")]
            request_timeout: glidepath_transport::NatsOptions::default().request_timeout,
            #[cfg(feature = "transport-nats")]
            stream_replicas: 1,
            #[cfg(feature = "transport-nats")]
            ddm_cells: glidepath_transport::NatsOptions::default().ddm_cells,
            #[cfg(feature = "transport-nats")]
            ddm_dimensions: Vec::new(),
            #[cfg(feature = "transport-nats")]
            executive_failover: false,
            #[cfg(feature = "transport-nats")]
            executive_snapshot_every: glidepath_transport::nats::SNAPSHOT_EVERY,
            #[cfg(feature = "transport-nats")]
            executive_lost_after: glidepath_transport::NatsOptions::default().lost_after,
            #[cfg(feature = "transport-nats")]
            nats_security: Default::default(),
        }
    }
}

impl RtiConfig {
    /// The `shm` transport's options from this configuration.
    #[cfg(all(feature = "transport-shm", target_os = "linux"))]
    pub fn shm_options(&self) -> glidepath_transport::ShmOptions {
        glidepath_transport::ShmOptions {
            ring_bytes: self.shm_ring_bytes,
            ..Default::default()
        }
    }

    /// The NATS transport's options for this configuration: the encoder chain,
    /// bundling and persistence.
    #[cfg(feature = "transport-nats")]
    pub fn nats_options(&self) -> glidepath_transport::NatsOptions {
        glidepath_transport::NatsOptions {
            messaging: glidepath_transport::nats::MessagingOptions {
                chain: self.chain.clone(),
                bundle: self.bundle,
                ..Default::default()
            },
            persistence: match self.persistence {
                glidepath_transport::nats::Persistence::JetStream(mut js) => {
                    js.replicas = self.stream_replicas;
                    glidepath_transport::nats::Persistence::JetStream(js)
                }
                other => other,
            },
            window_envelopes: self.reliable_window_envelopes,
            security: self.nats_security.clone(),
            failover: self.executive_failover.then_some(
                glidepath_transport::nats::FailoverOptions {
                    replicas: self.stream_replicas,
                    snapshot_every: self.executive_snapshot_every.max(1),
                    ..Default::default()
                },
            ),
            save_replicas: self.stream_replicas,
            request_timeout: self.request_timeout,
            ddm_cells: self.ddm_cells,
            ddm_dimensions: self.ddm_dimensions.clone(),
            lost_after: self.executive_lost_after,
            ..Default::default()
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

/// The settings that can come from the environment or a flag: (flag, variable).
const SETTINGS: &[(&str, &str)] = &[
    ("--transport", TRANSPORT_ENV),
    ("--nats-url", NATS_URL_ENV),
    ("--compression", COMPRESSION_ENV),
    ("--compress-min-bytes", COMPRESS_MIN_BYTES_ENV),
    ("--key-file", KEY_FILE_ENV),
    ("--bundle-bytes", BUNDLE_BYTES_ENV),
    ("--bundle-time-us", BUNDLE_TIME_US_ENV),
    ("--save-dir", SAVE_DIR_ENV),
    #[cfg(all(feature = "transport-shm", target_os = "linux"))]
    ("--shm-name", SHM_NAME_ENV),
    #[cfg(all(feature = "transport-shm", target_os = "linux"))]
    ("--shm-ring-bytes", SHM_RING_BYTES_ENV),
    #[cfg(feature = "transport-nats")]
    ("--persistence", PERSISTENCE_ENV),
    #[cfg(feature = "transport-nats")]
    ("--reliable-window", RELIABLE_WINDOW_ENV),
    #[cfg(feature = "transport-nats")]
    ("--request-timeout-ms", REQUEST_TIMEOUT_MS_ENV),
    #[cfg(feature = "transport-nats")]
    ("--stream-replicas", STREAM_REPLICAS_ENV),
    #[cfg(feature = "transport-nats")]
    ("--ddm-cells", DDM_CELLS_ENV),
    #[cfg(feature = "transport-nats")]
    ("--ddm-dimensions", DDM_DIMENSIONS_ENV),
];

/// Every setting a flag or variable can make.
fn all_settings() -> impl Iterator<Item = &'static (&'static str, &'static str)> {
    let settings = SETTINGS.iter();
    #[cfg(feature = "transport-nats")]
    let settings = settings.chain(security::SECURITY_SETTINGS.iter());
    settings
}

fn number<T: FromStr>(setting: &'static str, value: &str) -> Result<T, ConfigError>
where
    T::Err: fmt::Display,
{
    value
        .trim()
        .parse::<T>()
        .map_err(|e| ConfigError::InvalidValue {
            setting,
            value: value.to_string(),
            reason: e.to_string(),
        })
}

/// A refusal of the shm transport's own checks, as a refusal of `setting`.
#[cfg(all(feature = "transport-shm", target_os = "linux"))]
fn shm_check(
    setting: &'static str,
    value: &str,
    checked: Result<(), glidepath_transport::TransportError>,
) -> Result<(), ConfigError> {
    checked.map_err(|e| ConfigError::InvalidValue {
        setting,
        value: value.to_string(),
        reason: e.to_string(),
    })
}

/// Reads a federation key from a file holding 64 hex digits; `setting` names the
/// flag or variable the path came from, for the error message.
pub fn read_key_file(setting: &'static str, path: &str) -> Result<FederationKey, ConfigError> {
    let invalid = |reason: String| ConfigError::InvalidValue {
        setting,
        value: path.to_string(),
        reason,
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| invalid(format!("cannot read the key file: {e}")))?;
    FederationKey::from_hex(&text).map_err(|e| invalid(e.to_string()))
}

impl RtiConfig {
    /// The default configuration with overrides from the environment (unset or empty
    /// keeps the default): `GLIDEPATH_TRANSPORT`, `GLIDEPATH_NATS_URL`,
    /// `GLIDEPATH_COMPRESSION`, `GLIDEPATH_COMPRESS_MIN_BYTES`, `GLIDEPATH_KEY_FILE`,
    /// `GLIDEPATH_BUNDLE_BYTES`, `GLIDEPATH_BUNDLE_TIME_US` and (with NATS)
    /// `GLIDEPATH_PERSISTENCE`, `GLIDEPATH_RELIABLE_WINDOW` and
    /// `GLIDEPATH_REQUEST_TIMEOUT_MS`.
    pub fn from_env() -> Result<RtiConfig, ConfigError> {
        let mut config = RtiConfig::default();
        for &(_, variable) in all_settings() {
            if let Some(v) = env_value(variable)? {
                config.set(variable, &v)?;
            }
        }
        #[cfg(feature = "transport-nats")]
        config.secrets_from_env()?;
        Ok(config)
    }

    /// Applies one setting by its flag or environment variable name.
    fn set(&mut self, setting: &'static str, value: &str) -> Result<(), ConfigError> {
        let value = value.trim();
        let name = all_settings()
            .find(|(f, v)| *f == setting || *v == setting)
            .map(|(f, _)| *f)
            .unwrap_or(setting);
        match name {
            "--transport" => self.transport = value.parse()?,
            #[cfg(feature = "transport-nats")]
            "--nats-url" => self.set_nats_url(setting, value)?,
            #[cfg(not(feature = "transport-nats"))]
            "--nats-url" => self.nats_url = value.to_string(),
            "--compression" => {
                self.chain.compression =
                    Compression::parse(value).map_err(|e| ConfigError::InvalidValue {
                        setting,
                        value: value.to_string(),
                        reason: e.to_string(),
                    })?
            }
            "--compress-min-bytes" => self.chain.compress_bytes_min = number(setting, value)?,
            #[cfg(feature = "transport-nats")]
            "--persistence" => {
                self.persistence =
                    value
                        .parse()
                        .map_err(|e: glidepath_transport::nats::UnknownPersistence| {
                            ConfigError::InvalidValue {
                                setting,
                                value: value.to_string(),
                                reason: e.to_string(),
                            }
                        })?
            }
            #[cfg(feature = "transport-nats")]
            "--reliable-window" => self.reliable_window_envelopes = number(setting, value)?,
            #[cfg(feature = "transport-nats")]
            "--request-timeout-ms" => {
                let ms: u64 = number(setting, value)?;
                if ms == 0 {
                    return Err(ConfigError::InvalidValue {
                        setting,
                        value: value.to_string(),
                        reason: "a request needs more than 0 ms".into(),
                    });
                }
                self.request_timeout = std::time::Duration::from_millis(ms);
            }
            #[cfg(feature = "transport-nats")]
            "--stream-replicas" => {
                let n: usize = number(setting, value)?;
                if !(1..=5).contains(&n) {
                    return Err(ConfigError::InvalidValue {
                        setting,
                        value: value.to_string(),
                        reason: "JetStream keeps 1 to 5 copies of a stream".into(),
                    });
                }
                self.stream_replicas = n;
            }
            #[cfg(feature = "transport-nats")]
            "--ddm-cells" => {
                let n: u32 = number(setting, value)?;
                if n > 4096 {
                    return Err(ConfigError::InvalidValue {
                        setting,
                        value: value.to_string(),
                        reason: "at most 4096 slices per axis".into(),
                    });
                }
                self.ddm_cells = n;
            }
            #[cfg(feature = "transport-nats")]
            "--ddm-dimensions" => {
                let names: Vec<String> = value
                    .split(',')
                    .map(|n| n.trim().to_string())
                    .filter(|n| !n.is_empty())
                    .collect();
                if names.len() > glidepath_transport::nats::cells::GRID_AXES_MAX {
                    return Err(ConfigError::InvalidValue {
                        setting,
                        value: value.to_string(),
                        reason: format!(
                            "a grid has at most {} dimensions",
                            glidepath_transport::nats::cells::GRID_AXES_MAX
                        ),
                    });
                }
                self.ddm_dimensions = names;
            }
            "--key-file" => self.chain.key = Some(read_key_file(setting, value)?),
            #[cfg(all(feature = "transport-shm", target_os = "linux"))]
            "--shm-name" => {
                shm_check(setting, value, glidepath_transport::shm::check_name(value))?;
                self.shm_name = value.to_string();
            }
            #[cfg(all(feature = "transport-shm", target_os = "linux"))]
            "--shm-ring-bytes" => {
                let n: usize = number(setting, value)?;
                shm_check(
                    setting,
                    value,
                    glidepath_transport::shm::check_ring_bytes(n),
                )?;
                self.shm_ring_bytes = n;
            }
            "--save-dir" => self.save_dir = value.into(),
            "--bundle-bytes" => self.bundle.bundle_bytes_max = number(setting, value)?,
            "--bundle-time-us" => {
                let us: u64 = number(setting, value)?;
                self.bundle.bundle_time_ns_max =
                    us.checked_mul(1_000)
                        .ok_or_else(|| ConfigError::InvalidValue {
                            setting,
                            value: value.to_string(),
                            reason: "too large".into(),
                        })?;
            }
            #[cfg(feature = "transport-nats")]
            flag => {
                self.set_security(flag, setting, value)?;
            }
            #[cfg(not(feature = "transport-nats"))]
            _ => {}
        }
        Ok(())
    }

    /// [`RtiConfig::from_env`], then overrides from this program's command line:
    /// `--transport NAME`, `--nats-url URL`, `--compression none|lz4|zstd[:N]`,
    /// `--compress-min-bytes N`, `--key-file PATH`, `--bundle-bytes N`,
    /// `--bundle-time-us N`, `--persistence none|jetstream` and `--reliable-window N` (also as
    /// `--flag=VALUE`). Other arguments are left alone, so any program can offer
    /// these without a parser.
    pub fn from_env_and_args() -> Result<RtiConfig, ConfigError> {
        let mut config = RtiConfig::from_env()?;
        config.apply_args(std::env::args().skip(1))?;
        Ok(config)
    }

    /// This configuration as the flags [`RtiConfig::apply_args`] reads, so another
    /// process (a child a launcher starts) can be given the same one. The federation
    /// key is left out on purpose: a command line is visible to every user of the
    /// machine, so hand the child the key file (`--key-file`) or its variable instead.
    pub fn to_args(&self) -> Vec<String> {
        let mut args = vec!["--transport".to_string(), self.transport.name().to_string()];
        #[cfg(feature = "transport-nats")]
        let url_in_env = self.to_env().iter().any(|(v, _)| *v == NATS_URL_ENV);
        #[cfg(not(feature = "transport-nats"))]
        let url_in_env = false;
        if !url_in_env {
            args.extend(["--nats-url".to_string(), self.nats_url.clone()]);
        }
        args.extend([
            "--compression".to_string(),
            self.chain.compression.to_string(),
            "--compress-min-bytes".to_string(),
            self.chain.compress_bytes_min.to_string(),
            "--bundle-bytes".to_string(),
            self.bundle.bundle_bytes_max.to_string(),
            "--bundle-time-us".to_string(),
            (self.bundle.bundle_time_ns_max / 1_000).to_string(),
        ]);
        #[cfg(feature = "transport-nats")]
        args.extend([
            "--persistence".to_string(),
            self.persistence.name().to_string(),
            "--reliable-window".to_string(),
            self.reliable_window_envelopes.to_string(),
            "--ddm-cells".to_string(),
            self.ddm_cells.to_string(),
        ]);
        // Children must cut the space as this process does.
        #[cfg(feature = "transport-nats")]
        if !self.ddm_dimensions.is_empty() {
            args.extend([
                "--ddm-dimensions".to_string(),
                self.ddm_dimensions.join(","),
            ]);
        }
        // Not `--stream-replicas`: only the executive server creates streams, and
        // children (a run's blocks) take no such flag. Nor `--save-dir`: only the
        // process hosting the executive keeps saves.
        args
    }

    /// Applies the flags [`RtiConfig::from_env_and_args`] lists from `args`, ignoring
    /// the rest.
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
            let Some(&(flag, _)) = all_settings().find(|(f, _)| *f == flag) else {
                continue;
            };
            let value = match inline.or_else(|| args.next()) {
                Some(v) if !v.trim().is_empty() => v,
                _ => return Err(ConfigError::MissingValue(flag)),
            };
            self.set(flag, &value)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
