//! The ATM layer's web pages: `glidepath edit LAYOUT` (the layout editor) and the run
//! monitoring portal of `glidepath run LAYOUT --web ADDR` (`glidepath_web::atm`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use glidepath_atm::run::Live;
use glidepath_web::atm::{start_atm, AtmWebConfig, AtmWebServer};

/// Options of `glidepath edit`.
#[derive(clap::Args, Debug)]
pub struct EditArgs {
    /// The layout to edit (TOML); a file that does not exist yet starts a new layout
    /// saved there.
    #[arg(value_name = "LAYOUT")]
    layout: PathBuf,
    /// Where to serve the editor.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8090")]
    web: SocketAddr,
    /// Tokens, `ROLE=TOKEN[,...]`; saving needs the operator's [default:
    /// $GLIDEPATH_WEB_TOKENS, else a random operator token, printed].
    #[arg(long, value_name = "TOKENS")]
    web_tokens: Option<String>,
}

/// The web's configuration from `--web-tokens` (or `$GLIDEPATH_WEB_TOKENS`).
fn config(addr: SocketAddr, tokens: Option<&String>) -> anyhow::Result<(AtmWebConfig, bool)> {
    let mut config = AtmWebConfig::new(addr);
    let env = std::env::var("GLIDEPATH_WEB_TOKENS").ok();
    if let Some(spec) = tokens.or(env.as_ref()) {
        // The same ROLE=TOKEN rules as the target generator's web.
        let mut parsed = glidepath_web::WebConfig::new(addr);
        parsed.add_tokens(spec)?;
        config.tokens = parsed.tokens;
    }
    let given = !config.tokens.is_empty();
    Ok((config, given))
}

fn page_url(server: &AtmWebServer, page: &str, given: bool) -> String {
    match (server.operator_token(), given) {
        (Some(token), false) => format!("http://{}/{page}?token={token}", server.addr()),
        _ => format!("http://{}/{page}", server.addr()),
    }
}

/// `glidepath edit LAYOUT`: serves the editor until SIGINT, SIGTERM or SIGHUP.
pub fn edit(args: EditArgs) -> anyhow::Result<()> {
    let signals = glidepath_netlab::lab::block_termination_signals()?;
    let (mut config, given) = config(args.web, args.web_tokens.as_ref())?;
    config.layout = Some(args.layout.clone());
    config.save = true;
    let server = start_atm(config)?;
    let state = if args.layout.exists() {
        "opens"
    } else {
        "is new; Save creates"
    };
    println!(
        "edit: {} {state} it; layout editor at {}",
        args.layout.display(),
        page_url(&server, "editor", given)
    );
    let signal = glidepath_netlab::lab::wait_for_signal(&signals);
    crate::say(&format!("edit: signal {signal}, stopping"));
    Ok(())
}

/// The portal of a run (`glidepath run --web`); its editor shows the run's layout
/// and offers a download (it does not save over a running layout).
pub fn start_portal(
    addr: SocketAddr,
    tokens: Option<&String>,
    live: Arc<Live>,
    layout: PathBuf,
) -> anyhow::Result<AtmWebServer> {
    let (mut config, given) = config(addr, tokens)?;
    config.live = Some(live);
    config.layout = Some(layout);
    let server = start_atm(config)?;
    println!(
        "web: run monitoring portal at {}",
        page_url(&server, "portal", given)
    );
    Ok(server)
}
