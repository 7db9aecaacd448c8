//! The NATS server and how to reach it securely: flags shared by every command that
//! connects. Secrets are never flag values (a command line is visible to every user
//! of the machine): flags name files, or the values come from the environment.

use glidepath::RtiConfig;

/// Where the NATS server is, and TLS and credentials to reach it.
#[derive(clap::Args, Debug, Default, Clone)]
pub(crate) struct NatsArgs {
    /// The NATS server, or a comma-separated list of a cluster's servers
    /// [default: $GLIDEPATH_NATS_URL, else nats://127.0.0.1:4222]. A URL with a
    /// password or token is refused here: put it in $GLIDEPATH_NATS_URL or a file.
    #[arg(long, value_name = "URL")]
    pub nats_url: Option<String>,
    /// A file holding the NATS URL, credentials included if any [default: $GLIDEPATH_NATS_URL_FILE].
    #[arg(long, value_name = "FILE")]
    pub nats_url_file: Option<String>,
    /// The NATS user name; the password comes from --nats-password-file or
    /// $GLIDEPATH_NATS_PASSWORD [default: $GLIDEPATH_NATS_USER].
    #[arg(long, value_name = "USER")]
    pub nats_user: Option<String>,
    /// A file holding the NATS password [default: $GLIDEPATH_NATS_PASSWORD_FILE].
    #[arg(long, value_name = "FILE")]
    pub nats_password_file: Option<String>,
    /// A file holding a NATS token [default: $GLIDEPATH_NATS_TOKEN_FILE, or the token in $GLIDEPATH_NATS_TOKEN].
    #[arg(long, value_name = "FILE")]
    pub nats_token_file: Option<String>,
    /// A file holding an NKey seed [default: $GLIDEPATH_NATS_NKEY_FILE, or the seed in $GLIDEPATH_NATS_NKEY].
    #[arg(long, value_name = "FILE")]
    pub nats_nkey_file: Option<String>,
    /// A JWT credentials file (`.creds`) [default: $GLIDEPATH_NATS_CREDS].
    #[arg(long, value_name = "FILE")]
    pub nats_creds: Option<String>,
    /// A PEM file of the CAs that sign the NATS server's certificate; TLS is then
    /// required [default: $GLIDEPATH_NATS_CA].
    #[arg(long, value_name = "FILE")]
    pub nats_ca: Option<String>,
    /// A client certificate (PEM) for servers that verify clients [default: $GLIDEPATH_NATS_CERT].
    #[arg(long, value_name = "FILE")]
    pub nats_cert: Option<String>,
    /// The client certificate's private key (PEM) [default: $GLIDEPATH_NATS_KEY].
    #[arg(long, value_name = "FILE")]
    pub nats_key: Option<String>,
}

impl NatsArgs {
    /// Applies the flags given over `config` (already read from the environment),
    /// with the same checks and messages as the environment variables.
    pub(crate) fn apply(self, config: &mut RtiConfig) -> anyhow::Result<()> {
        let flags = [
            ("--nats-url", self.nats_url),
            ("--nats-url-file", self.nats_url_file),
            ("--nats-user", self.nats_user),
            ("--nats-password-file", self.nats_password_file),
            ("--nats-token-file", self.nats_token_file),
            ("--nats-nkey-file", self.nats_nkey_file),
            ("--nats-creds", self.nats_creds),
            ("--nats-ca", self.nats_ca),
            ("--nats-cert", self.nats_cert),
            ("--nats-key", self.nats_key),
        ];
        for (flag, value) in flags {
            if let Some(value) = value {
                config.apply_args([flag.to_string(), value])?;
            }
        }
        Ok(())
    }
}
