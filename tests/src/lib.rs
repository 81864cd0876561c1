//! The end-to-end harness: start the real `kapture` binary (which launches a real headless
//! Chromium with the built extension) as a child process, speak MCP to it over stdio with
//! rmcp's client, and poll for conditions with a deadline instead of sleeping.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use base64::Engine as _;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};

/// Chromium must resolve nothing but loopback in tests.
pub const RESOLVER_RULES: &str = "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1";

/// [`RESOLVER_RULES`] plus `oop.test` resolved to 127.0.0.1: a site of its own on the test
/// server, so Chrome runs its frames in another process. A test's own rules come after
/// the default ones on the command line, and Chromium takes the last.
pub const OOP_TEST_RULES: &str =
    "--chromium-arg=--host-resolver-rules=MAP oop.test 127.0.0.1 , MAP * ~NOTFOUND , EXCLUDE 127.0.0.1";

pub mod agent;
pub mod cdp;
pub mod corpus;
pub mod devtools;
pub mod http;
pub mod panel;
pub mod pool;
pub mod side_panel;
pub mod tasks;
pub mod tls;
pub mod web_app;
pub mod widget;
pub mod x11;

/// The workspace's target folder.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("..")
                .join("target")
        })
}

/// Flags that keep a test browser quiet on a closed network (with `RESOLVER_RULES`).
pub const QUIET_CHROMIUM_FLAGS: &[&str] = &[
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
];

/// `name` as found on PATH.
/// What a test client tells kapture at `initialize`: its name, and whether it answers
/// elicitation (approvals asked of the client).
pub fn client_info(name: &str, answers_elicitation: bool) -> rmcp::model::ClientConfig {
    let capabilities = match answers_elicitation {
        true => json!({"elicitation": {"form": {}}}),
        false => json!({}),
    };
    serde_json::from_value(json!({
        "protocolVersion": "2025-06-18",
        "capabilities": capabilities,
        "clientInfo": {"name": name, "version": "1"},
    }))
    .expect("a client info")
}

/// A folder `name` in `parent` that only this user may use: kapture refuses a runtime
/// folder others could enter.
pub fn private_dir(parent: &Path, name: &str) -> PathBuf {
    let dir = parent.join(name);
    std::fs::create_dir_all(&dir).expect("a private folder");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
            .expect("a private folder's mode");
    }
    dir
}

pub fn on_path(name: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// The browser kapture's launcher would pick: `KAPTURE_CHROMIUM`, else a Chromium-family
/// browser on PATH.
pub fn chromium() -> PathBuf {
    if let Some(path) = std::env::var_os("KAPTURE_CHROMIUM").filter(|v| !v.is_empty()) {
        let path = PathBuf::from(path);
        return if path.components().count() == 1 {
            on_path(&path.to_string_lossy()).expect("KAPTURE_CHROMIUM is on PATH")
        } else {
            path
        };
    }
    [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
        "chrome",
    ]
    .iter()
    .find_map(|n| on_path(n))
    .expect("a Chromium-family browser on PATH (or KAPTURE_CHROMIUM)")
}

/// The built `kapture` binary (`KAPTURE_BIN`, else the debug build); the tests need
/// `cargo make build` (which `cargo make test` runs).
pub fn kapture_bin() -> PathBuf {
    let bin = std::env::var_os("KAPTURE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            target_dir()
                .join("debug")
                .join(format!("kapture{}", std::env::consts::EXE_SUFFIX))
        });
    assert!(
        bin.is_file(),
        "{} is missing: run `cargo make build` first",
        bin.display()
    );
    assert!(
        target_dir()
            .join("extension")
            .join("ext_core_bg.wasm")
            .is_file(),
        "the extension is not built in target/extension: run `cargo make build` first"
    );
    bin
}

/// Poll `check` until it returns `Some`, or panic after `limit` saying what was awaited.
pub async fn eventually<T, F, Fut>(what: &str, limit: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {limit:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// One tool result, flattened for assertions.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub text: String,
    pub is_error: bool,
    /// (mime type, decoded bytes) of each image block.
    pub images: Vec<(String, Vec<u8>)>,
    pub structured: Option<Value>,
}

impl Outcome {
    pub fn from(result: CallToolResult) -> Self {
        let json = serde_json::to_value(&result).unwrap_or_default();
        let mut text = Vec::new();
        let mut images = Vec::new();
        for block in json["content"].as_array().into_iter().flatten() {
            match block["type"].as_str() {
                Some("text") => text.push(block["text"].as_str().unwrap_or_default().to_string()),
                Some("image") => {
                    let data = base64::engine::general_purpose::STANDARD
                        .decode(block["data"].as_str().unwrap_or_default())
                        .expect("image data is base64");
                    images.push((
                        block["mimeType"].as_str().unwrap_or_default().to_string(),
                        data,
                    ));
                }
                _ => {}
            }
        }
        Outcome {
            text: text.join("\n"),
            is_error: result.is_error == Some(true),
            images,
            structured: result.structured_content,
        }
    }

    /// The stable error code of a failed call.
    pub fn code(&self) -> Option<String> {
        self.structured
            .as_ref()?
            .get("code")?
            .as_str()
            .map(str::to_string)
    }
}

/// The MCP client's handler: counts the server's notifications the tests look for, and,
/// when it declares elicitation, answers kapture's questions from a script.
#[derive(Debug, Clone, Default)]
pub struct Notices {
    tools_changed: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    elicit: Option<Elicit>,
    /// Every `notifications/progress` heard: (token, progress, message).
    progress: std::sync::Arc<std::sync::Mutex<Vec<(Value, f64, String)>>>,
}

/// How the scripted person answers one `elicitation/create`.
#[derive(Debug, Clone, PartialEq)]
pub enum Said {
    /// Accept with this value of the form's `answer` field.
    Accept(&'static str),
    Decline,
    Cancel,
    /// Never answer (kapture's approval timeout decides).
    Silent,
}

/// A client that supports elicitation: its scripted answers (in order; none left is a
/// decline) and the questions it was asked (message and requested schema).
#[derive(Debug, Clone, Default)]
pub struct Elicit {
    answers: std::sync::Arc<std::sync::Mutex<std::collections::VecDeque<Said>>>,
    asked: std::sync::Arc<std::sync::Mutex<Vec<(String, Value)>>>,
}

impl Elicit {
    pub fn answering(answers: &[Said]) -> Elicit {
        let e = Elicit::default();
        e.will(answers);
        e
    }

    /// Answer the next questions so.
    pub fn will(&self, answers: &[Said]) {
        self.answers.lock().unwrap().extend(answers.iter().cloned());
    }

    /// The questions asked so far: (message, requested schema).
    pub fn asked(&self) -> Vec<(String, Value)> {
        self.asked.lock().unwrap().clone()
    }

    /// Note the question `request` and answer it with the next scripted answer (for any
    /// client handler that declares elicitation).
    pub async fn answer(
        &self,
        request: rmcp::model::ElicitRequestParams,
    ) -> rmcp::model::ElicitResult {
        use rmcp::model::{ElicitResult, ElicitationAction};
        let asked = serde_json::to_value(&request).unwrap_or_default();
        let message = asked["message"].as_str().unwrap_or_default().to_string();
        self.asked
            .lock()
            .unwrap()
            .push((message, asked["requestedSchema"].clone()));
        let said = self.answers.lock().unwrap().pop_front();
        match said.unwrap_or(Said::Decline) {
            Said::Accept(answer) => {
                let mut r = ElicitResult::new(ElicitationAction::Accept);
                r.content = Some(json!({ "answer": answer }));
                r
            }
            Said::Decline => ElicitResult::new(ElicitationAction::Decline),
            Said::Cancel => ElicitResult::new(ElicitationAction::Cancel),
            Said::Silent => std::future::pending().await,
        }
    }
}

impl rmcp::ClientHandler for Notices {
    async fn on_tool_list_changed(&self, _context: rmcp::service::NotificationContext<RoleClient>) {
        self.tools_changed
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    async fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        let token = serde_json::to_value(&params.progress_token).unwrap_or_default();
        self.progress.lock().unwrap().push((
            token,
            params.progress,
            params.message.unwrap_or_default(),
        ));
    }

    fn get_info(&self) -> rmcp::model::ClientConfig {
        client_info("kapture-e2e", self.elicit.is_some())
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        let Some(elicit) = &self.elicit else {
            return Err(rmcp::ErrorData::invalid_request(
                "no elicitation here",
                None,
            ));
        };
        Ok(elicit.answer(request).await)
    }
}

/// A running `kapture` with an MCP client attached.
pub struct Kapture {
    client: Option<RunningService<RoleClient, Notices>>,
    notices: Notices,
    data: PathBuf,
    stopped: bool,
    pub runtime_dir: tempfile::TempDir,
    pub stderr_path: PathBuf,
    pub pid: u32,
    _scratch: tempfile::TempDir,
    /// The browser a native-engine kapture drives, the test's own (killed after kapture).
    browser: Option<devtools::DevToolsBrowser>,
}

/// Tests run on both engines: `body => name, name_natively;` makes `name` run
/// `body(Engine::Extension)` and `name_natively` run `body(Engine::Cdp)` (issue 16: parity
/// is tested, not claimed).
#[macro_export]
macro_rules! on_both_engines {
    ($($body:ident => $extension:ident, $native:ident;)*) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $extension() {
            $body($crate::Engine::Extension).await
        }
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $native() {
            $body($crate::Engine::Cdp).await
        }
    )*};
}

/// The engine a test runs kapture on (issue 16: the tool tests run on both).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// A launched headless Chromium with the Kapture extension.
    Extension,
    /// `--browser cdp` on a headless Chromium the test started with its DevTools open.
    Cdp,
}

/// Options for starting kapture.
#[derive(Debug, Clone)]
pub struct Start {
    pub args: Vec<String>,
    pub runtime_dir: Option<PathBuf>,
    /// kapture's data folder (scenarios, secrets); default: a fresh one.
    pub data_dir: Option<PathBuf>,
    pub env: Vec<(String, String)>,
    /// The kapture binary to run (default: `kapture_bin()`, the build tree's).
    pub bin: Option<PathBuf>,
}

impl Default for Start {
    fn default() -> Self {
        Start {
            args: vec!["--browser".into(), "launch".into(), "--headless".into()],
            runtime_dir: None,
            data_dir: None,
            env: Vec::new(),
            bin: None,
        }
    }
}

impl Start {
    /// The native engine (`--browser cdp`) on a browser the test runs at `endpoint`.
    /// `--browser cdp` on a test's own browser: throwaway, so judged as a launched one.
    pub fn cdp(endpoint: &str) -> Start {
        let mut start = Start::cdp_as_own(endpoint);
        start
            .args
            .extend(["--endpoint-browser".into(), "throwaway".into()]);
        start
    }

    /// `--browser cdp` with kapture's default: the endpoint's browser may be a person's own.
    pub fn cdp_as_own(endpoint: &str) -> Start {
        Start {
            args: vec![
                "--browser".into(),
                "cdp".into(),
                "--cdp-endpoint".into(),
                endpoint.to_string(),
            ],
            ..Start::default()
        }
    }

    /// The default start, with the launched browser open to raw CDP (`raw_cdp`).
    pub fn debuggable() -> Start {
        let mut start = Start::default();
        start
            .args
            .push("--chromium-arg=--remote-debugging-port=0".into());
        start
    }
}

/// The names of a saved scenario's secret parameters (its JSON), in order.
pub fn secret_names(scenario: &Value) -> Vec<String> {
    scenario["parameters"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|p| p["secret"] == true)
        .filter_map(|p| p["name"].as_str().map(str::to_string))
        .collect()
}

/// The tab an answer names (`… [tab 7]`).
pub fn tab_of(answer: &str) -> i64 {
    answer
        .rsplit("[tab ")
        .next()
        .and_then(|t| t.split(']').next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("no [tab N] in {answer}"))
}

impl Kapture {
    /// Start kapture with a launched headless Chromium.
    pub async fn launch() -> Kapture {
        Self::start(Start::default()).await
    }

    /// Start kapture on `engine` with a headless Chromium of its own.
    pub async fn launch_on(engine: Engine) -> Kapture {
        match engine {
            Engine::Extension => Self::launch().await,
            Engine::Cdp => {
                let browser = devtools::DevToolsBrowser::start();
                let endpoint = browser.endpoint().await;
                let mut k = Self::start(Start::cdp(&endpoint)).await;
                k.browser = Some(browser);
                k
            }
        }
    }

    /// Start kapture on `engine` with extra flags.
    pub async fn launch_on_with(engine: Engine, flags: &[&str]) -> Kapture {
        Self::launch_asking(engine, flags, None).await
    }

    /// Start kapture on `engine` with extra flags, spoken to by a client that answers
    /// elicitation with `elicit` (`None`: a client without that capability).
    pub async fn launch_asking(engine: Engine, flags: &[&str], elicit: Option<Elicit>) -> Kapture {
        Self::launch_on_opts(engine, flags, None, elicit).await
    }

    /// Start kapture on `engine`, with a fresh browser, over the data folder `data_dir`
    /// (what an earlier run saved: scenarios, logins, secrets).
    pub async fn launch_on_in(engine: Engine, data_dir: &Path, flags: &[&str]) -> Kapture {
        Self::launch_on_opts(engine, flags, Some(data_dir.to_path_buf()), None).await
    }

    async fn launch_on_opts(
        engine: Engine,
        flags: &[&str],
        data_dir: Option<PathBuf>,
        elicit: Option<Elicit>,
    ) -> Kapture {
        let client = Notices {
            elicit,
            ..Notices::default()
        };
        let extra = flags.iter().map(|f| f.to_string());
        match engine {
            Engine::Extension => {
                let mut opts = Start::default();
                opts.args.extend(extra);
                opts.data_dir = data_dir;
                Self::start_with(opts, client).await
            }
            Engine::Cdp => {
                let browser = devtools::DevToolsBrowser::start();
                let mut opts = Start::cdp(&browser.endpoint().await);
                opts.args.extend(extra);
                opts.data_dir = data_dir;
                let mut k = Self::start_with(opts, client).await;
                k.browser = Some(browser);
                k
            }
        }
    }

    pub async fn start(opts: Start) -> Kapture {
        Self::start_with(opts, Notices::default()).await
    }

    /// Start kapture spoken to by the client `notices`.
    pub async fn start_with(opts: Start, notices: Notices) -> Kapture {
        let scratch = tempfile::tempdir().expect("temp dir");
        let runtime_dir = tempfile::tempdir().expect("runtime dir");
        let runtime = opts
            .runtime_dir
            .clone()
            .unwrap_or_else(|| runtime_dir.path().to_path_buf());
        // kapture refuses a runtime folder others may use; test folders are made private.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700));
        }
        let stderr_path = scratch.path().join("kapture.stderr");
        let data = opts
            .data_dir
            .clone()
            .unwrap_or_else(|| scratch.path().join("data"));
        let stderr = std::fs::File::create(&stderr_path).expect("stderr file");
        let mut cmd = tokio::process::Command::new(opts.bin.clone().unwrap_or_else(kapture_bin));
        cmd.arg(format!("--chromium-arg={RESOLVER_RULES}"))
            .args(&opts.args)
            .arg("--port")
            .arg("0")
            .arg("--runtime-dir")
            .arg(&runtime)
            .arg("--audit-dir")
            .arg(scratch.path().join("audit"))
            .arg("--data-dir")
            .arg(&data)
            .env("KAPTURE_LOG", "debug")
            // Keys of sealed secrets in a key file, never in the desktop keyring of whoever runs the tests.
            .env("KAPTURE_KEYRING", "off")
            // Hermetic: no policy file of the person running the tests applies.
            .env("XDG_CONFIG_HOME", scratch.path().join("config"));
        for (k, v) in &opts.env {
            cmd.env(k, v);
        }
        let (transport, _) = TokioChildProcess::builder(cmd)
            .stderr(Stdio::from(stderr))
            .spawn()
            .expect("kapture starts");
        let pid = transport.id().expect("kapture pid");
        let client = notices
            .clone()
            .serve(transport)
            .await
            .expect("MCP initialize succeeds");
        Kapture {
            client: Some(client),
            notices,
            data,
            stopped: false,
            runtime_dir,
            stderr_path,
            pid,
            _scratch: scratch,
            browser: None,
        }
    }

    /// The names `tools/list` answers now.
    pub async fn tool_names(&self) -> Vec<String> {
        let client = self.client.as_ref().expect("kapture is running");
        client
            .list_all_tools()
            .await
            .expect("tools/list answers")
            .into_iter()
            .map(|t| t.name.to_string())
            .collect()
    }

    /// What `tools/list` answers now, as JSON (names, descriptions, schemas).
    pub async fn tools_json(&self) -> Value {
        let client = self.client.as_ref().expect("kapture is running");
        serde_json::to_value(client.list_all_tools().await.expect("tools/list"))
            .expect("tools as JSON")
    }

    /// Open a tab on `url` (`browser_tabs new`); answers its id.
    pub async fn new_tab(&self, url: &str) -> i64 {
        let opened = self
            .ok("browser_tabs", json!({"action": "new", "url": url}))
            .await;
        opened
            .split_whitespace()
            .nth(2)
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("no tab id in {opened}"))
    }

    /// Wait until a tab is titled `title` (tab listing does not queue behind the tabs'
    /// commands, so it shows a script that set the title while it still runs).
    pub async fn until_a_tab_is_titled(&self, title: &str) {
        let quoted = format!("\"{title}\"");
        eventually(
            &format!("a tab titled {title}"),
            Duration::from_secs(20),
            || async {
                let list = self.ok("browser_tabs", json!({"action": "list"})).await;
                list.contains(&quoted).then_some(())
            },
        )
        .await;
    }

    /// Send MCP `ping` and wait for its answer.
    pub async fn ping(&self) {
        let client = self.client.as_ref().expect("kapture is running");
        client
            .send_request(rmcp::model::ClientRequest::PingRequest(
                rmcp::model::RequestNoParam {
                    method: Default::default(),
                    extensions: Default::default(),
                },
            ))
            .await
            .expect("ping answers");
    }

    /// Send a tool call without waiting for its answer.
    pub async fn send_call(&self, tool: &str, args: Value) {
        let client = self.client.as_ref().expect("kapture is running");
        let params = CallToolRequestParams::new(tool.to_string())
            .with_arguments(args.as_object().cloned().unwrap_or_default());
        client
            .send_cancellable_request(
                rmcp::model::ClientRequest::CallToolRequest(rmcp::model::Request::new(params)),
                rmcp::service::PeerRequestOptions::no_options(),
            )
            .await
            .expect("the request is sent");
    }

    /// Close kapture's stdin (what an MCP client does to end it) without waiting.
    pub async fn close_stdin(&mut self) {
        self.stopped = true;
        if let Some(client) = self.client.take() {
            let _ = tokio::time::timeout(Duration::from_secs(5), client.cancel()).await;
        }
    }

    /// Start a tool call and cancel it at once (`notifications/cancelled`).
    pub async fn call_and_cancel(&self, tool: &str, args: Value) {
        let client = self.client.as_ref().expect("kapture is running");
        let params = CallToolRequestParams::new(tool.to_string())
            .with_arguments(args.as_object().cloned().unwrap_or_default());
        let handle = client
            .send_cancellable_request(
                rmcp::model::ClientRequest::CallToolRequest(rmcp::model::Request::new(params)),
                rmcp::service::PeerRequestOptions::no_options(),
            )
            .await
            .expect("the request is sent");
        // The server reads in order: once a later ping is answered, the call is running.
        self.ping().await;
        handle
            .cancel(Some("the test changed its mind".into()))
            .await
            .expect("the cancellation is sent");
    }

    /// Start a tool call, wait for `when` (e.g. until the page shows what the call did),
    /// then cancel the call (`notifications/cancelled`); answers what `when` gave.
    pub async fn call_cancelled_when<T>(
        &self,
        tool: &str,
        args: Value,
        when: impl Future<Output = T>,
    ) -> T {
        let client = self.client.as_ref().expect("kapture is running");
        let params = CallToolRequestParams::new(tool.to_string())
            .with_arguments(args.as_object().cloned().unwrap_or_default());
        let handle = client
            .send_cancellable_request(
                rmcp::model::ClientRequest::CallToolRequest(rmcp::model::Request::new(params)),
                rmcp::service::PeerRequestOptions::no_options(),
            )
            .await
            .expect("the request is sent");
        let out = when.await;
        handle
            .cancel(Some("the test changed its mind".into()))
            .await
            .expect("the cancellation is sent");
        out
    }

    /// The text of resource `uri`, or the protocol error.
    pub async fn resource(&self, uri: &str) -> Result<String, String> {
        let client = self.client.as_ref().expect("kapture is running");
        let read = client
            .read_resource(rmcp::model::ReadResourceRequestParams::new(uri))
            .await
            .map_err(|e| e.to_string())?;
        let json = serde_json::to_value(&read).unwrap_or_default();
        Ok(json["contents"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string())
    }

    /// The URIs `resources/list` answers.
    pub async fn resource_uris(&self) -> Vec<String> {
        let client = self.client.as_ref().expect("kapture is running");
        client
            .list_all_resources()
            .await
            .expect("resources/list answers")
            .into_iter()
            .map(|r| r.uri.to_string())
            .collect()
    }

    /// How many `notifications/tools/list_changed` the client has received.
    pub fn tools_changed(&self) -> usize {
        self.notices
            .tools_changed
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Fill `login.html` as a person would (trusted typing): user, then password.
    pub async fn type_login(&self, user: &str, password: &str) {
        self.ok("browser_type", json!({"selector": "#user", "text": user}))
            .await;
        self.ok(
            "browser_type",
            json!({"selector": "#password", "text": password}),
        )
        .await;
    }

    /// Call a tool and flatten the result; protocol errors panic (use `call_raw` for those).
    pub async fn call(&self, tool: &str, args: Value) -> Outcome {
        let result = self
            .call_raw(tool, args)
            .await
            .unwrap_or_else(|e| panic!("{tool}: protocol error {e}"));
        Outcome::from(result)
    }

    pub async fn call_raw(
        &self,
        tool: &str,
        args: Value,
    ) -> Result<CallToolResult, rmcp::ServiceError> {
        let args = match args {
            Value::Object(map) => map,
            Value::Null => Default::default(),
            other => panic!("tool arguments must be an object, got {other}"),
        };
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args);
        let client = self.client.as_ref().expect("kapture is running");
        tokio::time::timeout(Duration::from_secs(120), client.call_tool(params))
            .await
            .unwrap_or_else(|_| panic!("{tool} did not answer within 120 s"))
    }

    /// Every `notifications/progress` this client heard so far: (token, progress, message).
    /// The rmcp client gives each request a progress token of its own, and hears the
    /// notifications in tasks of their own, so they may land just after the answer.
    pub fn progress_heard(&self) -> Vec<(Value, f64, String)> {
        self.notices.progress.lock().unwrap().clone()
    }

    /// Call a tool that must succeed; returns its text.
    pub async fn ok(&self, tool: &str, args: Value) -> String {
        let out = self.call(tool, args.clone()).await;
        assert!(!out.is_error, "{tool} {args} failed: {}", out.text);
        out.text
    }

    /// Call a tool that must fail; returns its error code.
    pub async fn fails(&self, tool: &str, args: Value) -> String {
        let out = self.call(tool, args.clone()).await;
        assert!(
            out.is_error,
            "{tool} {args} should fail but answered: {}",
            out.text
        );
        out.code()
            .unwrap_or_else(|| panic!("no error code in {}", out.text))
    }

    /// Evaluate JavaScript and parse the JSON answer.
    pub async fn eval(&self, function: &str) -> Value {
        self.eval_with(json!({ "function": function })).await
    }

    /// Evaluate JavaScript on tab `tab` and parse the JSON answer.
    pub async fn eval_on(&self, tab: i64, function: &str) -> Value {
        self.eval_with(json!({ "function": function, "tabId": tab }))
            .await
    }

    async fn eval_with(&self, args: Value) -> Value {
        let answer = self.ok("browser_evaluate", args).await;
        // Notes about tabs pages opened follow the value after a blank line.
        let text = answer
            .split("\n\nThe page opened new tabs")
            .next()
            .unwrap_or_default();
        if text == "undefined" {
            return Value::Null;
        }
        serde_json::from_str(text)
            .unwrap_or_else(|e| panic!("evaluate answered non-JSON {text:?}: {e}"))
    }

    /// The handshake files in this kapture's runtime folder, parsed.
    pub fn handshakes(&self) -> Vec<Value> {
        handshakes_in(self.runtime_dir.path())
    }

    /// The profile folder of the browser this kapture drives: the one it launched, or the
    /// test's own on the native engine.
    pub fn browser_profile(&self) -> PathBuf {
        if let Some(own) = &self.browser {
            return own.profile().to_path_buf();
        }
        let browser = *children_of(self.pid)
            .first()
            .expect("kapture launched a browser");
        std::fs::read_to_string(format!("/proc/{browser}/cmdline"))
            .unwrap_or_default()
            .split('\0')
            .find_map(|a| a.strip_prefix("--user-data-dir=").map(PathBuf::from))
            .expect("the launched browser has a profile folder")
    }

    /// A raw CDP connection to the launched browser (started with
    /// `--chromium-arg=--remote-debugging-port=0`).
    pub async fn raw_cdp(&self) -> cdp::RawCdp {
        cdp::RawCdp::connect(&self.browser_profile())
            .await
            .expect("raw CDP to the launched browser")
    }

    /// Kapture's data folder (scenarios and sealed secrets) for this run.
    pub fn data_dir(&self) -> PathBuf {
        self.data.clone()
    }

    /// The audit journal's lines.
    pub fn audit_lines(&self) -> Vec<Value> {
        std::fs::read_to_string(self._scratch.path().join("audit").join("audit.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    /// Close stdin (as an MCP client does) and wait for kapture to exit.
    pub async fn stop(mut self) {
        let pid = self.pid;
        self.stopped = true;
        let client = self.client.take();
        if let Some(client) = client {
            let _ = tokio::time::timeout(Duration::from_secs(15), client.cancel()).await;
        }
        eventually("kapture to exit", Duration::from_secs(15), || async move {
            (!process_alive(pid)).then_some(())
        })
        .await;
    }
}

/// Processes a test must not leave behind: killed (SIGKILL) when dropped.
pub struct Orphans(pub Vec<u32>);

impl Drop for Orphans {
    fn drop(&mut self) {
        for pid in &self.0 {
            // Some may be gone already (the browser takes its helpers with it).
            let _ = std::process::Command::new("kill")
                .arg("-KILL")
                .arg(pid.to_string())
                .stderr(std::process::Stdio::null())
                .status();
        }
    }
}

impl Kapture {
    /// Kill kapture at once (SIGKILL: no cleanup at all), as a crash would. A browser it
    /// launched without holding its DevTools pipe (`--engine extension`) lives on (one whose
    /// pipe it held closes with it); its processes are answered, to be killed when the test
    /// is done.
    pub async fn kill_hard(mut self) -> Orphans {
        let browser = descendants_of(self.pid);
        self.stopped = true;
        let _ = std::process::Command::new("kill")
            .arg("-KILL")
            .arg(self.pid.to_string())
            .status();
        let pid = self.pid;
        eventually("kapture to die", Duration::from_secs(10), || async move {
            (!process_alive(pid)).then_some(())
        })
        .await;
        drop(self.client.take());
        Orphans(browser)
    }
}

/// A `/proc/<pid>/status` figure in KiB (`"VmHWM:"` peak, `"VmRSS:"` now); 0 when unknown.
pub fn proc_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with(field))?
                .split_whitespace()
                .nth(1)?
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// Every process below `pid` (children, their children…).
pub fn descendants_of(pid: u32) -> Vec<u32> {
    let mut all = Vec::new();
    let mut next = vec![pid];
    while let Some(p) = next.pop() {
        for child in children_of(p) {
            if !all.contains(&child) && all.len() < 4096 {
                all.push(child);
                next.push(child);
            }
        }
    }
    all
}

impl Drop for Kapture {
    /// A test that failed midway still stops kapture politely (SIGTERM), so that kapture
    /// closes the browser it launched instead of leaving it running.
    fn drop(&mut self) {
        if self.stopped {
            return;
        }
        let _ = std::process::Command::new("kill")
            .arg("-TERM")
            .arg(self.pid.to_string())
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while process_alive(self.pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Parse every handshake file in `dir`.
pub fn handshakes_in(dir: &Path) -> Vec<Value> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("server-"))
        .filter_map(|e| serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok())
        .collect()
}

/// Is a process alive (and not a zombie)?
pub fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

/// Direct children of `pid` (Linux).
pub fn children_of(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|child| {
            std::fs::read_to_string(format!("/proc/{child}/stat"))
                .ok()
                .and_then(|s| s.rsplit(')').next().map(str::to_string))
                .and_then(|rest| {
                    rest.split_whitespace()
                        .nth(1)
                        .and_then(|p| p.parse::<u32>().ok())
                })
                == Some(pid)
        })
        .collect()
}

/// The ref on the first line of `text` that contains `needle`.
pub fn ref_on(text: &str, needle: &str) -> String {
    let line = text
        .lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{text}"));
    line.split("[ref=")
        .nth(1)
        .and_then(|r| r.split(']').next())
        .unwrap_or_else(|| panic!("no ref on {line:?}"))
        .to_string()
}

/// Width and height from a JPEG's start-of-frame marker.
pub fn jpeg_size(bytes: &[u8]) -> (u32, u32) {
    assert!(bytes.starts_with(&[0xff, 0xd8]), "not a JPEG");
    let mut i = 2;
    while i + 9 < bytes.len() {
        if bytes[i] != 0xff {
            i += 1;
            continue;
        }
        let marker = bytes[i + 1];
        let len = usize::from(bytes[i + 2]) << 8 | usize::from(bytes[i + 3]);
        if (0xc0..=0xcf).contains(&marker) && marker != 0xc4 && marker != 0xc8 && marker != 0xcc {
            let h = u32::from(bytes[i + 5]) << 8 | u32::from(bytes[i + 6]);
            let w = u32::from(bytes[i + 7]) << 8 | u32::from(bytes[i + 8]);
            return (w, h);
        }
        i += 2 + len;
    }
    panic!("no frame header in the JPEG");
}

/// Width and height from a PNG's header.
pub fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    let w = u32::from_be_bytes(bytes[16..20].try_into().unwrap_or_default());
    let h = u32::from_be_bytes(bytes[20..24].try_into().unwrap_or_default());
    (w, h)
}

#[cfg(test)]
mod tidy {
    use std::path::{Path, PathBuf};

    fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if path.is_dir() && name != "target" && !name.to_string_lossy().starts_with('.') {
                rust_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    /// House rule: every Rust file opens with a `//!` line saying its role.
    #[test]
    fn every_rust_file_says_its_role() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut files = Vec::new();
        rust_files(&root, &mut files);
        assert!(files.len() > 10, "found the sources");
        let missing: Vec<String> = files
            .iter()
            .filter(|f| {
                !std::fs::read_to_string(f)
                    .unwrap_or_default()
                    .starts_with("//!")
            })
            .map(|f| f.display().to_string())
            .collect();
        assert!(
            missing.is_empty(),
            "files without a //! role line: {missing:?}"
        );
    }
}
