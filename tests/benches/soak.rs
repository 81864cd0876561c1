//! The soak (`cargo make soak`, not in CI): random tool calls against a real headless
//! Chromium for `SOAK_SECONDS` (default 600), with the extension's service worker killed,
//! tabs closed and kapture itself killed and restarted along the way. Reports hangs, errors
//! by code, and fd/memory growth of kapture and the browser; exits non-zero on a hang.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kapture_e2e::{cdp::RawCdp, descendants_of, Kapture, Orphans, Start};
use serde_json::{json, Value};
use www_test_pages::Site;

/// A call that takes longer than this (beyond its own timeout) is a hang.
const HANG: Duration = Duration::from_secs(45);

fn fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|d| d.count())
        .unwrap_or(0)
}

/// (fds, RSS MiB) of one process and of a process tree.
fn footprint(kapture: u32, browser: &[u32]) -> (usize, u64, usize, u64) {
    let tree_rss: u64 = browser
        .iter()
        .map(|p| kapture_e2e::proc_kib(*p, "VmRSS:"))
        .sum();
    let tree_fds: usize = browser.iter().map(|p| fds(*p)).sum();
    (
        fds(kapture),
        kapture_e2e::proc_kib(kapture, "VmRSS:") / 1024,
        tree_fds,
        tree_rss / 1024,
    )
}

/// One random tool call; answers the tool name and its outcome code ("ok" or the error code).
async fn random_call(k: &Kapture, site: &Site, rng: &mut fastrand::Rng) -> (String, String) {
    let pages = [
        "page-a.html",
        "form.html",
        "big.html",
        "table.html",
        "faults.html",
    ];
    let page = pages[rng.usize(..pages.len())];
    let (tool, args): (&str, Value) = match rng.u8(..12) {
        0 | 1 => ("browser_navigate", json!({"url": site.url(page)})),
        2 | 3 => ("browser_snapshot", json!({})),
        4 => ("browser_take_screenshot", json!({})),
        5 => ("browser_evaluate", json!({"function": "document.title"})),
        6 => ("browser_tabs", json!({"action": "list"})),
        7 => (
            "browser_tabs",
            json!({"action": "new", "url": site.url(page)}),
        ),
        8 => ("browser_get_text", json!({})),
        9 => ("browser_click", json!({"selector": "a, button"})),
        10 => ("browser_type", json!({"selector": "input", "text": "soak"})),
        _ => ("browser_wait_for", json!({"time": 0.2})),
    };
    let out = k.call(tool, args).await;
    let code = if out.is_error {
        out.code().unwrap_or_else(|| "UNCODED".into())
    } else {
        "ok".into()
    };
    (tool.to_string(), code)
}

/// The ids of the open tabs.
async fn tab_ids(k: &Kapture) -> Vec<i64> {
    let list = k.call("browser_tabs", json!({"action": "list"})).await.text;
    list.lines()
        .filter_map(|l| {
            let rest = l.split("] tab ").nth(1)?;
            rest.split([' ', ':']).next()?.parse().ok()
        })
        .collect()
}

async fn tab_count(k: &Kapture) -> usize {
    tab_ids(k).await.len()
}

/// Close one tab (not the last one).
async fn close_a_tab(k: &Kapture, rng: &mut fastrand::Rng) {
    let ids = tab_ids(k).await;
    if ids.len() > 1 {
        let id = ids[rng.usize(..ids.len())];
        let _ = k
            .call("browser_tabs", json!({"action": "close", "tabId": id}))
            .await;
    }
}

/// The browser's live processes: those of killed kaptures' browsers and the current one's.
fn browser_now(orphans: &[Orphans], k: &Kapture) -> Vec<u32> {
    orphans
        .iter()
        .flat_map(|o| o.0.iter().copied())
        .chain(descendants_of(k.pid))
        .filter(|p| kapture_e2e::process_alive(*p))
        .collect()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let seconds: u64 = std::env::var("SOAK_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    let seed = fastrand::u64(..);
    let mut rng = fastrand::Rng::with_seed(seed);
    eprintln!("soak: {seconds} s, seed {seed}");
    let site = Site::start().expect("test site");
    let runtime = tempfile::tempdir().expect("runtime dir");
    let start = |args: Vec<String>| Start {
        args,
        runtime_dir: Some(runtime.path().to_path_buf()),
        ..Start::default()
    };
    // No DevTools pipe held (`--engine extension`): the browser must outlive a killed kapture.
    let mut launch = Start::debuggable().args;
    launch.extend(["--engine".into(), "extension".into()]);
    let mut k = Kapture::start(start(launch)).await;
    k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    let profile = k.browser_profile();
    let mut browser: Vec<u32> = descendants_of(k.pid);
    let mut orphans: Vec<Orphans> = Vec::new();
    let first = footprint(k.pid, &browser);

    let deadline = Instant::now() + Duration::from_secs(seconds);
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    let mut calls = 0usize;
    let mut hangs = Vec::new();
    let mut slowest = Duration::ZERO;
    let (mut kills, mut closes, mut restarts) = (0, 0, 0);
    let mut next_kill = Instant::now() + Duration::from_secs(30);
    let mut next_restart = Instant::now() + Duration::from_secs(120);
    let mut last_report = Instant::now();
    while Instant::now() < deadline {
        let started = Instant::now();
        match tokio::time::timeout(HANG, random_call(&k, &site, &mut rng)).await {
            Ok((tool, code)) => {
                *outcomes.entry(code.clone()).or_default() += 1;
                if code == "UNCODED" || code == "INTERNAL" {
                    eprintln!("soak: {tool} answered {code}");
                }
            }
            Err(_) => hangs.push(format!("a call hung for {HANG:?} at {:?}", started)),
        }
        calls += 1;
        slowest = slowest.max(started.elapsed());
        // Tabs come and go: now and then one closes, and always when there are many.
        if rng.u8(..40) == 0 || (calls % 25 == 0 && tab_count(&k).await > 8) {
            close_a_tab(&k, &mut rng).await;
            closes += 1;
        }
        if Instant::now() > next_kill {
            if let Ok(mut cdp) = RawCdp::connect(&profile).await {
                if cdp.kill_service_worker().await.unwrap_or(0) > 0 {
                    kills += 1;
                }
            }
            next_kill = Instant::now() + Duration::from_secs(20 + rng.u64(..40));
        }
        if Instant::now() > next_restart {
            // kapture crashes; a new one (connect mode) takes over the same browser.
            orphans.push(k.kill_hard().await);
            k = Kapture::start(start(vec![
                "--browser".into(),
                "connect".into(),
                "--browser-wait-ms".into(),
                "30000".into(),
                "--unsafe-allow-all".into(),
            ]))
            .await;
            // Not the browser's launcher: its allow-all needs the person's yes, once (the
            // browser remembers it for that rule set).
            if restarts == 0 {
                let port = kapture_e2e::handshakes_in(runtime.path())
                    .into_iter()
                    .find(|h| h["pid"].as_u64() == Some(u64::from(k.pid)))
                    .and_then(|h| h["port"].as_u64())
                    .expect("the new kapture's handshake file");
                k.ok("browser_tabs", json!({"action": "list"})).await;
                let mut panel = kapture_e2e::panel::Panel::open_in(&profile, -1).await;
                panel.accept_looser_rules(port).await;
                panel.close().await;
            }
            restarts += 1;
            next_restart = Instant::now() + Duration::from_secs(90 + rng.u64(..60));
        }
        if last_report.elapsed() > Duration::from_secs(60) {
            browser = browser_now(&orphans, &k);
            let (kf, km, bf, bm) = footprint(k.pid, &browser);
            eprintln!("soak: {calls} calls; kapture {kf} fds {km} MiB; browser {bf} fds {bm} MiB; {outcomes:?}");
            last_report = Instant::now();
        }
    }
    browser = browser_now(&orphans, &k);
    let last = footprint(k.pid, &browser);
    eprintln!("soak report ({seconds} s, seed {seed})");
    eprintln!("  calls: {calls}, slowest {slowest:?}");
    eprintln!("  worker kills: {kills}, tab closes: {closes}, kapture restarts: {restarts}");
    eprintln!("  outcomes by code: {outcomes:?}");
    eprintln!(
        "  kapture: {} → {} fds, {} → {} MiB RSS (a restarted kapture starts afresh)",
        first.0, last.0, first.1, last.1
    );
    eprintln!(
        "  browser: {} → {} fds, {} → {} MiB RSS",
        first.2, last.2, first.3, last.3
    );
    eprintln!("  hangs: {}", hangs.len());
    for h in &hangs {
        eprintln!("    {h}");
    }
    k.stop().await;
    drop(orphans);
    if !hangs.is_empty() {
        std::process::exit(1);
    }
}
