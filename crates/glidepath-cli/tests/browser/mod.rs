//! Driving Debian's headless chromium through chromedriver (WebDriver) for the
//! browser tests (`web.rs`, `web_atm.rs`): the driver in a process group of its own,
//! a session with a fresh profile, waits that say what they waited for, screenshots
//! under `target/web-screenshots/`.
//!
//! Needs `chromium` and `chromedriver` (`scripts/test.sh` installs them; the
//! `GLIDEPATH_CHROMIUM` and `GLIDEPATH_CHROMEDRIVER` variables override the paths).

#![allow(dead_code)]

use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;

pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// chromedriver in a process group of its own: dropping it kills the group, so a
/// failed test leaves no chromium behind (killing chromedriver alone orphans them).
pub struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        // SAFETY: kill(2) on the group this test created; no memory is involved.
        unsafe {
            libc::kill(-(self.0.id() as i32), libc::SIGKILL);
        }
        let _ = self.0.wait();
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A chromedriver on a free port of its own, listening. A driver that ends at once (its
/// port taken meanwhile by another test's server) is started again on another port.
pub fn chromedriver() -> (Driver, u16) {
    for _ in 0..3 {
        let (mut driver, port) = chromedriver_once();
        std::thread::sleep(Duration::from_millis(200));
        if matches!(driver.0.try_wait(), Ok(None)) {
            return (driver, port);
        }
    }
    panic!("chromedriver kept ending as it started")
}

fn chromedriver_once() -> (Driver, u16) {
    let program = std::env::var("GLIDEPATH_CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into());
    let port = free_port();
    let child = Command::new(&program)
        .arg(format!("--port={port}"))
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot start {program} ({e}): install chromium and chromium-driver (scripts/test.sh does)")
        });
    let t0 = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "chromedriver did not listen on {port}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    (Driver(child), port)
}

pub fn screenshots() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target/web-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub async fn text(c: &Client, id: &str) -> String {
    let v = c
        .execute(
            &format!("return document.getElementById('{id}').textContent"),
            vec![],
        )
        .await
        .unwrap();
    v.as_str().unwrap_or_default().to_string()
}

/// Polls `check` every 100 ms for up to `limit`; panics with `what` if it never holds.
pub async fn until<F, Fut>(limit: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    let t0 = Instant::now();
    loop {
        match check().await {
            Ok(()) => {
                eprintln!("{what}: {:.1} s", t0.elapsed().as_secs_f64());
                return;
            }
            Err(last) if t0.elapsed() > limit => {
                panic!("{what} within {limit:?}; last seen: {last}")
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

pub async fn click(c: &Client, what: Locator<'_>) {
    c.find(what).await.unwrap().click().await.unwrap();
}

/// Waits up to `limit` for element `id`'s text to pass `check`.
pub async fn wait_text(c: &Client, limit: u64, what: &str, id: &str, check: impl Fn(&str) -> bool) {
    until(Duration::from_secs(limit), what, || async {
        let t = text(c, id).await;
        if check(&t) {
            Ok(())
        } else {
            Err(t)
        }
    })
    .await;
}

pub async fn shoot(c: &Client, name: &str) {
    let png = c.screenshot().await.unwrap();
    assert!(png.len() > 10_000, "{name}: a real picture, not a blank");
    std::fs::write(screenshots().join(name), png).unwrap();
}

/// A chromium session on `driver_port` with a fresh profile (removed by
/// [`Session::close`]).
pub struct Session {
    pub client: Client,
    profile: PathBuf,
}

impl Session {
    pub async fn start(driver_port: u16) -> Session {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let chromium =
            std::env::var("GLIDEPATH_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
        let profile = std::env::temp_dir().join(format!(
            "glidepath-chromium-{}-{}",
            std::process::id(),
            N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            json!({
                "binary": chromium,
                "args": [
                    "--headless=new", "--no-sandbox", "--disable-gpu",
                    "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
                    "--disable-quic", "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--window-size=1400,900",
                    format!("--user-data-dir={}", profile.display()),
                ]
            }),
        );
        // A busy machine can leave the driver a moment behind its port: a few tries.
        let mut tries = 0;
        let client = loop {
            match ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
                .capabilities(caps.clone())
                .connect(&format!("http://127.0.0.1:{driver_port}"))
                .await
            {
                Ok(client) => break client,
                Err(e) if tries < 5 => {
                    tries += 1;
                    eprintln!("chromium session, try {tries}: {e}");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
                Err(e) => panic!("a chromium session: {e}"),
            }
        };
        Session { client, profile }
    }

    pub async fn close(self) {
        self.client.close().await.unwrap();
        let _ = std::fs::remove_dir_all(self.profile);
    }
}
