//! Real-app benchmark: the same agent-like task scripts (`kapture_e2e::tasks`: nine
//! TodoMVC apps from npm, Django's admin from PyPI) run against kapture, Playwright MCP and
//! Chrome DevTools MCP, each finding elements only in its own server's snapshot and find
//! answers. Per app and server: success, tool calls, answer bytes and wall time (median of
//! `KAPTURE_BENCH_RUNS` runs, default 3), and the steps that failed.

// A benchmark report is printed for people: stdout is its place.
#![allow(clippy::print_stdout)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use kapture_e2e::agent::{texts_of, Agent, Dialect, Mcp, Reply, Report};
use kapture_e2e::corpus::{
    todomvc_site, todomvc_url, DjangoAdmin, DJANGO_PASSWORD, DJANGO_USER, TODOMVC_APPS,
};
use kapture_e2e::{chromium, kapture_bin, target_dir, tasks, QUIET_CHROMIUM_FLAGS, RESOLVER_RULES};
use rmcp::model::CallToolRequestParams;
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
    _dir: tempfile::TempDir,
}

impl Mcp for Server {
    async fn call_tool(&self, tool: &str, mut args: Value) -> Result<Reply, String> {
        if let (Some(id), Some(obj)) = (self.page_id, args.as_object_mut()) {
            obj.insert("pageId".into(), json!(id));
        }
        let params = CallToolRequestParams::new(tool.to_string())
            .with_arguments(args.as_object().cloned().unwrap_or_default());
        let result = tokio::time::timeout(CALL_LIMIT, self.client.call_tool(params))
            .await
            .map_err(|_| format!("{tool} did not answer within {CALL_LIMIT:?}"))?
            .map_err(|e| format!("{tool}: {e}"))?;
        let json = serde_json::to_value(&result).unwrap_or_default();
        Ok(Reply {
            text: texts_of(&json),
            bytes: json.to_string().len(),
            is_error: result.is_error == Some(true),
        })
    }
}

impl Server {
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
                let config = json!({"browser": {"browserName": "chromium", "isolated": true,
                    "launchOptions": {"executablePath": chromium(), "headless": true, "args": flags}}});
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

/// Every app's report for one run on one server (a fresh origin per TodoMVC app, a fresh
/// Django project per run: the task changes its data).
async fn run_all(server: &Server, apps: &[&str]) -> Vec<Report> {
    let mut agent = Agent::new(server, server.dialect);
    let mut out = Vec::new();
    for (app, folder) in TODOMVC_APPS {
        if !apps.contains(app) {
            continue;
        }
        let site = todomvc_site();
        out.push(tasks::todomvc(&mut agent, app, &todomvc_url(&site, folder)).await);
        verbose(&agent);
    }
    if apps.contains(&"django") {
        let admin = DjangoAdmin::start();
        let base = admin.url("");
        let db = |code: &str| admin.shell(code);
        out.push(tasks::django_admin(&mut agent, &base, DJANGO_USER, DJANGO_PASSWORD, &db).await);
        verbose(&agent);
    }
    out
}

/// With `KAPTURE_BENCH_VERBOSE=1`, every call of the last task and the size of its answer.
fn verbose<M: Mcp>(agent: &Agent<'_, M>) {
    if std::env::var("KAPTURE_BENCH_VERBOSE").as_deref() == Ok("1") {
        for line in &agent.log {
            println!("    {line}");
        }
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

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let runs: usize = std::env::var("KAPTURE_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
        .clamp(1, 20);
    let mut apps: Vec<&str> = TODOMVC_APPS.iter().map(|(a, _)| *a).collect();
    apps.push("django");
    // KAPTURE_BENCH_APPS=vanilla,django picks some apps.
    if let Ok(only) = std::env::var("KAPTURE_BENCH_APPS") {
        let only: Vec<String> = only.split(',').map(str::to_string).collect();
        apps.retain(|a| only.iter().any(|o| o == a));
    }
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
        dialects.retain(|d| only.split(',').any(|o| o == d.label()));
    }
    let peer_dir = peers.unwrap_or_default();

    let mut results: BTreeMap<(Dialect, String), Vec<Report>> = BTreeMap::new();
    let mut ran = Vec::new();
    for dialect in dialects {
        let server = match Server::start(dialect, &peer_dir).await {
            Ok(s) => s,
            Err(why) => {
                println!("{} skipped: {why}", dialect.label());
                continue;
            }
        };
        ran.push(dialect);
        for run in 0..runs {
            for report in run_all(&server, &apps).await {
                println!("{:<15} run {} {}", dialect.label(), run + 1, report.line());
                results
                    .entry((dialect, report.app.clone()))
                    .or_default()
                    .push(report);
            }
        }
        server.stop().await;
    }

    println!();
    println!("per app and server: runs that succeeded, median tool calls, answer bytes and ms over {runs} runs");
    print!("{:<10}", "app");
    for d in &ran {
        print!("  {:>22}", d.label());
    }
    println!();
    for app in &apps {
        print!("{app:<10}");
        for d in &ran {
            let reports = results
                .get(&(*d, app.to_string()))
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            print!("  {}", cell(reports));
        }
        println!();
    }
    println!();
    println!("steps that failed (server, app, step: why):");
    for ((d, app), reports) in &results {
        let mut seen: BTreeMap<String, usize> = BTreeMap::new();
        for r in reports {
            for (step, why) in &r.failures {
                let first = why.lines().next().unwrap_or_default();
                *seen.entry(format!("{step}: {first}")).or_default() += 1;
            }
        }
        for (what, n) in seen {
            println!("  {} {app} ({n}/{}) {what}", d.label(), reports.len());
        }
    }
    println!("chromium: {}", chromium().display());
}
