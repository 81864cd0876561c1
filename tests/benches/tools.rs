//! Tool-speed benchmark, one run on one machine and browser: kapture driven by a real MCP
//! client over stdio on both engines (the extension in a browser it launched, and the
//! native engine, `--browser cdp`, on a DevTools browser the bench started), the same
//! operations as raw CDP on each engine's browser (the physical floor: bare, and
//! like-for-like with the settle work kapture's answer stands for), and — when they can run
//! here — Playwright MCP (as it runs by default, and with its settle wait off) and Chrome
//! DevTools MCP from npm pointed at the same Chromium. Per
//! step: median and p90 wall time over `KAPTURE_BENCH_REPS` runs (default 20) after a
//! warm-up, and the answer's bytes; then cold starts, memory and the extension's size.

// A benchmark report is printed for people: stdout is its place.
#![allow(clippy::print_stdout)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use kapture_e2e::cdp::RawCdp;
use kapture_e2e::devtools::DevToolsBrowser;
use kapture_e2e::{chromium, kapture_bin, target_dir, QUIET_CHROMIUM_FLAGS, RESOLVER_RULES};
use rmcp::model::{CallToolRequestParams, ClientRequest, RequestNoParam};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use www_test_pages::Site;

/// Timed runs per step (after one warm-up run); `KAPTURE_BENCH_REPS` sets fewer for a
/// quick look on a busy machine.
fn reps() -> usize {
    env_count("KAPTURE_BENCH_REPS", 20)
}

/// Cold starts per server (`KAPTURE_BENCH_COLD_REPS`; 0 leaves them out).
fn cold_reps() -> usize {
    env_count("KAPTURE_BENCH_COLD_REPS", 20)
}

fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
/// One call may take this long before the bench gives up on the server.
const CALL_LIMIT: Duration = Duration::from_secs(60);
/// The peers, pinned; installed into `target/bench-peers` on first use.
const PEERS: &[(&str, &str)] = &[
    ("@playwright/mcp", "0.0.83"),
    ("chrome-devtools-mcp", "1.11.0"),
];

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Kind {
    /// kapture with its extension in a browser it launched.
    Kapture,
    /// kapture's native engine (`--browser cdp`) on a DevTools browser the bench started.
    Native,
    Playwright,
    /// Playwright MCP with its wait after actions off (`--timeout-settle 0`).
    PlaywrightQuick,
    DevTools,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::Kapture => "kapture",
            Kind::Native => "kapture-cdp",
            Kind::Playwright => "playwright-mcp",
            Kind::PlaywrightQuick => "playwright-mcp settle 0",
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
    /// The native engine's browser: the bench's own, killed after kapture stopped.
    browser: Option<DevToolsBrowser>,
    _dir: tempfile::TempDir,
}

/// The command that starts a server of `kind` (its browser headless, isolated, quiet);
/// `endpoint` is the DevTools browser the native engine attaches to.
fn command(
    kind: Kind,
    peers: &Path,
    dir: &Path,
    debug_port: bool,
    endpoint: Option<&str>,
) -> tokio::process::Command {
    let mut flags: Vec<String> = QUIET_CHROMIUM_FLAGS.iter().map(|s| s.to_string()).collect();
    flags.push(RESOLVER_RULES.to_string());
    match kind {
        Kind::Native => {
            let mut cmd = tokio::process::Command::new(kapture_bin());
            cmd.args(["--browser", "cdp", "--cdp-endpoint"])
                .arg(endpoint.unwrap_or_default())
                // The bench's own browser: judged as a launched one, like the extension's.
                .args(["--endpoint-browser", "throwaway"])
                .args(["--port", "0"])
                .arg("--runtime-dir")
                .arg(dir.join("run"))
                .arg("--audit-dir")
                .arg(dir.join("audit"))
                .arg("--data-dir")
                .arg(dir.join("data"))
                .env("XDG_CONFIG_HOME", dir.join("config"))
                .env("KAPTURE_KEYRING", "off");
            cmd
        }
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
        Kind::Playwright | Kind::PlaywrightQuick => {
            let config = json!({"browser": {"browserName": "chromium", "isolated": true,
                "launchOptions": {"executablePath": chromium(), "headless": true, "args": flags}}});
            let path = dir.join("playwright.json");
            std::fs::write(&path, config.to_string()).expect("peer config");
            let mut cmd = tokio::process::Command::new("node");
            cmd.arg(peers.join("node_modules/@playwright/mcp/cli.js"))
                .arg("--config")
                .arg(path)
                .current_dir(dir);
            if kind == Kind::PlaywrightQuick {
                cmd.args(["--timeout-settle", "0"]);
            }
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
        // The native engine's clock starts with its browser: the peers and the extension
        // engine start theirs too.
        let started = Instant::now();
        let (browser, endpoint) = if kind == Kind::Native {
            let browser = DevToolsBrowser::start();
            let endpoint = browser.endpoint().await;
            (Some(browser), Some(endpoint))
        } else {
            (None, None)
        };
        let mut cmd = command(kind, peers, dir.path(), debug_port, endpoint.as_deref());
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
            browser,
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
        drop(self.browser);
    }

    /// The profile of the browser this server drives, when it is open to raw CDP.
    fn profile(&self) -> Option<PathBuf> {
        match (&self.browser, self.kind) {
            (Some(b), _) => Some(b.profile().to_path_buf()),
            (None, Kind::Kapture) => Some(browser_profile(self.pid)),
            _ => None,
        }
    }

    // The same operation in each server's own words.

    fn navigate(&self, url: &str) -> (&'static str, Value) {
        match self.kind {
            Kind::Kapture | Kind::Native | Kind::Playwright | Kind::PlaywrightQuick => {
                ("browser_navigate", json!({"url": url}))
            }
            Kind::DevTools => ("navigate_page", json!({"url": url})),
        }
    }

    fn snapshot(&self) -> (&'static str, Value) {
        match self.kind {
            Kind::Kapture | Kind::Native | Kind::Playwright | Kind::PlaywrightQuick => {
                ("browser_snapshot", json!({}))
            }
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
            Kind::Kapture | Kind::Native => {
                json!({"ref": between("[ref=", ']')?, "element": needle})
            }
            Kind::Playwright | Kind::PlaywrightQuick => {
                json!({"target": between("[ref=", ']')?, "element": needle})
            }
            Kind::DevTools => json!({"uid": between("uid=", ' ')?}),
        })
    }

    fn click(&self, target: &Value) -> (&'static str, Value) {
        match self.kind {
            Kind::Kapture | Kind::Native | Kind::Playwright | Kind::PlaywrightQuick => {
                ("browser_click", target.clone())
            }
            Kind::DevTools => ("click", target.clone()),
        }
    }

    fn type_text(&self, target: &Value, text: &str) -> (&'static str, Value) {
        let mut args = target.clone();
        match self.kind {
            Kind::Kapture | Kind::Native | Kind::Playwright | Kind::PlaywrightQuick => {
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
            Kind::Kapture | Kind::Native | Kind::Playwright | Kind::PlaywrightQuick => {
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
            Kind::Kapture | Kind::Native => ("browser_evaluate", json!({"function": expr})),
            Kind::Playwright | Kind::PlaywrightQuick => (
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
            Kind::Kapture | Kind::Native | Kind::Playwright | Kind::PlaywrightQuick => {
                ("browser_take_screenshot", json!({}))
            }
            Kind::DevTools => ("take_screenshot", json!({})),
        }
    }

    fn console(&self) -> (&'static str, Value) {
        match self.kind {
            Kind::Kapture | Kind::Native => ("browser_console_messages", json!({"max": 50})),
            Kind::Playwright | Kind::PlaywrightQuick => {
                ("browser_console_messages", json!({"level": "debug"}))
            }
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
    let mut times = Vec::with_capacity(reps());
    let mut bytes = 0;
    for _ in 0..reps().max(1) {
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
    "click (two controls in turn)",
    "link navigation",
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
    step!("navigate", timed(|| s.run(s.navigate(&form))).await);
    // After the first page: right after the start, the browser still starting on the same
    // cores slows every process's answers, and ping measures the server's own round trip.
    step!(
        "ping",
        async {
            let mut t = Vec::new();
            s.ping().await?;
            for _ in 0..reps().max(1) {
                t.push(s.ping().await?);
            }
            Ok::<_, String>(stat(t, 0))
        }
        .await
    );
    step!("snapshot (form)", timed(|| s.run(s.snapshot())).await);
    let snap = s
        .run(s.snapshot())
        .await
        .map(|a| a.text)
        .unwrap_or_default();
    let terms = s.target(&snap, "checkbox \"I agree\"");
    match &terms {
        Ok(t) => step!("click", timed(|| s.run(s.click(t))).await),
        Err(why) => problems.push(why.clone()),
    }
    // A click where the pointer is not yet: each one on the other of two controls.
    match (terms, s.target(&snap, "radio \"Phone\"")) {
        (Err(_), _) => {}
        (Ok(a), Ok(b)) => {
            let turn = std::cell::Cell::new(false);
            step!(
                "click (two controls in turn)",
                timed(|| {
                    turn.set(!turn.get());
                    s.run(s.click(if turn.get() { &a } else { &b }))
                })
                .await
            )
        }
        (Ok(_), Err(why)) => problems.push(why),
    }
    step!("link navigation", link_navigation(s, site).await);
    // Back on the form for the steps below.
    let snap = s.open(&form).await.unwrap_or_else(|why| {
        problems.push(why);
        String::new()
    });
    let email = s.target(&snap, "textbox \"Email\"");
    let plan = s.target(&snap, "combobox \"Plan\"");
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

/// A click on a link to another page, timed from the click to its answer (the page
/// opened and looked at before each, untimed); then the new page must be the one shown.
async fn link_navigation(s: &Server, site: &Site) -> Result<Stat, String> {
    let from = site.url("page-a.html");
    let mut times = Vec::new();
    let mut bytes = 0;
    for i in 0..=reps().max(1) {
        let snap = s.open(&from).await?;
        let link = s.target(&snap, "link \"Go to B\"")?;
        let answer = s.run(s.click(&link)).await?;
        if i > 0 {
            times.push(answer.ms);
            bytes = answer.bytes;
        }
        // A server that answers before the page went is not waited for here, but it does
        // not pass as having gone elsewhere: the next page must come (bounded).
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let title = s.run(s.evaluate("document.title")).await;
            if title.as_ref().is_ok_and(|t| t.text.contains("Page B")) {
                break;
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "the link did not lead to page B: {title:?}",
                    title = title.map(|t| t.text)
                ));
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    Ok(stat(times, bytes))
}

/// The raw-CDP floor on one browser, two ways.
#[derive(Default)]
struct Floor {
    /// The operation alone: an action's input events and nothing after them.
    bare: BTreeMap<&'static str, Stat>,
    /// The work kapture's answer stands for: an action's input, then the same settle work
    /// (for a click, the page asked for its next rendered frame, then the navigation signals
    /// read, as kapture's `settle`), then where the page is (URL, title).
    /// Only for the steps where it differs from `bare`.
    like: BTreeMap<&'static str, Stat>,
}

impl Floor {
    /// The like-for-like floor of `step` (the bare one where they are the same work).
    fn like(&self, step: &str) -> Option<&Stat> {
        self.like.get(step).or_else(|| self.bare.get(step))
    }
}

/// A `MutationObserver` in the page's main world recording its last DOM change, as
/// kapture's prelude does in its own world (`style` attributes ignored there too).
const OBSERVE: &str = "(() => { if (window.__floor) return; window.__floor = { changedAt: performance.now() }; new MutationObserver((records) => { if (records.some((r) => r.attributeName !== 'style')) window.__floor.changedAt = performance.now(); }).observe(document, { subtree: true, childList: true, attributes: true, characterData: true }); })()";

/// The `change` event leaving a typed-in field fires.
const CHANGE: &str =
    "document.getElementById('email').dispatchEvent(new Event('change', { bubbles: true }))";

/// The same operations as raw CDP commands on the browser a kapture drives (its tab left
/// on big.html): the floor.
async fn floor(raw: &mut RawCdp, site: &Site) -> Result<Floor, String> {
    use ext_core::cdp::js;
    let mut out = Floor::default();
    let session = raw.attach_page("big.html").await?;
    let s = Some(session.as_str());
    raw.send(s, "Page.enable", json!({})).await?;
    raw.send(s, "Runtime.enable", json!({})).await?;
    let form = site.url("form.html");
    let reps = reps().max(1);
    macro_rules! floor_step {
        ($into:expr, $name:expr, $body:expr) => {{
            let mut times = Vec::new();
            let mut bytes = 0;
            for i in 0..=reps {
                let started = Instant::now();
                let b: usize = $body;
                if i > 0 {
                    times.push(ms(started.elapsed()));
                    bytes = b;
                }
            }
            $into.insert($name, stat(times, bytes));
        }};
    }
    let eval =
        |expr: &str| json!({"expression": expr, "returnByValue": true, "awaitPromise": true});
    // kapture's own scripts, run as kapture runs them (it in its isolated world, here in
    // the main world: the same cost), with the main-world observer standing in for `K`.
    // An action's look at the next rendered frame (`cdp::settle`).
    let next_paint = format!("({})()", js::NEXT_PAINT);
    let page_info = format!("({})()", js::PAGE_INFO);
    floor_step!(out.bare, "snapshot (5,000 elements)", {
        raw.answer_bytes(s, "Accessibility.getFullAXTree", json!({}))
            .await?
    });
    floor_step!(out.bare, "navigate", {
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
    raw.send(s, "Runtime.evaluate", eval(OBSERVE)).await?;
    floor_step!(out.bare, "snapshot (form)", {
        raw.answer_bytes(s, "Accessibility.getFullAXTree", json!({}))
            .await?
    });
    // An input action: find the element's box, then press and release the mouse there.
    let rect = "(() => { const r = document.getElementById('terms').getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()";
    let mut navigations = 0;
    for like in [false, true] {
        let into = if like { &mut out.like } else { &mut out.bare };
        floor_step!(into, "click", {
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
            if like {
                // The page handled the click and rendered a frame: did it ask to navigate?
                raw.send(s, "Runtime.evaluate", eval(&next_paint)).await?;
                let seen = raw.watch(s, Duration::ZERO).await?;
                navigations += seen
                    .iter()
                    .filter(|(_, m)| {
                        matches!(
                            m.as_str(),
                            "Page.frameRequestedNavigation"
                                | "Page.frameStartedNavigating"
                                | "Page.navigatedWithinDocument"
                        )
                    })
                    .count();
                raw.send(s, "Runtime.evaluate", eval(&page_info)).await?;
            }
            0
        });
        floor_step!(into, "type", {
            raw.send(
                s,
                "Runtime.evaluate",
                eval("(() => { const e = document.getElementById('email'); e.focus(); e.select(); })()"),
            )
            .await?;
            raw.send(s, "Input.insertText", json!({"text": "ada@example.test"}))
                .await?;
            if like {
                // kapture fires `change` as leaving the field would, then says where the
                // page is.
                raw.send(s, "Runtime.evaluate", eval(CHANGE)).await?;
                raw.send(s, "Runtime.evaluate", eval(&page_info)).await?;
            }
            0
        });
    }
    // kapture's select answers the options chosen, not where the page is: one script, as here.
    floor_step!(out.bare, "select", {
        raw.send(s, "Runtime.evaluate", eval("(() => { const e = document.getElementById('plan'); e.value = 'pro'; e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); })()"))
            .await?
            .to_string()
            .len()
    });
    if navigations > 0 {
        return Err(format!(
            "the floor's clicks started {navigations} navigations: not the page measured"
        ));
    }
    floor_step!(out.bare, "evaluate 1+1", {
        raw.send(s, "Runtime.evaluate", eval("1+1"))
            .await?
            .to_string()
            .len()
    });
    floor_step!(out.bare, "screenshot (viewport)", {
        raw.answer_bytes(
            s,
            "Page.captureScreenshot",
            json!({"format": "jpeg", "quality": 80}),
        )
        .await?
    });
    // Console messages arrive as events a client keeps; reading 50 is one round trip.
    floor_step!(out.bare, "console (50 messages)", {
        raw.send(s, "Runtime.evaluate", eval("0"))
            .await?
            .to_string()
            .len()
    });
    Ok(out)
}

/// The first sign of a navigation the browser gives after a click.
const NAV_SIGNALS: &[&str] = &[
    "Page.frameRequestedNavigation",
    "Page.frameStartedNavigating",
    "Page.frameStartedLoading",
    "Page.navigatedWithinDocument",
];

/// Evidence for the grace window (raw CDP, `nav-form.html`): how long after a click's press
/// the first navigation signal came, per kind of click, watching 400 ms after the mouse
/// events were answered; `None` when none came. Could the 150 ms be ended early
/// when no signal came yet? Only if every navigation signals before then.
async fn nav_signals(
    raw: &mut RawCdp,
    site: &Site,
) -> Result<Vec<(&'static str, Vec<Option<f64>>)>, String> {
    let session = raw.attach_page("form.html").await?;
    let s = Some(session.as_str());
    raw.send(s, "Page.enable", json!({})).await?;
    let page = site.url("nav-form.html?delay=0");
    let mut out = Vec::new();
    for (what, id) in [
        ("submit (POST form)", "save"),
        ("link", "to-result"),
        ("timer navigating 50 ms later", "later"),
        ("button that navigates nowhere", "stay"),
    ] {
        let mut seen = Vec::new();
        for _ in 0..5 {
            raw.send_until(
                s,
                "Page.navigate",
                json!({"url": page}),
                "Page.loadEventFired",
            )
            .await?;
            let rect = format!("(() => {{ const r = document.getElementById('{id}').getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()");
            let at = raw
                .send(
                    s,
                    "Runtime.evaluate",
                    json!({"expression": rect, "returnByValue": true}),
                )
                .await?;
            let (x, y) = (
                at["result"]["value"][0].clone(),
                at["result"]["value"][1].clone(),
            );
            // From the press: events that come while the mouse events are answered count.
            raw.keep_events(true);
            let pressed = tokio::time::Instant::now();
            for kind in ["mousePressed", "mouseReleased"] {
                raw.send(
                    s,
                    "Input.dispatchMouseEvent",
                    json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
                )
                .await?;
            }
            let answered = ms(pressed.elapsed());
            let early = raw.keep_events(false);
            let events = raw.watch(s, Duration::from_millis(400)).await?;
            let first_early = early
                .iter()
                .find(|(_, on, m)| on.as_deref() == s && NAV_SIGNALS.contains(&m.as_str()))
                .map(|(at, _, _)| ms(at.duration_since(pressed)));
            let first_late = events
                .iter()
                .find(|(_, m)| NAV_SIGNALS.contains(&m.as_str()))
                .map(|(at, _)| answered + at);
            seen.push(first_early.or(first_late));
        }
        out.push((what, seen));
    }
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
    for _ in 0..cold_reps() {
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
    let mut kinds = vec![Kind::Kapture, Kind::Native];
    match &peers {
        Ok(_) => kinds.extend([Kind::Playwright, Kind::PlaywrightQuick, Kind::DevTools]),
        Err(why) => println!("peers skipped: {why}"),
    }
    let peer_dir = peers.clone().unwrap_or_default();

    let mut results: BTreeMap<Kind, BTreeMap<&'static str, Stat>> = BTreeMap::new();
    let mut memory: BTreeMap<Kind, (u64, u64)> = BTreeMap::new();
    // The floor on the very browser each kapture engine drives.
    let mut floors: BTreeMap<Kind, Floor> = BTreeMap::new();
    let mut signals = Vec::new();
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
        if let Some(profile) = server.profile() {
            match RawCdp::connect(&profile).await {
                Ok(mut raw) => match floor(&mut raw, &site).await {
                    Ok(f) => {
                        floors.insert(kind, f);
                        if kind == Kind::Native {
                            match nav_signals(&mut raw, &site).await {
                                Ok(n) => signals = n,
                                Err(why) => println!("navigation signals not measured: {why}"),
                            }
                        }
                    }
                    Err(why) => {
                        println!("raw CDP floor on {}'s browser skipped: {why}", kind.label())
                    }
                },
                Err(why) => println!("raw CDP floor on {}'s browser skipped: {why}", kind.label()),
            }
        }
        let browser_rss = match &server.browser {
            Some(b) => kapture_e2e::proc_kib(b.pid(), "VmRSS:") + tree_rss(b.pid()),
            None => tree_rss(server.pid),
        };
        memory.insert(
            kind,
            (kapture_e2e::proc_kib(server.pid, "VmHWM:"), browser_rss),
        );
        results.insert(kind, stats);
        server.stop().await;
    }
    let engines: Vec<Kind> = kinds
        .iter()
        .copied()
        .filter(|k| matches!(k, Kind::Kapture | Kind::Native))
        .collect();
    let others: Vec<Kind> = kinds
        .iter()
        .copied()
        .filter(|k| !engines.contains(k))
        .collect();
    // The table's floor: the one on the native engine's browser (what its goal is judged
    // on), else the extension's.
    let table_floor = floors
        .get(&Kind::Native)
        .or_else(|| floors.get(&Kind::Kapture));

    println!();
    println!(
        "per step: median and p90 ms over {} runs after a warm-up, and answer bytes; CDP = the raw-CDP floor, bare (the operation alone) and like-for-like (the same settle work as kapture's answer)",
        reps()
    );
    print!("{:<26}", "step");
    for k in engines.iter().chain(&others) {
        print!("  {:>26}", k.label());
    }
    print!("  {:>8} {:>8}", "CDP bare", "CDP like");
    for k in &engines {
        print!("  {:>12}", format!("{}÷peer", k.label()));
    }
    println!();
    for step in STEPS {
        print!("{step:<26}");
        for k in engines.iter().chain(&others) {
            print!("  {}", cell(results.get(k).and_then(|r| r.get(step))));
        }
        let f = |s: Option<&Stat>| {
            s.map_or_else(|| format!("{:>8}", "—"), |s| format!("{:>8.1}", s.median))
        };
        print!(
            "  {} {}",
            f(table_floor.and_then(|t| t.bare.get(step))),
            f(table_floor.and_then(|t| t.like(step)))
        );
        let best = others
            .iter()
            .filter_map(|k| results.get(k)?.get(step))
            .map(|s| s.median)
            .reduce(f64::min);
        for k in &engines {
            match (results.get(k).and_then(|r| r.get(step)), best) {
                (Some(o), Some(b)) if b > 0.0 => print!("  {:>11.2}×", o.median / b),
                _ => print!("  {:>12}", "—"),
            }
        }
        println!();
    }
    if floors.len() > 1 {
        println!();
        println!("raw-CDP floor on each engine's browser, median ms: bare / like-for-like");
        for step in STEPS {
            let Some(_) = floors.values().find_map(|f| f.bare.get(step)) else {
                continue;
            };
            print!("{step:<26}");
            for (k, f) in &floors {
                let show =
                    |s: Option<&Stat>| s.map_or("—".to_string(), |s| format!("{:.1}", s.median));
                print!(
                    "  {:>12}: {:>7} / {:<7}",
                    k.label(),
                    show(f.bare.get(step)),
                    show(f.like(step))
                );
            }
            println!();
        }
    }

    if !signals.is_empty() {
        println!();
        println!(
            "the first navigation signal after a click's press (raw CDP, 5 clicks each, ms; — = none within 400 ms of the release):"
        );
        for (what, seen) in &signals {
            let shown: Vec<String> = seen
                .iter()
                .map(|s| s.map_or("—".to_string(), |ms| format!("{ms:.1}")))
                .collect();
            println!("  {what:<32} {}", shown.join("  "));
        }
    }

    println!();
    println!(
        "cold start, median (p90) ms over {} starts: spawn → initialize / → tools/list / → first page loaded (kapture-cdp: from its browser's spawn)",
        cold_reps()
    );
    let mut colds: BTreeMap<Kind, [Stat; 3]> = BTreeMap::new();
    for kind in kinds.iter().filter(|_| cold_reps() > 0) {
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
        others
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
    // Issue 26, on the extension engine (the default), beside the fastest peer of this run
    // (Playwright MCP with and without its settle wait, DevTools MCP) and the raw-CDP floor
    // on kapture's own browser.
    for step in [
        "click",
        "click (two controls in turn)",
        "link navigation",
        "type",
        "select",
        "evaluate 1+1",
        "form flow",
    ] {
        if let (Some(o), Some(p)) = (ours.get(step), faster_peer(step)) {
            verdict(format!("{step} ≤ ½ fastest peer"), o.median, p / 2.0, "ms");
        }
    }
    if let Some(o) = ours.get("click") {
        verdict("click ≤ 30 ms".into(), o.median, 30.0, "ms");
    }
    for step in ["navigate", "screenshot (viewport)"] {
        let floor = floors.get(&Kind::Kapture).and_then(|f| f.like(step));
        if let (Some(o), Some(f)) = (ours.get(step), floor) {
            verdict(
                format!("{step} ≤ 1.1× raw CDP"),
                o.median,
                1.1 * f.median,
                "ms",
            );
        }
    }
    if let (Some(o), Some(p)) = (
        ours.get("console (50 messages)"),
        faster_peer("console (50 messages)"),
    ) {
        verdict("console ≤ 2× fastest peer".into(), o.median, 2.0 * p, "ms");
    }
    if let (Some(o), Some(p)) = (
        ours.get("snapshot (5,000 elements)"),
        faster_peer("snapshot (5,000 elements)"),
    ) {
        verdict(
            "5,000-element snapshot ≤ ½ fastest peer".into(),
            o.median,
            p / 2.0,
            "ms",
        );
    }
    // Issue 16: the native engine within 1.5× the raw-CDP floor + 1 ms, per action. Judged
    // on the like-for-like floor (the same settle work as kapture's answer), since the bare
    // floor skips work every answer of kapture's stands for (where the page is, and for a
    // click the look at the next rendered frame for a navigation it asked for).
    let native = results.get(&Kind::Native).cloned().unwrap_or_default();
    if let Some(f) = floors.get(&Kind::Native) {
        for step in [
            "navigate",
            "snapshot (form)",
            "click",
            "type",
            "select",
            "evaluate 1+1",
            "screenshot (viewport)",
            "console (50 messages)",
            "snapshot (5,000 elements)",
        ] {
            let (Some(n), Some(like), Some(bare)) =
                (native.get(step), f.like(step), f.bare.get(step))
            else {
                continue;
            };
            let floor_name = if f.like.contains_key(step) {
                "like-for-like CDP"
            } else {
                "raw CDP"
            };
            verdict(
                format!("kapture-cdp {step} ≤ 1.5× {floor_name} + 1 ms"),
                n.median,
                1.5 * like.median + 1.0,
                "ms",
            );
            if f.like.contains_key(step) {
                verdict(
                    format!("  (info) kapture-cdp {step} ≤ 1.5× bare CDP + 1 ms"),
                    n.median,
                    1.5 * bare.median + 1.0,
                    "ms",
                );
            }
        }
    }
    if let Some([_, list, page]) = colds.get(&Kind::Kapture) {
        verdict("spawn → tools/list".into(), list.median, 50.0, "ms");
        let peer_page = others
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
        let smaller = others
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
