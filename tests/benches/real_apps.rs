//! Real-app benchmark: every task of every app of the real-app corpus (`docs/corpus.md`:
//! TodoMVC ×9, Django admin, Wagtail, django-ckeditor, Datasette, sqlite-web, Streamlit,
//! Panel, Gradio, NiceGUI, JupyterLab, marimo), the same agent-like scripts
//! (`kapture_e2e::tasks::run_app`, shared with `cargo make corpus`) run against kapture,
//! Playwright MCP and Chrome DevTools MCP, each finding elements only in its own server's
//! snapshot and find answers. Per task, per app and per server: runs that succeeded, and
//! median tool calls, answer bytes and wall time; then the steps that failed.
//!
//! `KAPTURE_BENCH_APPS=todomvc,django` picks apps, `KAPTURE_BENCH_SERVERS=kapture,devtools-mcp`
//! picks servers, `KAPTURE_BENCH_RUNS` sets the runs of every app (default: 3 of the quick
//! apps, 1 of the slow ones), `KAPTURE_BENCH_PEERS=0` leaves the peers out,
//! `KAPTURE_BENCH_VERBOSE=1` prints every call of every task. Apps `cargo make setup` has
//! not installed are skipped, saying so.

// A benchmark report is printed for people: stdout is its place.
#![allow(clippy::print_stdout)]

use std::collections::BTreeMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use futures::FutureExt;
use kapture_e2e::agent::{json_in, texts_of, Agent, Dialect, Mcp, Reply, Report};
use kapture_e2e::tasks::panel::{png_of, Screenshots, Shot};
use kapture_e2e::tasks::{run_app, App};
use kapture_e2e::{chromium, kapture_bin, target_dir, QUIET_CHROMIUM_FLAGS, RESOLVER_RULES};
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};

/// One call may take this long before the bench gives up on it.
const CALL_LIMIT: Duration = Duration::from_secs(60);
/// The peers, pinned as in `benches/tools.rs`; installed into `target/bench-peers`.
const PEERS: &[(&str, &str)] = &[
    ("@playwright/mcp", "0.0.83"),
    ("chrome-devtools-mcp", "1.11.0"),
];

/// One MCP server with a client attached.
struct Server {
    dialect: Dialect,
    client: RunningService<RoleClient, ()>,
    pid: u32,
    /// Chrome DevTools MCP routes page tools by page id.
    page_id: Option<u64>,
    /// Its screenshots' image pixels per CSS pixel, once read.
    device_scale: OnceLock<f64>,
    _dir: tempfile::TempDir,
}

impl Mcp for Server {
    async fn call_tool(&self, tool: &str, args: Value) -> Result<Reply, String> {
        let result = self.call_raw(tool, args).await?;
        let json = serde_json::to_value(&result).unwrap_or_default();
        Ok(Reply {
            text: texts_of(&json),
            bytes: json.to_string().len(),
            is_error: result.is_error == Some(true),
        })
    }
}

impl Screenshots for Server {
    /// The viewport as a PNG, in each server's own words: kapture at scale 1 and Playwright
    /// MCP at `scale: "css"` draw one image pixel per CSS pixel; Chrome DevTools MCP draws
    /// device pixels, so its shot answers the page's device pixel ratio as its scale.
    async fn screenshot(&self) -> Result<Shot, String> {
        let (tool, args) = match self.dialect {
            Dialect::Kapture => (
                "browser_take_screenshot",
                json!({"type": "png", "scale": 1}),
            ),
            Dialect::Playwright => (
                "browser_take_screenshot",
                json!({"type": "png", "scale": "css"}),
            ),
            Dialect::DevTools => ("take_screenshot", json!({"format": "png"})),
        };
        let (png, bytes) = png_of(tool, self.call_raw(tool, args).await?)?;
        let scale = match self.dialect {
            Dialect::DevTools => self.device_scale().await?,
            _ => 1.0,
        };
        Ok(Shot {
            png,
            bytes,
            scale,
            tool,
        })
    }
}

impl Server {
    /// One `tools/call`, routed to the page for Chrome DevTools MCP, bounded in time.
    async fn call_raw(&self, tool: &str, mut args: Value) -> Result<CallToolResult, String> {
        if let (Some(id), Some(obj)) = (self.page_id, args.as_object_mut()) {
            obj.insert("pageId".into(), json!(id));
        }
        let params = CallToolRequestParams::new(tool.to_string())
            .with_arguments(args.as_object().cloned().unwrap_or_default());
        tokio::time::timeout(CALL_LIMIT, self.client.call_tool(params))
            .await
            .map_err(|_| format!("{tool} did not answer within {CALL_LIMIT:?}"))?
            .map_err(|e| format!("{tool}: {e}"))
    }

    /// The page's device pixel ratio (read once, with the server's own evaluate tool: a
    /// fact of the bench's browser, not a step of the agent's).
    async fn device_scale(&self) -> Result<f64, String> {
        if let Some(scale) = self.device_scale.get() {
            return Ok(*scale);
        }
        let result = self
            .call_raw(
                "evaluate_script",
                json!({"function": "() => window.devicePixelRatio"}),
            )
            .await?;
        let text = texts_of(&serde_json::to_value(&result).unwrap_or_default());
        let scale = json_in(&text)
            .and_then(|v| v.as_f64())
            .filter(|s| *s > 0.0)
            .ok_or_else(|| format!("no device pixel ratio in {text:?}"))?;
        Ok(*self.device_scale.get_or_init(|| scale))
    }

    /// Start a server of `dialect` with its own headless, isolated browser.
    async fn start(dialect: Dialect, peers: &Path) -> Result<Server, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let mut flags: Vec<String> = QUIET_CHROMIUM_FLAGS.iter().map(|s| s.to_string()).collect();
        flags.push(RESOLVER_RULES.to_string());
        let mut cmd = match dialect {
            Dialect::Kapture => {
                let mut cmd = tokio::process::Command::new(kapture_bin());
                cmd.args(["--browser", "launch", "--headless", "--port", "0"])
                    .arg("--runtime-dir")
                    .arg(dir.path().join("run"))
                    .arg("--audit-dir")
                    .arg(dir.path().join("audit"))
                    .arg("--data-dir")
                    .arg(dir.path().join("data"))
                    .arg(format!("--chromium-arg={RESOLVER_RULES}"))
                    .env("XDG_CONFIG_HOME", dir.path().join("config"))
                    .env("KAPTURE_KEYRING", "off");
                cmd
            }
            Dialect::Playwright => {
                // `vision`: its coordinate tools (`browser_mouse_click_xy`), for a canvas.
                let config = json!({"browser": {"browserName": "chromium", "isolated": true,
                    "launchOptions": {"executablePath": chromium(), "headless": true, "args": flags}},
                    "capabilities": ["vision"]});
                let path = dir.path().join("playwright.json");
                std::fs::write(&path, config.to_string()).map_err(|e| e.to_string())?;
                let mut cmd = tokio::process::Command::new("node");
                cmd.arg(peers.join("node_modules/@playwright/mcp/cli.js"))
                    .arg("--config")
                    .arg(path);
                cmd
            }
            Dialect::DevTools => {
                let mut cmd = tokio::process::Command::new("node");
                cmd.arg(
                    peers.join(
                        "node_modules/chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js",
                    ),
                )
                .args([
                    "--headless",
                    "--isolated",
                    "--no-usage-statistics",
                    "--no-performance-crux",
                ])
                .arg("--executablePath")
                .arg(chromium())
                .args(flags.iter().map(|f| format!("--chromeArg={f}")));
                cmd
            }
        };
        cmd.current_dir(dir.path()).kill_on_drop(true);
        let (transport, _) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("{} does not start: {e}", dialect.label()))?;
        let pid = transport.id().unwrap_or_default();
        let client = tokio::time::timeout(CALL_LIMIT, ().serve(transport))
            .await
            .map_err(|_| format!("{}: no initialize answer", dialect.label()))?
            .map_err(|e| format!("{}: initialize failed: {e}", dialect.label()))?;
        let mut server = Server {
            dialect,
            client,
            pid,
            page_id: None,
            device_scale: OnceLock::new(),
            _dir: dir,
        };
        if dialect == Dialect::DevTools {
            let pages = server.call_tool("list_pages", json!({})).await?.text;
            let id = pages
                .lines()
                .find_map(|l| l.split(':').next()?.trim().parse::<u64>().ok())
                .ok_or_else(|| format!("devtools-mcp named no page: {pages}"))?;
            server.page_id = Some(id);
        }
        Ok(server)
    }

    /// End the server and wait (bounded) until its process is gone.
    async fn stop(self) {
        let pid = self.pid;
        let _ = self.client.cancel().await;
        let deadline = Instant::now() + Duration::from_secs(10);
        while kapture_e2e::process_alive(pid) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if kapture_e2e::process_alive(pid) {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
        }
    }
}

/// Install the peers into `target/bench-peers` if needed; answers the folder, or why not.
fn install_peers() -> Result<PathBuf, String> {
    let dir = target_dir().join("bench-peers");
    let ready = PEERS.iter().all(|(name, version)| {
        std::fs::read_to_string(dir.join("node_modules").join(name).join("package.json"))
            .is_ok_and(|t| t.contains(&format!("\"version\": \"{version}\"")))
    });
    if ready {
        return Ok(dir);
    }
    if kapture_e2e::on_path("npm").is_none() || kapture_e2e::on_path("node").is_none() {
        return Err("node and npm are not on PATH".into());
    }
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let deps: serde_json::Map<String, Value> = PEERS
        .iter()
        .map(|(n, v)| (n.to_string(), json!(v)))
        .collect();
    let manifest = json!({"name": "kapture-bench-peers", "private": true, "dependencies": deps});
    std::fs::write(dir.join("package.json"), manifest.to_string()).map_err(|e| e.to_string())?;
    let status = std::process::Command::new("npm")
        .args(["install", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(&dir)
        .env("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
        .env("PUPPETEER_SKIP_DOWNLOAD", "1")
        .status()
        .map_err(|e| e.to_string())?;
    if status.success() {
        Ok(dir)
    } else {
        Err(format!("npm install failed ({status})"))
    }
}

/// Median of some numbers.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// One table cell: runs that succeeded, and median calls, bytes and time.
fn cell(reports: &[Report]) -> String {
    if reports.is_empty() {
        return format!("{:>22}", "—");
    }
    let ok = reports.iter().filter(|r| r.ok()).count();
    let calls = median(reports.iter().map(|r| r.cost.calls as f64).collect());
    let bytes = median(reports.iter().map(|r| r.cost.bytes as f64).collect());
    let ms = median(reports.iter().map(|r| r.cost.ms).collect());
    format!(
        "{ok}/{} {calls:>3.0} {bytes:>7.0} {:>6.0}",
        reports.len(),
        ms
    )
}

/// The runs of `app` per server unless `KAPTURE_BENCH_RUNS` says otherwise: three of the
/// apps whose tasks take under a minute on all three servers, one of the rest (TodoMVC's
/// nine implementations alone took 11 minutes in three runs): the whole bench in about 20
/// minutes on 2 cores.
fn default_runs(app: App) -> usize {
    match app {
        App::Django | App::Ckeditor | App::Datasette | App::SqliteWeb | App::Panel => 3,
        _ => 1,
    }
}

/// One run of an app's tasks as one report: every step, the failures named by task, the
/// cost summed.
fn whole(app: App, reports: &[Report]) -> Report {
    let mut out = Report {
        app: app.name().to_string(),
        ..Report::default()
    };
    for r in reports {
        out.steps
            .extend(r.steps.iter().map(|s| format!("{}: {s}", r.app)));
        out.failures.extend(
            r.failures
                .iter()
                .map(|(s, why)| (format!("{}: {s}", r.app), why.clone())),
        );
        out.cost.calls += r.cost.calls;
        out.cost.bytes += r.cost.bytes;
        out.cost.ms += r.cost.ms;
    }
    out
}

/// A report's line with each failure's first line only (its whole text is kept).
fn brief(report: &Report) -> String {
    let mut short = report.clone();
    for (_, why) in &mut short.failures {
        *why = why.lines().next().unwrap_or_default().to_string();
    }
    short.line()
}

/// `text` with every `127.0.0.1:<port>` written `127.0.0.1:…`.
fn unported(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("127.0.0.1:") {
        let (head, tail) = rest.split_at(at + "127.0.0.1:".len());
        out.push_str(head);
        out.push('…');
        rest = tail.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

/// A run that did not get to its tasks (the server or the app did not start).
fn not_run(app: App, why: String) -> Report {
    Report {
        app: app.name().to_string(),
        steps: vec!["start".into()],
        failures: vec![("start".into(), why)],
        ..Report::default()
    }
}

/// What a panic said.
fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic".into())
}

/// Keep a failed task's steps and calls in `target/bench-real-apps/` for a person to read.
fn keep_log(dialect: Dialect, run: usize, report: &Report, log: &[String]) -> PathBuf {
    let dir = target_dir().join("bench-real-apps");
    let name: String = report
        .app
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let path = dir.join(format!("{}-{name}-run{}.log", dialect.label(), run + 1));
    let text = format!("{}\n\ncalls:\n{}\n", report.line(), log.join("\n"));
    let _ = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, text));
    std::fs::canonicalize(&path).unwrap_or(path)
}

/// Print a table: one row per name, one cell per server.
fn table(names: &[String], ran: &[Dialect], results: &BTreeMap<(Dialect, String), Vec<Report>>) {
    print!("{:<28}", "");
    for d in ran {
        print!("  {:>24}", d.label());
    }
    println!();
    for name in names {
        print!("{name:<28}");
        for d in ran {
            let reports = results
                .get(&(*d, name.clone()))
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            print!("  {:>24}", cell(reports));
        }
        println!();
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let bench_started = Instant::now();
    let runs_set: Option<usize> = std::env::var("KAPTURE_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map(|n: usize| n.clamp(1, 20));
    let runs_of = |app: App| runs_set.unwrap_or_else(|| default_runs(app));
    let verbose = std::env::var("KAPTURE_BENCH_VERBOSE").as_deref() == Ok("1");
    let mut apps: Vec<App> = App::ALL.to_vec();
    // KAPTURE_BENCH_APPS=todomvc,django picks some apps.
    if let Ok(only) = std::env::var("KAPTURE_BENCH_APPS") {
        let names: Vec<&str> = only
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .collect();
        let unknown: Vec<&&str> = names.iter().filter(|n| App::named(n).is_none()).collect();
        if !unknown.is_empty() {
            let known: Vec<&str> = App::ALL.iter().map(|a| a.name()).collect();
            println!(
                "KAPTURE_BENCH_APPS: no app {unknown:?} (the apps: {})",
                known.join(",")
            );
        }
        apps.retain(|a| names.contains(&a.name()));
    }
    apps.retain(|app| match app.missing() {
        Some(why) => {
            println!("{} skipped: {why}", app.name());
            false
        }
        None => true,
    });
    let peers = if std::env::var("KAPTURE_BENCH_PEERS").as_deref() == Ok("0") {
        Err("KAPTURE_BENCH_PEERS=0".to_string())
    } else {
        install_peers()
    };
    let mut dialects = vec![Dialect::Kapture];
    match &peers {
        Ok(_) => dialects.extend([Dialect::Playwright, Dialect::DevTools]),
        Err(why) => println!("peers skipped: {why}"),
    }
    // KAPTURE_BENCH_SERVERS=kapture,devtools-mcp picks some servers.
    if let Ok(only) = std::env::var("KAPTURE_BENCH_SERVERS") {
        dialects.retain(|d| only.split(',').any(|o| o.trim() == d.label()));
    }
    let peer_dir = peers.unwrap_or_default();
    println!(
        "kapture: {}; apps: {}",
        kapture_bin().display(),
        apps.iter().map(|a| a.name()).collect::<Vec<_>>().join(",")
    );

    // By task (`app: task`) and by app, per server, a report per run.
    let mut by_task: BTreeMap<(Dialect, String), Vec<Report>> = BTreeMap::new();
    let mut by_app: BTreeMap<(Dialect, String), Vec<Report>> = BTreeMap::new();
    let mut task_names: Vec<String> = Vec::new();
    let mut app_secs: Vec<(App, f64)> = Vec::new();
    for &app in &apps {
        let app_started = Instant::now();
        // Runs interleave the servers: each meets the machine in the same state.
        for run in 0..runs_of(app) {
            for &dialect in &dialects {
                let server = match Server::start(dialect, &peer_dir).await {
                    Ok(server) => server,
                    Err(why) => {
                        println!(
                            "{:<15} run {} {}: server did not start: {why}",
                            dialect.label(),
                            run + 1,
                            app.name()
                        );
                        by_app
                            .entry((dialect, app.name().to_string()))
                            .or_default()
                            .push(not_run(app, why));
                        continue;
                    }
                };
                let mut agent = Agent::new(&server, dialect);
                // A panic (an app that does not start, a check of the app's own that
                // fails) ends this app's run, not the bench.
                let out = AssertUnwindSafe(run_app(app, &mut agent))
                    .catch_unwind()
                    .await;
                server.stop().await;
                let reports = match out {
                    Ok(reports) => reports,
                    Err(panic) => {
                        let why = panic_text(panic.as_ref());
                        println!(
                            "{:<15} run {} {}: panicked: {why}",
                            dialect.label(),
                            run + 1,
                            app.name()
                        );
                        by_app
                            .entry((dialect, app.name().to_string()))
                            .or_default()
                            .push(not_run(app, format!("panicked: {why}")));
                        continue;
                    }
                };
                for (report, log) in &reports {
                    println!("{:<15} run {} {}", dialect.label(), run + 1, brief(report));
                    if !report.ok() {
                        let kept = keep_log(dialect, run, report, log);
                        println!("{:<15}   calls: {}", "", kept.display());
                    }
                    if verbose {
                        for line in log {
                            println!("    {line}");
                        }
                    }
                    if !task_names.contains(&report.app) {
                        task_names.push(report.app.clone());
                    }
                    by_task
                        .entry((dialect, report.app.clone()))
                        .or_default()
                        .push(report.clone());
                }
                let reports: Vec<Report> = reports.into_iter().map(|(r, _)| r).collect();
                by_app
                    .entry((dialect, app.name().to_string()))
                    .or_default()
                    .push(whole(app, &reports));
            }
        }
        app_secs.push((app, app_started.elapsed().as_secs_f64()));
    }

    println!();
    println!("per task and server: runs that succeeded, median tool calls, answer bytes, ms");
    table(&task_names, &dialects, &by_task);
    println!();
    println!("per app and server (a run's tasks summed; ok when every task was): runs that succeeded, median tool calls, answer bytes, ms");
    let app_names: Vec<String> = apps.iter().map(|a| a.name().to_string()).collect();
    table(&app_names, &dialects, &by_app);
    println!();
    println!("steps that failed (server, task (runs), step: why):");
    for ((d, task), reports) in &by_task {
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for r in reports {
            for (step, why) in &r.failures {
                // One entry per kind of failure: an app's port differs run by run.
                let first = why.lines().next().unwrap_or_default();
                let first = unported(first);
                *seen.entry(format!("{step}: {first}")).or_default() += 1;
            }
        }
        for (what, n) in seen {
            println!("  {} {task} ({n}/{}) {what}", d.label(), reports.len());
        }
    }
    for ((d, app), reports) in &by_app {
        for r in reports.iter().filter(|r| r.steps == ["start"]) {
            for (_, why) in &r.failures {
                println!(
                    "  {} {app}: did not run: {}",
                    d.label(),
                    why.lines().next().unwrap_or_default()
                );
            }
        }
    }
    println!();
    let secs: Vec<String> = app_secs
        .iter()
        .map(|(a, s)| format!("{} {s:.0} s", a.name()))
        .collect();
    println!(
        "wall time per app (every run on every server, starts included): {}",
        secs.join(", ")
    );
    println!(
        "the whole bench: {:.0} s; chromium: {}",
        bench_started.elapsed().as_secs_f64(),
        chromium().display()
    );
}
