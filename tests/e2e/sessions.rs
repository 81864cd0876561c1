//! Several MCP sessions of one kapture (issue 17): each has its own current tab and its own
//! tabs, cannot drive another's tab unless the policy shares tabs, a tab a page opens
//! follows its opener's session, a session's end releases its tabs; the resources
//! (sessions index, steps, code, live state) read and tell their subscribers of updates.
//! One kapture in process (its real start-up on the native engine and a real headless
//! Chromium), each session spoken to by its own rmcp client.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use clap::Parser;
use kapture_e2e::devtools::DevToolsBrowser;
use kapture_e2e::{eventually, png_size, tab_of, Elicit, Outcome, Said};
use rmcp::model::{CallToolRequestParams, ReadResourceRequestParams, SubscribeRequestParams};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use www_test_pages::Site;

/// A client that keeps the resource updates it is told of, and answers kapture's questions
/// from a script when it has one.
#[derive(Clone)]
struct Agent {
    name: &'static str,
    updates: Arc<Mutex<Vec<String>>>,
    elicit: Option<Elicit>,
}

impl rmcp::ClientHandler for Agent {
    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: rmcp::service::NotificationContext<RoleClient>,
    ) {
        self.updates.lock().unwrap().push(params.uri);
    }

    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::ErrorData> {
        match &self.elicit {
            Some(elicit) => Ok(elicit.answer(request).await),
            None => Err(rmcp::ErrorData::invalid_request(
                "no elicitation here",
                None,
            )),
        }
    }

    fn get_info(&self) -> rmcp::model::ClientConfig {
        kapture_e2e::client_info(self.name, self.elicit.is_some())
    }
}

/// One kapture (native engine on a test browser) and its sessions' clients.
struct Kapture {
    started: native_host::Started,
    _browser: DevToolsBrowser,
    _dir: tempfile::TempDir,
}

struct Session {
    client: RunningService<RoleClient, Agent>,
    updates: Arc<Mutex<Vec<String>>>,
}

impl Kapture {
    async fn start(policy: &str) -> Kapture {
        let browser = DevToolsBrowser::start();
        let endpoint = browser.endpoint().await;
        let dir = tempfile::tempdir().unwrap();
        let runtime = kapture_e2e::private_dir(dir.path(), "runtime");
        let policy_file = dir.path().join("policy.toml");
        std::fs::write(&policy_file, policy).unwrap();
        let path = |p: &std::path::Path| p.display().to_string();
        let cli = native_host::cli::Cli::try_parse_from([
            "kapture".to_string(),
            "--browser".into(),
            "cdp".into(),
            "--cdp-endpoint".into(),
            endpoint,
            "--endpoint-browser".into(),
            "throwaway".into(),
            "--runtime-dir".into(),
            path(&runtime),
            "--audit-dir".into(),
            path(&dir.path().join("audit")),
            "--data-dir".into(),
            path(&dir.path().join("data")),
            "--download-dir".into(),
            path(&dir.path().join("downloads")),
            "--policy".into(),
            path(&policy_file),
        ])
        .expect("kapture's command line");
        let started = native_host::start(cli.serve).await.expect("kapture starts");
        Kapture {
            started,
            _browser: browser,
            _dir: dir,
        }
    }

    /// A new MCP session with a client named `name`.
    async fn session(&self, name: &'static str) -> Session {
        self.session_asking(name, None).await
    }

    /// A new MCP session whose client answers kapture's questions as `elicit` says.
    async fn session_asking(&self, name: &'static str, elicit: Option<Elicit>) -> Session {
        let (server_end, client_end) = tokio::io::duplex(1 << 20);
        let server = self.started.kapture.session();
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_end).await {
                let _ = running.waiting().await;
            }
        });
        let updates = Arc::new(Mutex::new(Vec::new()));
        let agent = Agent {
            name,
            updates: updates.clone(),
            elicit,
        };
        let client = agent.serve(client_end).await.expect("MCP initialize");
        Session { client, updates }
    }
}

impl Session {
    async fn call(&self, tool: &str, args: Value) -> Outcome {
        let params = CallToolRequestParams::new(tool.to_string())
            .with_arguments(args.as_object().cloned().unwrap_or_default());
        let result = tokio::time::timeout(Duration::from_secs(60), self.client.call_tool(params))
            .await
            .unwrap_or_else(|_| panic!("{tool} answers within 60 s"))
            .unwrap_or_else(|e| panic!("{tool}: protocol error {e}"));
        Outcome::from(result)
    }

    async fn ok(&self, tool: &str, args: Value) -> String {
        let out = self.call(tool, args.clone()).await;
        assert!(!out.is_error, "{tool} {args} failed: {}", out.text);
        out.text
    }

    async fn fails(&self, tool: &str, args: Value) -> String {
        let out = self.call(tool, args.clone()).await;
        assert!(out.is_error, "{tool} {args} should fail: {}", out.text);
        out.code()
            .unwrap_or_else(|| panic!("no code in {}", out.text))
    }

    /// The resource's first contents as JSON (`text` or `blob`, `mimeType`), or the error.
    async fn read(&self, uri: &str) -> Result<Value, String> {
        let read = self
            .client
            .read_resource(ReadResourceRequestParams::new(uri))
            .await
            .map_err(|e| e.to_string())?;
        Ok(serde_json::to_value(&read).unwrap()["contents"][0].clone())
    }

    async fn text(&self, uri: &str) -> String {
        let c = self
            .read(uri)
            .await
            .unwrap_or_else(|e| panic!("{uri}: {e}"));
        c["text"].as_str().unwrap_or_default().to_string()
    }

    async fn subscribe(&self, uri: &str) {
        #[allow(deprecated)]
        self.client
            .subscribe(SubscribeRequestParams::new(uri))
            .await
            .unwrap_or_else(|e| panic!("subscribe {uri}: {e}"));
    }

    async fn told(&self, uri: &str) {
        let updates = self.updates.clone();
        eventually(
            &format!("notifications/resources/updated for {uri}"),
            Duration::from_secs(10),
            || {
                let updates = updates.clone();
                async move {
                    updates
                        .lock()
                        .unwrap()
                        .iter()
                        .any(|u| u == uri)
                        .then_some(())
                }
            },
        )
        .await;
        self.updates.lock().unwrap().clear();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_keep_their_own_tabs_and_cannot_drive_each_others() {
    let site = Site::start().unwrap();
    let k = Kapture::start("").await;
    let a = k.session("agent-a").await;
    let b = k.session("agent-b").await;

    // A takes the browser's active tab; B finds it taken and gets a tab of its own.
    let nav_a = a
        .ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    let tab_a = tab_of(&nav_a);
    let nav_b = b
        .ok("browser_navigate", json!({"url": site.url("page-b.html")}))
        .await;
    let tab_b = tab_of(&nav_b);
    assert_ne!(tab_a, tab_b, "{nav_b}");
    assert!(
        nav_b.contains(&format!("Opened tab {tab_b} of this session's own"))
            && nav_b.contains("session 1: agent-a"),
        "{nav_b}"
    );

    // Each session's tools act on its own current tab.
    assert!(a.ok("browser_snapshot", json!({})).await.contains("Page A"));
    assert!(b.ok("browser_snapshot", json!({})).await.contains("Page B"));
    a.ok(
        "browser_navigate",
        json!({"url": site.url("page-a.html?again")}),
    )
    .await;
    assert!(b.ok("browser_snapshot", json!({})).await.contains("Page B"));

    // B may not drive, select or close A's tab, nor read it through a resource.
    for (tool, args) in [
        ("browser_snapshot", json!({"tabId": tab_a})),
        ("browser_click", json!({"tabId": tab_a, "selector": "body"})),
        ("browser_tabs", json!({"action": "select", "tabId": tab_a})),
        ("browser_tabs", json!({"action": "close", "tabId": tab_a})),
    ] {
        assert_eq!(b.fails(tool, args).await, "TAB_NOT_YOURS", "{tool}");
    }
    let refused = b.read("kapture://session/1/snapshot").await.unwrap_err();
    assert!(refused.contains("TAB_NOT_YOURS"), "{refused}");
    let listed = b.ok("browser_tabs", json!({"action": "list"})).await;
    assert!(
        listed.contains(&format!("tab {tab_a} (session 1: agent-a)"))
            || listed.contains(&format!("tab {tab_a} (active) (session 1: agent-a)")),
        "{listed}"
    );
    assert!(
        listed.contains(&format!("tab {tab_b} (current)")),
        "{listed}"
    );

    // A tab a page opens follows its opener's session.
    a.ok("browser_navigate", json!({"url": site.url("popup.html")}))
        .await;
    let first = a.ok("browser_click", json!({"selector": "#open"})).await;
    let told = if first.contains("The page opened new tabs") {
        first
    } else {
        eventually(
            "the popup reported to A",
            Duration::from_secs(10),
            || async {
                let t = a.ok("browser_tabs", json!({"action": "list"})).await;
                t.contains("The page opened new tabs").then_some(t)
            },
        )
        .await
    };
    let popup: i64 = told
        .split("The page opened new tabs: tab ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{told}"));
    assert!(!b
        .ok("browser_status", json!({}))
        .await
        .contains("The page opened new tabs"));
    assert_eq!(
        b.fails("browser_snapshot", json!({"tabId": popup})).await,
        "TAB_NOT_YOURS"
    );
    a.ok("browser_snapshot", json!({"tabId": popup})).await;

    // The sessions index.
    let index: Value = serde_json::from_str(&b.text("kapture://sessions").await).unwrap();
    let list = index.as_array().unwrap();
    assert_eq!(list.len(), 2, "{index}");
    assert_eq!(list[0]["client"], "agent-a");
    assert_eq!(list[0]["label"], "agent-a #1");
    assert_eq!(list[0]["currentTab"], tab_a);
    let owned: Vec<i64> = serde_json::from_value(list[0]["ownedTabs"].clone()).unwrap();
    assert!(owned.contains(&tab_a) && owned.contains(&popup), "{index}");
    assert!(list[0]["steps"].as_u64().unwrap() >= 5, "{index}");
    assert_eq!(list[1]["you"], true);
    assert_eq!(list[1]["currentTab"], tab_b);

    // A's end releases its tabs: B may drive them now, and hears the index changed.
    b.subscribe("kapture://sessions").await;
    a.client.cancel().await.unwrap();
    b.told("kapture://sessions").await;
    let index: Value = serde_json::from_str(&b.text("kapture://sessions").await).unwrap();
    assert_eq!(index.as_array().unwrap().len(), 1, "{index}");
    let snap = b.ok("browser_snapshot", json!({"tabId": tab_a})).await;
    assert!(snap.contains("Popup opener"), "{snap}");

    // The journal tells the sessions apart, also when clients share a name.
    let journal = eventually("both sessions journaled", Duration::from_secs(10), || {
        let file = k._dir.path().join("audit").join("audit.jsonl");
        async move {
            let text = std::fs::read_to_string(file).ok()?;
            let who: Vec<String> = text
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter_map(|e| e["who"].as_str().map(str::to_string))
                .collect();
            (who.iter().any(|w| w == "mcp:agent-a #1") && who.iter().any(|w| w == "mcp:agent-b #2"))
                .then_some(who)
        }
    })
    .await;
    assert!(!journal.is_empty());
    k.started.shutdown.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_share_tabs_in_the_policy_sessions_may_drive_each_others_tabs() {
    let site = Site::start().unwrap();
    let k = Kapture::start("share_tabs = true\n").await;
    let a = k.session("agent-a").await;
    let b = k.session("agent-b").await;
    let tab_a = tab_of(
        &a.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
            .await,
    );
    let snap = b.ok("browser_snapshot", json!({"tabId": tab_a})).await;
    assert!(snap.contains("Page A"), "{snap}");
    b.ok(
        "browser_navigate",
        json!({"url": site.url("page-b.html"), "tabId": tab_a}),
    )
    .await;
    assert!(a.ok("browser_snapshot", json!({})).await.contains("Page B"));
    let live = b.text("kapture://session/1/snapshot").await;
    assert!(live.contains("Page B"), "{live}");
    k.started.shutdown.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_resources_show_its_steps_code_and_live_tab_and_tell_subscribers() {
    let site = Site::start().unwrap();
    let k = Kapture::start("").await;
    let a = k.session("agent-a").await;

    // Before any call: no current tab, said plainly.
    let none = a
        .read("kapture://session/current/snapshot")
        .await
        .unwrap_err();
    assert!(none.contains("no current tab"), "{none}");

    let templates = a.client.list_all_resource_templates().await.unwrap();
    let uris: Vec<String> = templates.iter().map(|t| t.uri_template.clone()).collect();
    for what in [
        "steps",
        "code",
        "snapshot",
        "screenshot",
        "console",
        "tabs",
        "cookies",
    ] {
        assert!(
            uris.contains(&format!("kapture://session/{{id}}/{what}")),
            "{uris:?}"
        );
    }

    a.subscribe("kapture://session/current/steps").await;
    a.subscribe("kapture://session/1/snapshot").await;
    a.ok("browser_navigate", json!({"url": site.url("console.html")}))
        .await;
    // An action changes the steps and the live state.
    a.told("kapture://session/current/steps").await;
    a.updates.lock().unwrap().clear();
    a.ok("browser_press_key", json!({"key": "Tab"})).await;
    a.told("kapture://session/1/snapshot").await;
    // A pure read changes the steps only.
    a.ok("browser_snapshot", json!({})).await;
    a.told("kapture://session/current/steps").await;
    assert!(
        !a.updates
            .lock()
            .unwrap()
            .iter()
            .any(|u| u.ends_with("/snapshot")),
        "a read is not an update of the live state"
    );

    let steps: Value = serde_json::from_str(&a.text("kapture://session/1/steps").await).unwrap();
    assert_eq!(steps[0]["tool"], "browser_navigate", "{steps}");
    let code = a
        .text("kapture://session/current/code?format=puppeteer")
        .await;
    assert!(code.contains("console.html"), "{code}");
    let snapshot = a.text("kapture://session/current/snapshot").await;
    assert!(snapshot.contains("Console"), "{snapshot}");
    let console = a.text("kapture://session/1/console").await;
    assert!(console.contains("messages, newest first"), "{console}");
    let tabs = a.text("kapture://session/1/tabs").await;
    assert!(tabs.contains("(current)"), "{tabs}");
    a.ok(
        "browser_evaluate",
        json!({"function": "() => { document.cookie = 'flavour=oat'; return 1 }"}),
    )
    .await;
    let cookies = a.text("kapture://session/1/cookies").await;
    assert!(cookies.contains("flavour"), "{cookies}");
    let shot = a
        .read("kapture://session/current/screenshot")
        .await
        .unwrap();
    assert_eq!(shot["mimeType"], "image/png");
    let png = base64::engine::general_purpose::STANDARD
        .decode(shot["blob"].as_str().unwrap())
        .unwrap();
    let (w, h) = png_size(&png);
    assert!(w > 100 && h > 100, "{w}x{h}");

    assert!(a
        .read("kapture://session/7/steps")
        .await
        .unwrap_err()
        .contains("no live session 7"));
    // Another session's history (what it typed, pages of tabs not its own) is not read by
    // another agent unless the policy shares tabs.
    let b = k.session("agent-b").await;
    for uri in ["kapture://session/1/steps", "kapture://session/1/code"] {
        let refused = b.read(uri).await.unwrap_err();
        assert!(refused.contains("its own"), "{uri}: {refused}");
    }
    assert!(b.read("kapture://session/current/steps").await.is_ok());
    k.started.shutdown.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tabs_of_a_sessions_own_context_close_when_it_ends() {
    let site = Site::start().unwrap();
    let k = Kapture::start("").await;
    let a = k.session("agent-a").await;
    let b = k.session("agent-b").await;
    let opened = a
        .ok(
            "browser_tabs",
            json!({"action": "new", "url": site.url("page-a.html"), "isolated": true}),
        )
        .await;
    assert!(opened.contains("own browser context"), "{opened}");
    let own: i64 = opened
        .split("Opened tab ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("{opened}"));
    // The new tab is A's current one.
    let snap = a.ok("browser_snapshot", json!({})).await;
    assert!(snap.contains("Page A"), "{snap}");
    let listed = b.ok("browser_tabs", json!({"action": "list"})).await;
    assert!(listed.contains(&format!("tab {own} ")), "{listed}");
    b.subscribe("kapture://session/current/tabs").await;
    a.client.cancel().await.unwrap();
    b.told("kapture://session/current/tabs").await;
    eventually(
        "the isolated tab to close",
        Duration::from_secs(10),
        || async {
            let listed = b.ok("browser_tabs", json!({"action": "list"})).await;
            (!listed.contains(&format!("tab {own} "))).then_some(())
        },
    )
    .await;
    k.started.shutdown.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_grant_for_the_session_is_the_asking_sessions_alone() {
    let site = Site::start().unwrap();
    let k = Kapture::start(
        "[[rule]]\norigin = \"127.0.0.1\"\ncategory = \"eval\"\nverdict = \"ask\"\n",
    )
    .await;
    let asks_a = Elicit::answering(&[Said::Accept("approve for this session")]);
    let asks_b = Elicit::answering(&[Said::Accept("deny")]);
    let a = k.session_asking("agent-a", Some(asks_a.clone())).await;
    let b = k.session_asking("agent-b", Some(asks_b.clone())).await;
    a.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    b.ok("browser_navigate", json!({"url": site.url("page-b.html")}))
        .await;
    let eval = json!({"function": "() => 6 * 7"});
    let origin = format!("http://127.0.0.1:{}", site.port());

    // A is asked once and grants eval on the origin for its session: its next call runs
    // unasked.
    assert!(a.ok("browser_evaluate", eval.clone()).await.contains("42"));
    let asked = asks_a.asked();
    assert_eq!(asked.len(), 1, "A is asked the first time");
    assert!(
        asked[0].0.contains(&origin) && asked[0].0.contains("to this agent (MCP session) only"),
        "the question says whose grant it is: {}",
        asked[0].0
    );
    assert!(a.ok("browser_evaluate", eval.clone()).await.contains("42"));
    assert_eq!(asks_a.asked().len(), 1, "A's grant holds for A");

    // B, another session of the same kapture on the same origin, is asked (and its person
    // refuses): A's grant is not B's.
    assert_eq!(
        b.fails("browser_evaluate", eval.clone()).await,
        "APPROVAL_DENIED"
    );
    let asked = asks_b.asked();
    assert_eq!(asked.len(), 1, "B is asked: {asked:?}");
    assert!(asked[0].0.contains(&origin), "{}", asked[0].0);

    // B's refusal takes nothing from A.
    assert!(a.ok("browser_evaluate", eval).await.contains("42"));
    assert_eq!(asks_a.asked().len(), 1);
    k.started.shutdown.cancel();
}

/// What one session typed reaches no other session: another's journal entries are not
/// in its `browser_audit` (unless tabs are shared), and a password one session typed is
/// masked in every session's answers, also after that session ended.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_sessions_typing_shows_in_no_other_sessions_answers() {
    const PLAIN: &str = "Audit-Canary-Plain";
    const PASSWORD: &str = "Session-Pw-Canary-9";
    let site = Site::start().unwrap();
    let k = Kapture::start("").await;
    let a = k.session("agent-a").await;
    let b = k.session("agent-b").await;
    a.ok("browser_navigate", json!({"url": site.url("login.html")}))
        .await;
    a.ok("browser_type", json!({"selector": "#user", "text": PLAIN}))
        .await;
    a.ok(
        "browser_type",
        json!({"selector": "#password", "text": PASSWORD}),
    )
    .await;
    // The password ends up in a URL (a GET form would put it there).
    a.ok(
        "browser_navigate",
        json!({"url": site.url(&format!("page-a.html?pw={PASSWORD}"))}),
    )
    .await;
    let own = a.ok("browser_audit", json!({"max": 50})).await;
    assert!(
        own.contains(PLAIN),
        "a session reads its own entries: {own}"
    );
    b.ok("browser_navigate", json!({"url": site.url("page-b.html")}))
        .await;
    let theirs = b.ok("browser_audit", json!({"max": 50})).await;
    assert!(!theirs.contains(PLAIN), "{theirs}");
    assert!(!theirs.contains("login.html"), "{theirs}");
    // A's tab, while A lives: its site only (its address may hold what A typed).
    let tabs = b.ok("browser_tabs", json!({"action": "list"})).await;
    assert!(
        tabs.contains("another session's page") && !tabs.contains("page-a.html"),
        "{tabs}"
    );
    assert!(!tabs.contains(PASSWORD), "{tabs}");
    // Session A ends; what it learned is still masked for B.
    a.client.cancel().await.unwrap();
    let tabs = eventually("A's tab released", Duration::from_secs(10), || async {
        let tabs = b.ok("browser_tabs", json!({"action": "list"})).await;
        (!tabs.contains("session 1")).then_some(tabs)
    })
    .await;
    assert!(tabs.contains("page-a.html"), "{tabs}");
    assert!(!tabs.contains(PASSWORD), "{tabs}");
    for s in [k.session("agent-c").await, b] {
        let tabs = s.ok("browser_tabs", json!({"action": "list"})).await;
        assert!(!tabs.contains(PASSWORD), "{tabs}");
    }
}

/// The one exit (issue 29): a secret session A learned (typed into a password field, then
/// carried percent-encoded in a URL as a GET form would) and shown by B's own page never
/// reaches B through any exit — answers, approval questions, resources (the steps as JSON,
/// the code in every export language, the tab list), `browser_audit`, `browser_status` —
/// nor the journal file; A's own answers show the URL masked too. The secret has a space,
/// a quote and a non-ASCII letter, so every exit writes it in an escaped form of its own; the
/// canary word in it must appear nowhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_one_session_learned_leaves_through_no_exit_of_another() {
    const CANARY: &str = "Kq7Canary";
    const SECRET: &str = "Pw Kq7Canary\"9!ü";
    let site = Site::start().unwrap();
    let k = Kapture::start(
        "[[rule]]\norigin = \"127.0.0.1\"\ncategory = \"eval\"\nverdict = \"ask\"\n",
    )
    .await;
    let a = k.session("agent-a").await;
    let asks_b = Elicit::answering(&[Said::Accept("approve for this session")]);
    let b = k.session_asking("agent-b", Some(asks_b.clone())).await;
    let mut seen: Vec<(String, String)> = Vec::new();

    // A types the secret into a password field, then carries it in a URL.
    a.ok("browser_navigate", json!({"url": site.url("login.html")}))
        .await;
    a.ok(
        "browser_type",
        json!({"selector": "#password", "text": SECRET}),
    )
    .await;
    let encoded: String = url::form_urlencoded::byte_serialize(SECRET.as_bytes()).collect();
    let nav = a
        .ok(
            "browser_navigate",
            json!({"url": site.url(&format!("page-a.html?pw={encoded}"))}),
        )
        .await;
    assert!(nav.contains("page-a.html?pw=[redacted:"), "{nav}");
    seen.push(("A's navigate".into(), nav));
    seen.push((
        "A's tabs".into(),
        a.ok("browser_tabs", json!({"action": "list"})).await,
    ));
    seen.push((
        "A's steps".into(),
        a.text("kapture://session/current/steps").await,
    ));

    // B's own page shows the secret (B wrote it there, asked first: eval is an ask rule);
    // B acts on it by ref, so its session code names the element by that text.
    b.ok("browser_navigate", json!({"url": site.url("page-b.html")}))
        .await;
    let make = format!(
        "() => {{ const b = document.createElement('button'); b.textContent = {}; document.body.append(b); return 1; }}",
        serde_json::to_string(SECRET).unwrap()
    );
    seen.push((
        "B's evaluate".into(),
        b.ok("browser_evaluate", json!({ "function": make })).await,
    ));
    let asked = asks_b.asked();
    assert_eq!(asked.len(), 1, "B was asked: {asked:?}");
    assert!(
        asked[0].0.contains("The arguments, as the agent gave them"),
        "{}",
        asked[0].0
    );
    seen.push(("B's approval question".into(), asked[0].0.clone()));
    let snap = b.ok("browser_snapshot", json!({})).await;
    let button = kapture_e2e::ref_on(&snap, "button \"[redacted:");
    seen.push(("B's snapshot".into(), snap));
    b.ok("browser_click", json!({ "ref": button })).await;
    for (what, uri) in [
        ("B's steps", "kapture://session/current/steps".to_string()),
        ("B's tabs", "kapture://session/current/tabs".into()),
        ("the sessions", "kapture://sessions".into()),
    ] {
        seen.push((what.into(), b.text(&uri).await));
    }
    for format in [
        "playwright-ts",
        "playwright-python",
        "puppeteer",
        "webdriverio",
    ] {
        let code = b
            .text(&format!("kapture://session/current/code?format={format}"))
            .await;
        assert!(
            code.contains("[redacted:"),
            "the button's name is masked: {code}"
        );
        seen.push((format!("B's code ({format})"), code));
    }
    for (tool, args) in [
        ("browser_tabs", json!({"action": "list"})),
        ("browser_audit", json!({"max": 50})),
        ("browser_status", json!({})),
    ] {
        seen.push((format!("B's {tool}"), b.ok(tool, args).await));
    }
    // A's tab, in B's list: only its site.
    let tabs = b.ok("browser_tabs", json!({"action": "list"})).await;
    assert!(
        tabs.contains("another session's page") && !tabs.contains("page-a.html"),
        "{tabs}"
    );
    // The journal file, every line of it.
    let journal = std::fs::read_to_string(k._dir.path().join("audit").join("audit.jsonl"))
        .expect("the journal");
    assert!(journal.lines().count() >= 10, "{journal}");
    seen.push(("the journal file".into(), journal));
    for (what, text) in &seen {
        assert!(!text.contains(CANARY), "{what} shows the secret:\n{text}");
    }
    k.started.shutdown.cancel();
}
