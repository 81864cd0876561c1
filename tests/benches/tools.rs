//! Tool-speed benchmark, one run on one machine and browser: kapture driven by a real MCP
//! client over stdio, the same operations as raw CDP on the same browser (the physical
//! floor), and — when they can run here — Playwright MCP and Chrome DevTools MCP from npm
//! pointed at the same Chromium. Per step: median and p90 wall time over `REPS` runs after
//! a warm-up, and the answer's bytes; then cold starts, memory and the extension's size.

// A benchmark report is printed for people: stdout is its place.
#![allow(clippy::print_stdout)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use kapture_e2e::cdp::RawCdp;
use kapture_e2e::{chromium, kapture_bin, target_dir, QUIET_CHROMIUM_FLAGS, RESOLVER_RULES};
use rmcp::model::{CallToolRequestParams, ClientRequest, RequestNoParam};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use www_test_pages::Site;

/// Timed runs per step (after one warm-up run).
const REPS: usize = 20;
/// Cold starts per server.
const COLD_REPS: usize = 20;
/// One call may take this long before the bench gives up on the server.
const CALL_LIMIT: Duration = Duration::from_secs(60);
/// The peers, pinned; installed into `target/bench-peers` on first use.
const PEERS: &[(&str, &str)] = &[
    ("@playwright/mcp", "0.0.83"),
    ("chrome-devtools-mcp", "1.11.0"),
];

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Kind {
    Kapture,
    Playwright,
    DevTools,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::Kapture => "kapture",
            Kind::Playwright => "playwright-mcp",
            Kind::DevTools => "devtools-mcp",
        }
    }
}

/// Median and p90 of some timings, and the answer size.
#[derive(Clone, Copy, Debug, Default)]
struct Stat {
    median: f64,
    p90: f64,
    bytes: usize,
}

fn stat(mut ms: Vec<f64>, bytes: usize) -> Stat {
    ms.sort_by(f64::total_cmp);
    let at = |p: f64| ms[((ms.len() - 1) as f64 * p).round() as usize];
    Stat {
        median: at(0.5),
        p90: at(0.9),
        bytes,
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// One MCP server under test, with a client attached.
struct Server {
    kind: Kind,
    client: RunningService<RoleClient, ()>,
    pid: u32,
    /// Chrome DevTools MCP routes page tools by page id.
    page_id: Option<u64>,
    _dir: tempfile::TempDir,
}

/// The command that starts a server of `kind` (its browser headless, isolated, quiet).
fn command(kind: Kind, peers: &Path, dir: &Path, debug_port: bool) -> tokio::process::Command {
    let mut flags: Vec<String> = QUIET_CHROMIUM_FLAGS.iter().map(|s| s.to_string()).collect();
    flags.push(RESOLVER_RULES.to_string());
    match kind {
        Kind::Kapture => {
            let mut cmd = tokio::process::Command::new(kapture_bin());
            cmd.args(["--browser", "launch", "--headless", "--port", "0"])
                .arg("--runtime-dir")
                .arg(dir.join("run"))
                .arg("--audit-dir")
                .arg(dir.join("audit"))
                .arg("--data-dir")
                .arg(dir.join("data"))
                .arg(format!("--chromium-arg={RESOLVER_RULES}"))
                .env("XDG_CONFIG_HOME", dir.join("config"))
                .env("KAPTURE_KEYRING", "off");
            if debug_port {
                cmd.arg("--chromium-arg=--remote-debugging-port=0");
            }
            cmd
        }
        Kind::Playwright => {
            let config = json!({"browser": {"browserName": "chromium", "isolated": true,
                "launchOptions": {"executablePath": chromium(), "headless": true, "args": flags}}});
            let path = dir.join("playwright.json");
            std::fs::write(&path, config.to_string()).expect("peer config");
            let mut cmd = tokio::process::Command::new("node");
            cmd.arg(peers.join("node_modules/@playwright/mcp/cli.js"))
                .arg("--config")
                .arg(path)
                .current_dir(dir);
            cmd
        }
        Kind::DevTools => {
            let mut cmd = tokio::process::Command::new("node");
            cmd.arg(
                peers.join("node_modules/chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js"),
            )
            .args([
                "--headless",
                "--isolated",
                "--no-usage-statistics",
                "--no-performance-crux",
            ])
            .arg("--executablePath")
            .arg(chromium())
            .args(flags.iter().map(|f| format!("--chromeArg={f}")))
            .current_dir(dir);
            cmd
        }
    }
}

impl Server {
    /// Start one; answers it with the time to `initialize` and to `tools/list`.
    async fn start(
        kind: Kind,
        peers: &Path,
        debug_port: bool,
    ) -> Result<(Server, f64, f64), String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let started = Instant::now();
        let mut cmd = command(kind, peers, dir.path(), debug_port);
        cmd.kill_on_drop(true);
        let (transport, _) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("{} does not start: {e}", kind.label()))?;
        let pid = transport.id().unwrap_or_default();
        let client = tokio::time::timeout(CALL_LIMIT, ().serve(transport))
            .await
            .map_err(|_| format!("{}: no initialize answer", kind.label()))?
            .map_err(|e| format!("{}: initialize failed: {e}", kind.label()))?;
        let initialized = ms(started.elapsed());
        client
            .list_all_tools()
            .await
            .map_err(|e| format!("{}: tools/list failed: {e}", kind.label()))?;
        let listed = ms(started.elapsed());
        let mut server = Server {
            kind,
            client,
            pid,
            page_id: None,
            _dir: dir,
        };
        if kind == Kind::DevTools {
            let pages = server.call("list_pages", json!({})).await?.text;
            let id = pages
                .lines()
                .find_map(|l| l.split(':').next()?.trim().parse::<u64>().ok())
                .ok_or_else(|| format!("devtools-mcp named no page: {pages}"))?;
            server.page_id = Some(id);
        }
        Ok((server, initialized, listed))
    }

    async fn call(&self, tool: &str, mut args: Value) -> Result<Answer, String> {
        if let (Some(id), Some(obj)) = (self.page_id, args.as_object_mut()) {
            obj.insert("pageId".into(), json!(id));
        }
        let params = CallToolRequestParams::new(tool.to_string())
            .with_arguments(args.as_object().cloned().unwrap_or_default());
        let started = Instant::now();
        let result = tokio::time::timeout(CALL_LIMIT, self.client.call_tool(params))
            .await
            .map_err(|_| format!("{}: {tool} did not answer", self.kind.label()))?
            .map_err(|e| format!("{}: {tool}: {e}", self.kind.label()))?;
        let elapsed = started.elapsed();
        let json = serde_json::to_value(&result).unwrap_or_default();
        let text = json["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n");
        if result.is_error == Some(true) {
            return Err(format!("{}: {tool} failed: {text}", self.kind.label()));
        }
        Ok(Answer {
            ms: ms(elapsed),
            bytes: json.to_string().len(),
            text,
        })
    }

    async fn ping(&self) -> Result<f64, String> {
        let started = Instant::now();
        self.client
            .send_request(ClientRequest::PingRequest(RequestNoParam {
                method: Default::default(),
                extensions: Default::default(),
            }))
            .await
            .map_err(|e| format!("ping: {e}"))?;
        Ok(ms(started.elapsed()))
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

    // The same operation in each server's own words.

    fn navigate(&self, url: &str) -> (&'static str, Value) {
        match self.kind {
            Kind::Kapture | Kind::Playwright => ("browser_navigate", json!({"url": url})),
            Kind::DevTools => ("navigate_page", json!({"url": url})),
        }
    }

    fn snapshot(&self) -> (&'static str, Value) {
        match self.kind {
            Kind::Kapture | Kind::Playwright => ("browser_snapshot", json!({})),
            Kind::DevTools => ("take_snapshot", json!({})),
        }
    }

    /// An element's id in a snapshot, on the line that shows `needle` (`textbox "Email"`).
    fn target(&self, snapshot: &str, needle: &str) -> Result<Value, String> {
        let line = snapshot
            .lines()
            .find(|l| l.contains(needle))
            .ok_or_else(|| format!("{}: no {needle} in the snapshot", self.kind.label()))?;
        let between = |start: &str, end: char| {
            line.split(start)
                .nth(1)
                .and_then(|r| r.split(end).next())
                .map(str::to_string)
                .ok_or_else(|| format!("{}: no id on {line}", self.kind.label()))
        };
        Ok(match self.kind {
            Kind::Kapture => json!({"ref": between("[ref=", ']')?, "element": needle}),
            Kind::Playwright => json!({"target": between("[ref=", ']')?, "element": needle}),
            Kind::DevTools => json!({"uid": between("uid=", ' ')?}),
        })
    }

    fn click(&self, target: &Value) -> (&'static str, Value) {
        match self.kind {
            Kind::Kapture | Kind::Playwright => ("browser_click", target.clone()),
            Kind::DevTools => ("click", target.clone()),
        }
    }

    fn type_text(&self, target: &Value, text: &str) -> (&'static str, Value) {
        let mut args = target.clone();
        match self.kind {
            Kind::Kapture | Kind::Playwright => {
                args["text"] = json!(text);
                ("browser_type", args)
            }
            Kind::DevTools => {
                args["value"] = json!(text);
                ("fill", args)
            }
        }
    }

    fn select(&self, target: &Value, value: &str, label: &str) -> (&'static str, Value) {
        let mut args = target.clone();
        match self.kind {
            Kind::Kapture | Kind::Playwright => {
                args["values"] = json!([value]);
                ("browser_select_option", args)
            }
            Kind::DevTools => {
                args["value"] = json!(label);
                ("fill", args)
            }
        }
    }

    fn evaluate(&self, expr: &str) -> (&'static str, Value) {
        match self.kind {
            Kind::Kapture => ("browser_evaluate", json!({"function": expr})),
            Kind::Playwright => (
                "browser_evaluate",
                json!({"function": format!("() => {expr}")}),
            ),
            Kind::DevTools => (
                "evaluate_script",
                json!({"function": format!("() => {expr}")}),
            ),
        }
    }

    fn screenshot(&self) -> (&'static str, Value) {
        match self.kind {
            Kind::Kapture | Kind::Playwright => ("browser_take_screenshot", json!({})),
            Kind::DevTools => ("take_screenshot", json!({})),
        }
    }

    fn console(&self) -> (&'static str, Value) {
        match self.kind {
            Kind::Kapture => ("browser_console_messages", json!({"max": 50})),
            Kind::Playwright => ("browser_console_messages", json!({"level": "debug"})),
            Kind::DevTools => ("list_console_messages", json!({"pageSize": 50})),
        }
    }

    async fn run(&self, (tool, args): (&'static str, Value)) -> Result<Answer, String> {
        self.call(tool, args).await
    }

    /// Navigate and take a snapshot; answers the snapshot text.
    async fn open(&self, url: &str) -> Result<String, String> {
        self.run(self.navigate(url)).await?;
        Ok(self.run(self.snapshot()).await?.text)
    }

    /// The full form flow: open, fill two fields, select, check, submit, read the result.
    async fn form_flow(&self, url: &str) -> Result<Answer, String> {
        let started = Instant::now();
        let snap = self.open(url).await?;
        let name = self.target(&snap, "textbox \"Name\"")?;
        let email = self.target(&snap, "textbox \"Email\"")?;
        let plan = self.target(&snap, "combobox \"Plan\"")?;
        let terms = self.target(&snap, "checkbox \"I agree\"")?;
        let submit = self.target(&snap, "button \"Create account\"")?;
        let mut bytes = 0;
        for step in [
            self.type_text(&name, "Ada"),
            self.type_text(&email, "ada@example.test"),
            self.select(&plan, "pro", "Pro plan"),
            self.click(&terms),
            self.click(&submit),
            self.evaluate("document.getElementById('result').textContent"),
        ] {
            bytes += self.run(step).await?.bytes;
        }
        let read = self
            .run(self.evaluate("document.getElementById('result').textContent"))
            .await?;
        if !read.text.contains("pro") || !read.text.contains("ada@example.test") {
            return Err(format!(
                "{}: the form flow did not submit: {}",
                self.kind.label(),
                read.text
            ));
        }
        Ok(Answer {
            ms: ms(started.elapsed()),
            bytes: bytes + read.bytes,
            text: read.text,
        })
    }
}

struct Answer {
    ms: f64,
    bytes: usize,
    text: String,
}

/// Time `f` REPS times after one warm-up run.
async fn timed<F, Fut>(mut f: F) -> Result<Stat, String>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<Answer, String>>,
{
    f().await?;
    let mut times = Vec::with_capacity(REPS);
    let mut bytes = 0;
    for _ in 0..REPS {
        let a = f().await?;
        times.push(a.ms);
        bytes = a.bytes;
    }
    Ok(stat(times, bytes))
}

const STEPS: &[&str] = &[
    "ping",
    "navigate",
    "snapshot (form)",
    "snapshot (5,000 elements)",
    "click",
    "type",
    "select",
    "evaluate 1+1",
    "screenshot (viewport)",
    "console (50 messages)",
    "form flow",
];

/// Every step on one server; a step it cannot do is left out with the reason.
async fn steps(s: &Server, site: &Site) -> (BTreeMap<&'static str, Stat>, Vec<String>) {
    let mut out = BTreeMap::new();
    let mut problems = Vec::new();
    let form = site.url("form.html");
    macro_rules! step {
        ($name:expr, $body:expr) => {
            match $body {
                Ok(stat) => {
                    out.insert($name, stat);
                }
                Err(why) => problems.push(format!("{}: {why}", $name)),
            }
        };
    }
    step!(
        "ping",
        async {
            let mut t = Vec::new();
            s.ping().await?;
            for _ in 0..REPS {
                t.push(s.ping().await?);
            }
            Ok::<_, String>(stat(t, 0))
        }
        .await
    );
    step!("navigate", timed(|| s.run(s.navigate(&form))).await);
    step!("snapshot (form)", timed(|| s.run(s.snapshot())).await);
    let snap = s
        .run(s.snapshot())
        .await
        .map(|a| a.text)
        .unwrap_or_default();
    let email = s.target(&snap, "textbox \"Email\"");
    let plan = s.target(&snap, "combobox \"Plan\"");
    let terms = s.target(&snap, "checkbox \"I agree\"");
    match terms {
        Ok(t) => step!("click", timed(|| s.run(s.click(&t))).await),
        Err(why) => problems.push(why),
    }
    match email {
        Ok(t) => step!(
            "type",
            timed(|| s.run(s.type_text(&t, "ada@example.test"))).await
        ),
        Err(why) => problems.push(why),
    }
    match plan {
        Ok(t) => step!(
            "select",
            timed(|| s.run(s.select(&t, "pro", "Pro plan"))).await
        ),
        Err(why) => problems.push(why),
    }
    step!("evaluate 1+1", timed(|| s.run(s.evaluate("1+1"))).await);
    step!(
        "screenshot (viewport)",
        timed(|| s.run(s.screenshot())).await
    );
    step!("form flow", timed(|| s.form_flow(&form)).await);
    match s.run(s.navigate(&site.url("console.html"))).await {
        Ok(_) => step!("console (50 messages)", timed(|| s.run(s.console())).await),
        Err(why) => problems.push(why),
    }
    match s.run(s.navigate(&site.url("big.html"))).await {
        Ok(_) => step!(
            "snapshot (5,000 elements)",
            timed(|| s.run(s.snapshot())).await
        ),
        Err(why) => problems.push(why),
    }
    (out, problems)
}

/// The same operations as raw CDP commands on kapture's own browser: the floor.
async fn floor(raw: &mut RawCdp, site: &Site) -> Result<BTreeMap<&'static str, Stat>, String> {
    let mut out = BTreeMap::new();
    let session = raw.attach_page("big.html").await?;
    let s = Some(session.as_str());
    raw.send(s, "Page.enable", json!({})).await?;
    raw.send(s, "Runtime.enable", json!({})).await?;
    let form = site.url("form.html");
    macro_rules! floor_step {
        ($name:expr, $body:expr) => {{
            let mut times = Vec::new();
            let mut bytes = 0;
            for i in 0..=REPS {
                let started = Instant::now();
                let b: usize = $body;
                if i > 0 {
                    times.push(ms(started.elapsed()));
                    bytes = b;
                }
            }
            out.insert($name, stat(times, bytes));
        }};
    }
    let eval =
        |expr: &str| json!({"expression": expr, "returnByValue": true, "awaitPromise": true});
    floor_step!("snapshot (5,000 elements)", {
        raw.answer_bytes(s, "Accessibility.getFullAXTree", json!({}))
            .await?
    });
    floor_step!("navigate", {
        raw.send_until(
            s,
            "Page.navigate",
            json!({"url": form}),
            "Page.loadEventFired",
        )
        .await?
        .to_string()
        .len()
    });
    floor_step!("snapshot (form)", {
        raw.answer_bytes(s, "Accessibility.getFullAXTree", json!({}))
            .await?
    });
    // An input action: find the element's box, then press and release the mouse there.
    let rect = "(() => { const r = document.getElementById('terms').getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()";
    floor_step!("click", {
        let at = raw.send(s, "Runtime.evaluate", eval(rect)).await?;
        let (x, y) = (
            at["result"]["value"][0].clone(),
            at["result"]["value"][1].clone(),
        );
        for kind in ["mousePressed", "mouseReleased"] {
            raw.send(
                s,
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            )
            .await?;
        }
        0
    });
    floor_step!("type", {
        raw.send(
            s,
            "Runtime.evaluate",
            eval(
                "(() => { const e = document.getElementById('email'); e.focus(); e.select(); })()",
            ),
        )
        .await?;
        raw.send(s, "Input.insertText", json!({"text": "ada@example.test"}))
            .await?;
        0
    });
    floor_step!("select", {
        raw.send(s, "Runtime.evaluate", eval("(() => { const e = document.getElementById('plan'); e.value = 'pro'; e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); })()"))
            .await?
            .to_string()
            .len()
    });
    floor_step!("evaluate 1+1", {
        raw.send(s, "Runtime.evaluate", eval("1+1"))
            .await?
            .to_string()
            .len()
    });
    floor_step!("screenshot (viewport)", {
        raw.answer_bytes(
            s,
            "Page.captureScreenshot",
            json!({"format": "jpeg", "quality": 80}),
        )
        .await?
    });
    // Console messages arrive as events a client keeps; reading 50 is one round trip.
    floor_step!("console (50 messages)", {
        raw.send(s, "Runtime.evaluate", eval("0"))
            .await?
            .to_string()
            .len()
    });
    Ok(out)
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
    std::fs::write(
        dir.join("package.json"),
        json!({"name": "kapture-bench-peers", "private": true, "dependencies": deps}).to_string(),
    )
    .map_err(|e| e.to_string())?;
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

/// Resident memory of every process below `pid` (its browser), in KiB.
fn tree_rss(pid: u32) -> u64 {
    kapture_e2e::children_of(pid)
        .into_iter()
        .map(|c| kapture_e2e::proc_kib(c, "VmRSS:") + tree_rss(c))
        .sum()
}

/// Cold starts: spawn → initialize, → tools/list, → the first page loaded.
async fn cold(kind: Kind, peers: &Path, site: &Site) -> Result<[Stat; 3], String> {
    let (mut init, mut list, mut page) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..COLD_REPS {
        let started = Instant::now();
        let (s, i, l) = Server::start(kind, peers, false).await?;
        let loaded = s
            .run(s.navigate(&site.url("form.html")))
            .await
            .map(|_| ms(started.elapsed()));
        s.stop().await;
        init.push(i);
        list.push(l);
        page.push(loaded?);
    }
    Ok([stat(init, 0), stat(list, 0), stat(page, 0)])
}

fn cell(s: Option<&Stat>) -> String {
    s.map(|s| format!("{:>8.1} {:>8.1} {:>9}", s.median, s.p90, s.bytes))
        .unwrap_or_else(|| format!("{:>8} {:>8} {:>9}", "—", "—", "—"))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let site = Site::start().expect("test pages");
    let peers = if std::env::var("KAPTURE_BENCH_PEERS").as_deref() == Ok("0") {
        Err("KAPTURE_BENCH_PEERS=0".to_string())
    } else {
        install_peers()
    };
    let mut kinds = vec![Kind::Kapture];
    match &peers {
        Ok(_) => kinds.extend([Kind::Playwright, Kind::DevTools]),
        Err(why) => println!("peers skipped: {why}"),
    }
    let peer_dir = peers.clone().unwrap_or_default();

    let mut results: BTreeMap<Kind, BTreeMap<&'static str, Stat>> = BTreeMap::new();
    let mut memory: BTreeMap<Kind, (u64, u64)> = BTreeMap::new();
    let mut floor_stats = BTreeMap::new();
    for kind in kinds.clone() {
        let (server, _, _) = match Server::start(kind, &peer_dir, kind == Kind::Kapture).await {
            Ok(s) => s,
            Err(why) => {
                println!("{} skipped: {why}", kind.label());
                kinds.retain(|k| *k != kind);
                continue;
            }
        };
        let (stats, problems) = steps(&server, &site).await;
        for p in problems {
            println!("{}: {p}", kind.label());
        }
        if kind == Kind::Kapture {
            // The floor on the very browser kapture drives (its tab left on big.html).
            let profile_pid = server.pid;
            match RawCdp::connect(&browser_profile(profile_pid)).await {
                Ok(mut raw) => match floor(&mut raw, &site).await {
                    Ok(f) => floor_stats = f,
                    Err(why) => println!("raw CDP floor skipped: {why}"),
                },
                Err(why) => println!("raw CDP floor skipped: {why}"),
            }
        }
        memory.insert(
            kind,
            (
                kapture_e2e::proc_kib(server.pid, "VmHWM:"),
                tree_rss(server.pid),
            ),
        );
        results.insert(kind, stats);
        server.stop().await;
    }

    println!();
    println!("per step: median and p90 ms over {REPS} runs after a warm-up, and answer bytes");
    print!(
        "{:<26} {:>8} {:>8} {:>9}  {:>8}",
        "step", "kapture", "p90", "bytes", "CDP"
    );
    for k in &kinds[1..] {
        print!("  {:>26}", k.label());
    }
    println!("  {:>9}", "ratio");
    for step in STEPS {
        let ours = results.get(&Kind::Kapture).and_then(|r| r.get(step));
        print!("{:<26} {}", step, cell(ours));
        match floor_stats.get(step) {
            Some(f) => print!("  {:>8.1}", f.median),
            None => print!("  {:>8}", "—"),
        }
        let mut best: Option<f64> = None;
        for k in &kinds[1..] {
            let theirs = results.get(k).and_then(|r| r.get(step));
            print!("  {}", cell(theirs));
            if let Some(t) = theirs {
                best = Some(best.map_or(t.median, |b: f64| b.min(t.median)));
            }
        }
        match (ours, best) {
            (Some(o), Some(b)) if b > 0.0 => println!("  {:>8.2}×", o.median / b),
            _ => println!("  {:>9}", "—"),
        }
    }

    println!();
    println!("cold start, median (p90) ms over {COLD_REPS} starts: spawn → initialize / → tools/list / → first page loaded");
    let mut colds: BTreeMap<Kind, [Stat; 3]> = BTreeMap::new();
    for kind in &kinds {
        let c = cold(*kind, &peer_dir, &site).await;
        if let Ok(c) = &c {
            colds.insert(*kind, *c);
        }
        match c {
            Ok([i, l, p]) => println!(
                "{:<16} {:>7.1} ({:.1}) {:>9.1} ({:.1}) {:>9.1} ({:.1})",
                kind.label(),
                i.median,
                i.p90,
                l.median,
                l.p90,
                p.median,
                p.p90
            ),
            Err(why) => println!("{:<16} skipped: {why}", kind.label()),
        }
    }

    println!();
    println!("memory: server peak RSS (VmHWM) / its browser's RSS at the end, MiB");
    for (kind, (server, browser)) in &memory {
        println!(
            "{:<16} {:>7.1} / {:.1}",
            kind.label(),
            *server as f64 / 1024.0,
            *browser as f64 / 1024.0
        );
    }
    let wasm = target_dir().join("extension").join("ext_core_bg.wasm");
    if let Ok(bytes) = std::fs::read(&wasm) {
        let gz = std::process::Command::new("gzip")
            .args(["-9", "-c"])
            .arg(&wasm)
            .output()
            .map(|o| o.stdout.len())
            .unwrap_or(0);
        println!(
            "extension WASM: {:.2} MB raw, {:.2} MB gzip",
            bytes.len() as f64 / 1e6,
            gz as f64 / 1e6
        );
    }
    println!("chromium: {}", chromium().display());

    // The goals, each with how far from it this run is.
    println!();
    println!("goals:");
    let ours = results.get(&Kind::Kapture).cloned().unwrap_or_default();
    let faster_peer = |step: &str| {
        kinds[1..]
            .iter()
            .filter_map(|k| results.get(k)?.get(step))
            .map(|s| s.median)
            .reduce(f64::min)
    };
    let verdict = |what: String, value: f64, limit: f64, unit: &str| {
        if value <= limit {
            println!("  met     {what}: {value:.1} {unit} ≤ {limit:.1}");
        } else {
            println!(
                "  MISSED  {what}: {value:.1} {unit} > {limit:.1} (by {:.1} {unit})",
                value - limit
            );
        }
    };
    for step in [
        "click",
        "type",
        "select",
        "evaluate 1+1",
        "console (50 messages)",
        "screenshot (viewport)",
    ] {
        let (Some(o), Some(f)) = (ours.get(step), floor_stats.get(step)) else {
            continue;
        };
        verdict(
            format!("{step} ≤ 2× raw CDP + 3 ms"),
            o.median,
            2.0 * f.median + 3.0,
            "ms",
        );
        if let Some(p) = faster_peer(step) {
            verdict(format!("{step} ≤ ½ faster peer"), o.median, p / 2.0, "ms");
        }
    }
    if let Some([_, list, page]) = colds.get(&Kind::Kapture) {
        verdict("spawn → tools/list".into(), list.median, 50.0, "ms");
        let peer_page = kinds[1..]
            .iter()
            .filter_map(|k| colds.get(k))
            .map(|c| c[2].median)
            .reduce(f64::min);
        if let Some(p) = peer_page {
            verdict(
                "spawn → first page ≤ faster peer".into(),
                page.median,
                p,
                "ms",
            );
        }
    }
    if let Some(big) = ours.get("snapshot (5,000 elements)") {
        verdict(
            "5,000-element snapshot time".into(),
            big.median,
            300.0,
            "ms",
        );
        let smaller = kinds[1..]
            .iter()
            .filter_map(|k| results.get(k)?.get("snapshot (5,000 elements)"))
            .map(|s| s.bytes)
            .min();
        if let Some(b) = smaller {
            verdict(
                "5,000-element snapshot ≤ ⅕ smaller peer's bytes".into(),
                big.bytes as f64,
                b as f64 / 5.0,
                "B",
            );
        }
    }
    if let Some((rss, _)) = memory.get(&Kind::Kapture) {
        verdict("kapture RSS".into(), *rss as f64 / 1024.0, 20.0, "MiB");
    }
    if let Ok(meta) = std::fs::metadata(&wasm) {
        verdict(
            "extension WASM raw".into(),
            meta.len() as f64 / 1e6,
            1.5,
            "MB",
        );
    }
}

/// The profile folder of the browser `kapture` (pid) launched, from its command line.
fn browser_profile(kapture: u32) -> PathBuf {
    fn find(pid: u32) -> Option<PathBuf> {
        for child in kapture_e2e::children_of(pid) {
            let cmdline =
                std::fs::read_to_string(format!("/proc/{child}/cmdline")).unwrap_or_default();
            if let Some(dir) = cmdline
                .split('\0')
                .find_map(|a| a.strip_prefix("--user-data-dir="))
            {
                return Some(PathBuf::from(dir));
            }
            if let Some(dir) = find(child) {
                return Some(dir);
            }
        }
        None
    }
    find(kapture).unwrap_or_default()
}
