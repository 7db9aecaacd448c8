//! `--browser`: the radar page in headless chromium (Debian's, through chromedriver)
//! while the load runs: how often it redraws, what a draw costs on the page's thread,
//! how many stream frames it takes, and the CPU of every chromium process (the GPU
//! process rasterises there; headless chromium has SwiftShader, software WebGL).

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::ClientBuilder;
use serde_json::{json, Value};

/// What the page did.
pub struct Page {
    pub renderer: String,
    pub renders_per_s: f64,
    pub draw_ms: f64,
    pub frames_per_s: f64,
    pub cpu: f64,
}

/// CPU seconds of every process whose name starts with `chrom`.
fn chromium_cpu() -> f64 {
    let mut total = 0.0;
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let Some((head, after)) = stat.rsplit_once(')') else {
            continue;
        };
        if !head.contains("(chrom") {
            continue;
        }
        let f: Vec<&str> = after.split_whitespace().collect();
        if f.len() > 13 {
            total +=
                (f[11].parse::<f64>().unwrap_or(0.0) + f[12].parse::<f64>().unwrap_or(0.0)) / 100.0;
        }
    }
    total
}

/// Opens `http://addr/` for `seconds` after the page shows `aircraft` aircraft.
pub fn radar(addr: SocketAddr, aircraft: usize, seconds: f64) -> Page {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let driver = std::env::var("GLIDEPATH_CHROMEDRIVER").unwrap_or_else(|_| "chromedriver".into());
    let mut child = Command::new(&driver)
        .arg(format!("--port={port}"))
        .process_group(0)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("--browser needs {driver} (chromium-driver): {e}"));
    let t0 = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "chromedriver did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let page = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(measure(port, addr, aircraft, seconds));
    // SAFETY: kill(2) on the process group this function started.
    unsafe {
        libc::kill(-(child.id() as i32), libc::SIGKILL);
    }
    let _ = child.wait();
    page
}

async fn measure(port: u16, addr: SocketAddr, aircraft: usize, seconds: f64) -> Page {
    let chromium =
        std::env::var("GLIDEPATH_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    let profile =
        std::env::temp_dir().join(format!("glidepath-load-chromium-{}", std::process::id()));
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": chromium,
            "args": [
                "--headless=new", "--no-sandbox", "--disable-gpu",
                "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
                "--no-first-run", "--disable-background-networking", "--window-size=1400,900",
                format!("--user-data-dir={}", profile.display()),
            ]
        }),
    );
    let c = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .expect("a chromium session");
    c.goto(&format!("http://{addr}/")).await.unwrap();
    let read = |script: &'static str| {
        let c = c.clone();
        async move { c.execute(script, vec![]).await.unwrap() }
    };
    let t0 = Instant::now();
    loop {
        let n = read("return document.getElementById('aircraft-count').textContent").await;
        if n == json!(aircraft.to_string()) {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the radar shows {n} aircraft"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    tokio::time::sleep(Duration::from_secs(3)).await; // warm-up
    let sample = || async {
        let s: Value = read(
            "return [window.glidepathStats.renders, window.glidepathStats.costMs, \
             Number(document.getElementById('frame').textContent), window.glidepathStats.renderer]",
        )
        .await;
        (
            s[0].as_f64().unwrap_or(0.0),
            s[1].as_f64().unwrap_or(0.0),
            s[2].as_f64().unwrap_or(0.0),
            s[3].as_str().unwrap_or_default().to_string(),
        )
    };
    let (r0, _, f0, _) = sample().await;
    let (cpu0, w0) = (chromium_cpu(), Instant::now());
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    let (r1, draw_ms, f1, renderer) = sample().await;
    let wall = w0.elapsed().as_secs_f64();
    let cpu = (chromium_cpu() - cpu0) / wall;
    c.close().await.unwrap();
    let _ = std::fs::remove_dir_all(profile);
    Page {
        renderer,
        renders_per_s: (r1 - r0) / wall,
        draw_ms,
        // The page shows the simulation's frame number; at the stream's rate it
        // advances by one per frame taken.
        frames_per_s: (f1 - f0) / wall,
        cpu,
    }
}
