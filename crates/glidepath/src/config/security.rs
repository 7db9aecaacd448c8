//! NATS TLS and credentials in an [`RtiConfig`]. Flags name *files*; secret values
//! come from files or the environment, never from a command line, which every user
//! of the machine can read (`ps`). A child process is handed the secrets through its
//! environment ([`RtiConfig::to_env`]), which only its owner can read.

use std::path::PathBuf;

use glidepath_transport::nats::{split_url_credentials, NatsAuth, Secret};

use super::{env_value, ConfigError, RtiConfig};

/// A file holding the NATS server URL (or a comma-separated list), credentials
/// included if any (flag `--nats-url-file`).
pub const NATS_URL_FILE_ENV: &str = "GLIDEPATH_NATS_URL_FILE";
/// The NATS user name (flag `--nats-user`); the password comes from
/// [`NATS_PASSWORD_ENV`] or a file ([`NATS_PASSWORD_FILE_ENV`]).
pub const NATS_USER_ENV: &str = "GLIDEPATH_NATS_USER";
/// The NATS password itself (environment only).
pub const NATS_PASSWORD_ENV: &str = "GLIDEPATH_NATS_PASSWORD";
/// A file holding the NATS password (flag `--nats-password-file`).
pub const NATS_PASSWORD_FILE_ENV: &str = "GLIDEPATH_NATS_PASSWORD_FILE";
/// The NATS token itself (environment only).
pub const NATS_TOKEN_ENV: &str = "GLIDEPATH_NATS_TOKEN";
/// A file holding the NATS token (flag `--nats-token-file`).
pub const NATS_TOKEN_FILE_ENV: &str = "GLIDEPATH_NATS_TOKEN_FILE";
/// An NKey seed itself (environment only).
pub const NATS_NKEY_ENV: &str = "GLIDEPATH_NATS_NKEY";
/// A file holding an NKey seed (flag `--nats-nkey-file`).
pub const NATS_NKEY_FILE_ENV: &str = "GLIDEPATH_NATS_NKEY_FILE";
/// A JWT `.creds` file (flag `--nats-creds`).
pub const NATS_CREDS_ENV: &str = "GLIDEPATH_NATS_CREDS";
/// A PEM file of the CAs that sign the server's certificate (flag `--nats-ca`);
/// TLS is then required.
pub const NATS_CA_ENV: &str = "GLIDEPATH_NATS_CA";
/// The client certificate, PEM (flag `--nats-cert`).
pub const NATS_CERT_ENV: &str = "GLIDEPATH_NATS_CERT";
/// The client certificate's key, PEM (flag `--nats-key`).
pub const NATS_KEY_ENV: &str = "GLIDEPATH_NATS_KEY";

/// The security settings as (flag, variable), read like every other setting.
pub(super) const SECURITY_SETTINGS: [(&str, &str); 9] = [
    ("--nats-url-file", NATS_URL_FILE_ENV),
    ("--nats-user", NATS_USER_ENV),
    ("--nats-password-file", NATS_PASSWORD_FILE_ENV),
    ("--nats-token-file", NATS_TOKEN_FILE_ENV),
    ("--nats-nkey-file", NATS_NKEY_FILE_ENV),
    ("--nats-creds", NATS_CREDS_ENV),
    ("--nats-ca", NATS_CA_ENV),
    ("--nats-cert", NATS_CERT_ENV),
    ("--nats-key", NATS_KEY_ENV),
];

/// Secrets read from the environment only: (variable, what it holds).
const SECRET_VARIABLES: [&str; 3] = [NATS_PASSWORD_ENV, NATS_TOKEN_ENV, NATS_NKEY_ENV];

/// Reads a secret from a file, without its trailing line break.
fn read_secret(setting: &'static str, path: &str) -> Result<Secret, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError::InvalidValue {
        setting,
        value: path.to_string(),
        reason: format!("cannot read the file: {e}"),
    })?;
    let value = text.trim_end_matches(['\r', '\n']);
    if value.trim().is_empty() {
        return Err(ConfigError::InvalidValue {
            setting,
            value: path.to_string(),
            reason: "the file is empty".into(),
        });
    }
    Ok(Secret::new(value))
}

impl RtiConfig {
    /// Whether `url` carries a password or token.
    fn url_has_credentials(url: &str) -> bool {
        matches!(split_url_credentials(url), Ok((_, a)) if a != NatsAuth::None)
    }

    /// Applies the `--nats-url` setting: a URL with credentials is refused from a
    /// command line (only from the environment or a file).
    pub(super) fn set_nats_url(
        &mut self,
        setting: &'static str,
        value: &str,
    ) -> Result<(), ConfigError> {
        if setting.starts_with("--") && Self::url_has_credentials(value) {
            return Err(ConfigError::InvalidValue {
                setting,
                value: glidepath_transport::nats::redact_url(value),
                reason: format!(
                    "a password or token on the command line is visible to every user of this \
                     machine: put the URL in {} or in a file given to --nats-url-file, or use \
                     --nats-user with --nats-password-file",
                    super::NATS_URL_ENV
                ),
            });
        }
        self.nats_url = value.to_string();
        Ok(())
    }

    /// Applies one security setting by flag name; `false` if `flag` is not one.
    pub(super) fn set_security(
        &mut self,
        flag: &str,
        setting: &'static str,
        value: &str,
    ) -> Result<bool, ConfigError> {
        let security = &mut self.nats_security;
        match flag {
            "--nats-url-file" => {
                let url = read_secret(setting, value)?;
                self.nats_url = url.expose().trim().to_string();
            }
            "--nats-user" => {
                security.auth = match std::mem::take(&mut security.auth) {
                    NatsAuth::UserPassword { password, .. } => NatsAuth::UserPassword {
                        user: value.to_string(),
                        password,
                    },
                    _ => NatsAuth::UserPassword {
                        user: value.to_string(),
                        password: Secret::default(),
                    },
                }
            }
            "--nats-password-file" => self.set_password(read_secret(setting, value)?),
            "--nats-token-file" => security.auth = NatsAuth::Token(read_secret(setting, value)?),
            "--nats-nkey-file" => security.auth = NatsAuth::NKeySeed(read_secret(setting, value)?),
            "--nats-creds" => security.auth = NatsAuth::CredsFile(PathBuf::from(value)),
            "--nats-ca" => security.tls.ca_file = Some(PathBuf::from(value)),
            "--nats-cert" => security.tls.cert_file = Some(PathBuf::from(value)),
            "--nats-key" => security.tls.key_file = Some(PathBuf::from(value)),
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn set_password(&mut self, password: Secret) {
        let auth = &mut self.nats_security.auth;
        *auth = match std::mem::take(auth) {
            NatsAuth::UserPassword { user, .. } => NatsAuth::UserPassword { user, password },
            _ => NatsAuth::UserPassword {
                user: String::new(),
                password,
            },
        }
    }

    /// Reads the secrets that come only from the environment.
    pub(super) fn secrets_from_env(&mut self) -> Result<(), ConfigError> {
        for variable in SECRET_VARIABLES {
            let Some(value) = env_value(variable)? else {
                continue;
            };
            let secret = Secret::new(value);
            match variable {
                NATS_PASSWORD_ENV => self.set_password(secret),
                NATS_TOKEN_ENV => self.nats_security.auth = NatsAuth::Token(secret),
                _ => self.nats_security.auth = NatsAuth::NKeySeed(secret),
            }
        }
        Ok(())
    }

    /// The environment a child process needs besides [`RtiConfig::to_args`]: the
    /// NATS URL when it carries credentials, and the secret values, so that none of
    /// them appears on a command line.
    pub fn to_env(&self) -> Vec<(&'static str, String)> {
        let mut env = Vec::new();
        if Self::url_has_credentials(&self.nats_url) {
            env.push((super::NATS_URL_ENV, self.nats_url.clone()));
        }
        match &self.nats_security.auth {
            NatsAuth::UserPassword { user, password } => {
                env.push((NATS_USER_ENV, user.clone()));
                env.push((NATS_PASSWORD_ENV, password.expose().to_string()));
            }
            NatsAuth::Token(t) => env.push((NATS_TOKEN_ENV, t.expose().to_string())),
            NatsAuth::NKeySeed(s) => env.push((NATS_NKEY_ENV, s.expose().to_string())),
            NatsAuth::CredsFile(p) => env.push((NATS_CREDS_ENV, p.display().to_string())),
            _ => {}
        }
        let tls = &self.nats_security.tls;
        for (variable, path) in [
            (NATS_CA_ENV, &tls.ca_file),
            (NATS_CERT_ENV, &tls.cert_file),
            (NATS_KEY_ENV, &tls.key_file),
        ] {
            if let Some(p) = path {
                env.push((variable, p.display().to_string()));
            }
        }
        env
    }

    /// Hands a child process this configuration's NATS credentials through its
    /// environment ([`RtiConfig::to_env`]), first removing any it would inherit that
    /// could contradict them.
    pub fn configure_child(&self, command: &mut std::process::Command) {
        for (_, variable) in SECURITY_SETTINGS {
            command.env_remove(variable);
        }
        for variable in SECRET_VARIABLES {
            command.env_remove(variable);
        }
        command.envs(self.to_env());
    }

    /// The NATS URL for messages: any password or token in it masked.
    pub fn nats_url_shown(&self) -> String {
        glidepath_transport::nats::redact_url(&self.nats_url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_password_in_a_command_line_url_is_refused_and_not_echoed() {
        let mut config = RtiConfig::default();
        let e = config
            .apply_args(["--nats-url", "nats://alice:s3cret@127.0.0.1:4222"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("visible to every user"), "{e}");
        assert!(!e.contains("s3cret"), "{e}");
        // From a file it is taken, and never shown.
        let dir = std::env::temp_dir().join(format!("glidepath-sec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("url");
        std::fs::write(&file, "nats://alice:s3cret@127.0.0.1:4222\n").unwrap();
        config
            .apply_args(["--nats-url-file", file.to_str().unwrap()])
            .unwrap();
        assert_eq!(config.nats_url, "nats://alice:s3cret@127.0.0.1:4222");
        assert_eq!(config.nats_url_shown(), "nats://alice:***@127.0.0.1:4222");
        assert!(!format!("{config:?}").contains("s3cret"));
        assert!(config.to_args().iter().all(|a| !a.contains("s3cret")));
        assert!(config
            .to_env()
            .contains(&(super::super::NATS_URL_ENV, config.nats_url.clone())));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn user_and_password_file_combine_and_files_are_named_when_missing() {
        let dir = std::env::temp_dir().join(format!("glidepath-sec2-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("pw");
        std::fs::write(&file, "pa ss\n").unwrap();
        let mut config = RtiConfig::default();
        config
            .apply_args([
                "--nats-password-file",
                file.to_str().unwrap(),
                "--nats-user=bob",
            ])
            .unwrap();
        assert_eq!(
            config.nats_security.auth,
            NatsAuth::UserPassword {
                user: "bob".into(),
                password: Secret::new("pa ss")
            }
        );
        assert!(!format!("{:?}", config.nats_security).contains("pa ss"));
        assert!(config.to_args().iter().all(|a| !a.contains("pa ss")));
        let e = config
            .apply_args(["--nats-token-file", "/nonexistent/token"])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--nats-token-file") && e.contains("/nonexistent/token"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(dir);
    }
}
