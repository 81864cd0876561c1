//! MCP 2026-07-28 without a handshake: raw stateless requests to `kapture --http` keep the
//! default context's page from one request to the next, a context handle isolates, the HTTP
//! checks hold, and the initialize lifecycle is unchanged beside it; then clients nobody here
//! wrote, over HTTP and stdio, stateless and in fallback: the Python SDK 2.x (`mcp` from
//! PyPI) and the TypeScript SDK 2.x client (`@modelcontextprotocol/client` from npm).

use std::path::PathBuf;
use std::time::Duration;

use kapture_e2e::http::{mcp_clients, HttpKapture, RawAnswer};
use serde_json::{json, Value};

/// The `_meta` every 2026-07-28 request carries.
fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw-2026", "version": "1"}
    })
}

/// The JSON-RPC message of an answer (plain JSON, or the first `data:` of an event stream).
fn rpc(answer: &RawAnswer) -> Value {
    if let Ok(v) = serde_json::from_str(&answer.body) {
        return v;
    }
    answer
        .body
        .lines()
        .filter_map(|l| l.trim().strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .find(|m| m.get("id").is_some())
        .unwrap_or_else(|| panic!("no JSON-RPC answer in {answer:?}"))
}

/// One stateless request: its own connection, no session header, the revision's standard
/// headers (the method, and the name a `tools/call`, `resources/read` or `tasks/*` is about).
fn post(k: &HttpKapture, id: u64, method: &str, mut params: Value) -> (RawAnswer, Value) {
    let mut full = meta();
    for (key, v) in params["_meta"].as_object().into_iter().flatten() {
        full[key] = v.clone();
    }
    params["_meta"] = full;
    let name = params["name"]
        .as_str()
        .or(params["uri"].as_str())
        .or(params["taskId"].as_str())
        .unwrap_or_default()
        .to_string();
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let mut headers = vec![
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", method),
    ];
    if !name.is_empty() {
        headers.push(("Mcp-Name", name.as_str()));
    }
    let answer = k.post_mcp(&headers, &body.to_string());
    let message = rpc(&answer);
    (answer, message)
}

/// A stateless `tools/call`'s text and whether it failed.
fn call(k: &HttpKapture, id: u64, tool: &str, args: Value) -> (String, bool) {
    let (answer, m) = post(
        k,
        id,
        "tools/call",
        json!({"name": tool, "arguments": args}),
    );
    assert!(
        answer.header("mcp-session-id").is_none(),
        "a stateless answer opened a session: {answer:?}"
    );
    let result = m
        .get("result")
        .unwrap_or_else(|| panic!("{tool}: no result: {m}"));
    let text = result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    (text, result["isError"] == json!(true))
}

fn ok(k: &HttpKapture, id: u64, tool: &str, args: Value) -> String {
    let (text, failed) = call(k, id, tool, args);
    assert!(!failed, "{tool} failed: {text}");
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_http_keeps_the_default_context_and_handles_isolate() {
    let site = www_test_pages::Site::start().unwrap();
    let k = HttpKapture::start(&[]).await;

    // server/discover answers the revisions; no session is opened by anything stateless.
    let (answer, m) = post(&k, 1, "server/discover", json!({}));
    assert!(answer.header("mcp-session-id").is_none(), "{answer:?}");
    let versions = m["result"]["supportedVersions"].to_string();
    assert!(
        versions.contains("2026-07-28") && versions.contains("2025-06-18"),
        "{m}"
    );
    let (_, m) = post(&k, 2, "tools/list", json!({}));
    let tools = m["result"]["tools"].as_array().expect("tools").clone();
    let nav = tools
        .iter()
        .find(|t| t["name"] == "browser_navigate")
        .expect("browser_navigate listed");
    assert!(
        nav["inputSchema"]["properties"]["context"]["description"]
            .as_str()
            .is_some_and(|d| d.contains("browser_context_open")),
        "{nav}"
    );
    let (_, m) = post(&k, 3, "resources/list", json!({}));
    assert!(m["result"]["resources"].is_array(), "{m}");

    // The HTTP checks hold for stateless requests too.
    let body =
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"_meta": meta()}})
            .to_string();
    let no_token = k.raw(
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        body.as_bytes(),
    );
    assert_eq!(no_token.status, 401, "{no_token:?}");
    let foreign = k.post_mcp(&[("Origin", "http://evil.example")], &body);
    assert_eq!(foreign.status, 403, "{foreign:?}");
    // Neither a session nor the revision's metadata: refused, saying both ways in.
    let bare = k.post_mcp(
        &[],
        &json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}).to_string(),
    );
    assert_eq!(bare.status, 400, "{bare:?}");
    assert!(bare.body.contains("protocolVersion"), "{bare:?}");

    // Two independent requests see the same page: the default context.
    let went = ok(
        &k,
        6,
        "browser_navigate",
        json!({"url": site.url("page-a.html")}),
    );
    assert!(went.contains("Page A"), "{went}");
    let default_tab = kapture_e2e::tab_of(&went);
    let snap = ok(&k, 7, "browser_snapshot", json!({}));
    assert!(snap.contains("Go to B"), "{snap}");

    // A context of its own: its tabs and page apart from the default context.
    let opened = ok(&k, 8, "browser_context_open", json!({}));
    let handle = opened
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .find(|w| w.starts_with("kctx_"))
        .unwrap_or_else(|| panic!("no handle in {opened}"))
        .to_string();
    assert_eq!(handle.len(), 5 + 32, "{handle}");
    let went = ok(
        &k,
        9,
        "browser_navigate",
        json!({"url": site.url("page-b.html"), "context": handle}),
    );
    let context_tab = kapture_e2e::tab_of(&went);
    assert_ne!(context_tab, default_tab, "{went}");
    let mine = ok(&k, 10, "browser_snapshot", json!({"context": handle}));
    assert!(
        mine.contains("Go to A") && !mine.contains("Go to B"),
        "{mine}"
    );
    let snap = ok(&k, 11, "browser_snapshot", json!({}));
    assert!(snap.contains("Go to B"), "{snap}");
    // The no-other-session's-data rule holds between contexts: the default context may not
    // drive the context's tab, nor read its journal.
    let (refused, failed) = call(&k, 12, "browser_snapshot", json!({"tabId": context_tab}));
    assert!(failed && refused.contains("TAB_NOT_YOURS"), "{refused}");
    let journal = ok(&k, 13, "browser_audit", json!({}));
    assert!(!journal.contains("page-b.html"), "{journal}");
    let journal = ok(&k, 14, "browser_audit", json!({"context": handle}));
    assert!(
        journal.contains("page-b.html") && !journal.contains("page-a.html"),
        "{journal}"
    );
    // The handle in _meta works for requests without arguments (a resource read).
    let params = json!({
        "uri": "kapture://session/current/steps",
        "_meta": {"dev.kapture/context": handle},
    });
    let (_, m) = post(&k, 15, "resources/read", params);
    let steps = m["result"]["contents"][0]["text"].to_string();
    assert!(
        steps.contains("page-b.html") && !steps.contains("page-a.html"),
        "{m}"
    );

    // A legacy client beside it is unchanged: a session of its own, not the default context.
    let client = k.client().await;
    let params = rmcp::model::CallToolRequestParams::new("browser_snapshot");
    let result = client.call_tool(params).await.expect("a session's call");
    let text = format!("{:?}", result.content);
    assert!(
        !text.contains("Go to B") && !text.contains("Go to A"),
        "{text}"
    );

    // Closed, the handle is refused, never served elsewhere.
    ok(&k, 16, "browser_context_close", json!({"context": handle}));
    let (gone, failed) = call(&k, 17, "browser_snapshot", json!({"context": handle}));
    assert!(failed && gone.contains("BAD_ARGS"), "{gone}");
    let (guess, failed) = call(
        &k,
        18,
        "browser_snapshot",
        json!({"context": format!("kctx_{}", "0".repeat(32))}),
    );
    assert!(failed && guess.contains("BAD_ARGS"), "{guess}");
}

/// The Python SDK 2.x's interpreter (`cargo make setup` makes its virtualenv), or why not.
fn python_sdk() -> Result<PathBuf, String> {
    let python = kapture_e2e::target_dir()
        .join("mcp-python")
        .join("bin")
        .join("python");
    if kapture_e2e::on_path("python3").is_none() {
        return Err("python3 is not installed".into());
    }
    assert!(
        python.is_file(),
        "{} is missing: run `cargo make setup` (it installs the MCP Python SDK there)",
        python.display()
    );
    Ok(python)
}

/// kapture over stdio on the native engine, driving `endpoint` (a browser the test keeps),
/// said to be a throwaway one (the launched defaults).
fn stdio_kapture(endpoint: &str, scratch: &std::path::Path) -> Vec<String> {
    let mut argv = stdio_kapture_as_own(endpoint, scratch);
    argv.extend(["--endpoint-browser".into(), "throwaway".into()]);
    argv
}

/// kapture over stdio on the native engine, judging `endpoint` as a person's own browser
/// (changes are asked).
fn stdio_kapture_as_own(endpoint: &str, scratch: &std::path::Path) -> Vec<String> {
    let runtime = kapture_e2e::private_dir(scratch, "run");
    vec![
        kapture_e2e::kapture_bin().display().to_string(),
        "--browser".into(),
        "cdp".into(),
        "--cdp-endpoint".into(),
        endpoint.into(),
        "--runtime-dir".into(),
        runtime.display().to_string(),
        "--audit-dir".into(),
        scratch.join("audit").display().to_string(),
        "--data-dir".into(),
        scratch.join("data").display().to_string(),
    ]
}

/// Run one client program with its config; its last line must be `PASS …`.
async fn run_client(program: &[String], dir: &std::path::Path, config: Value) -> String {
    let child = tokio::process::Command::new(&program[0])
        .args(&program[1..])
        .arg(config.to_string())
        .current_dir(dir)
        .env("KAPTURE_KEYRING", "off")
        .env(
            "XDG_CONFIG_HOME",
            std::env::temp_dir().join("kapture-e2e-no-config"),
        )
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(90), child)
        .await
        .unwrap_or_else(|_| panic!("{program:?} {config} did not finish in 90 s"))
        .expect("the client runs");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success() && stdout.lines().any(|l| l.starts_with("PASS ")),
        "{program:?} {config}:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Each SDK in each mode, over HTTP (against one kapture) and stdio (a kapture each).
async fn sdk_runs(program: Vec<String>, dir: PathBuf, modes: [&str; 2]) {
    let site = www_test_pages::Site::start().unwrap();
    let pages = json!({"page_a": site.url("page-a.html"), "page_b": site.url("page-b.html")});
    let with = |extra: Value| {
        let mut c = pages.clone();
        for (k, v) in extra.as_object().unwrap() {
            c[k] = v.clone();
        }
        c
    };
    let k = HttpKapture::start(&[]).await;
    for mode in modes {
        let out = run_client(
            &program,
            &dir,
            with(json!({
                "mode": mode,
                "url": format!("{}?token={}", k.mcp_url, k.token),
                "token": k.token,
            })),
        )
        .await;
        eprintln!("{out}");
    }
    drop(k);
    let browser = kapture_e2e::devtools::DevToolsBrowser::start();
    let endpoint = browser.endpoint().await;
    for mode in modes {
        let scratch = tempfile::tempdir().unwrap();
        let out = run_client(
            &program,
            &dir,
            with(json!({"mode": mode, "stdio": stdio_kapture(&endpoint, scratch.path())})),
        )
        .await;
        eprintln!("{out}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_2_drives_kapture_stateless_and_in_fallback() {
    let python = match python_sdk() {
        Ok(p) => p,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp-clients");
    let program = vec![
        python.display().to_string(),
        dir.join("python_client.py").display().to_string(),
    ];
    sdk_runs(program, dir, ["auto", "legacy"]).await;
}

/// An approval without a server-sent request: the Python SDK's stateless client gets
/// `input_required`, its elicitation callback answers, and the retried click runs; a client
/// that declared no elicitation gets the rule's fallback, said in the answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approval_is_answered_through_input_required() {
    let python = match python_sdk() {
        Ok(p) => p,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp-clients");
    let program = vec![
        python.display().to_string(),
        dir.join("python_client.py").display().to_string(),
    ];
    let site = www_test_pages::Site::start().unwrap();
    let browser = kapture_e2e::devtools::DevToolsBrowser::start();
    let endpoint = browser.endpoint().await;
    let scratch = tempfile::tempdir().unwrap();
    let config = json!({
        "mode": "auto",
        "approve": site.url("form.html"),
        "stdio": stdio_kapture_as_own(&endpoint, scratch.path()),
    });
    run_client(&program, &dir, config).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_sdk_2_drives_kapture_stateless_and_in_fallback() {
    let (dir, node) = match mcp_clients() {
        Ok(found) => found,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let program = vec![node.display().to_string(), "ts-client.mjs".into()];
    sdk_runs(program, dir, ["modern", "legacy"]).await;
}

/// The MCP conformance suite's 0.2 alpha, exactly the server scenarios MCP 2026-07-28
/// requires, against `kapture --http`: every one that applies passes
/// (`conformance-2026-baseline.yml` says why the others do not apply).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_suite_for_2026_07_28_passes_every_scenario_that_applies() {
    let (dir, node) = match mcp_clients() {
        Ok(found) => found,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    let k = HttpKapture::start(&["--http-max-sessions", "64"]).await;
    let out_dir = k.scratch.path().join("conformance-2026");
    let args = [
        "node_modules/conformance-2026/dist/index.js".to_string(),
        "server".into(),
        "--url".into(),
        // The suite cannot send a header: the token goes in the query, as /mcp allows.
        format!("{}?token={}", k.mcp_url, k.token),
        "--requirements".into(),
        "2026-07-28".into(),
        "--expected-failures".into(),
        "conformance-2026-baseline.yml".into(),
        "-o".into(),
        out_dir.display().to_string(),
    ];
    let run = tokio::process::Command::new(&node)
        .args(&args)
        .current_dir(&dir)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(240), run)
        .await
        .expect("the suite finishes within 240 s")
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the 2026-07-28 conformance suite failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for passed in [
        "tools-list",
        "resources-list",
        "caching",
        "sep-2164-resource-not-found",
        "dns-rebinding-protection",
        "input-required-result-validate-input",
    ] {
        assert!(
            stdout.contains(&format!("✓ {passed}:")),
            "{passed} did not pass:\n{stdout}"
        );
    }
}

/// Long work of a stateless request: its progress comes on the request's own answer stream,
/// and a client that declares the tasks extension gets a task it polls with stateless
/// `tasks/get` requests until it holds the call's answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stateless_long_work_reports_progress_and_runs_as_a_task() {
    let k = HttpKapture::start(&[]).await;
    let (answer, m) = post(
        &k,
        1,
        "tools/call",
        json!({"name": "browser_wait_for", "arguments": {"time": 2.5},
               "_meta": {"progressToken": "wait-1"}}),
    );
    assert!(m.get("result").is_some(), "{m}");
    let heard: Vec<Value> = answer
        .body
        .lines()
        .filter_map(|l| l.trim().strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .filter(|n| n["method"] == "notifications/progress")
        .collect();
    assert!(heard.len() >= 2, "a heartbeat a second: {answer:?}");
    assert!(heard
        .iter()
        .all(|n| n["params"]["progressToken"] == "wait-1"));

    let mut tasks_meta = meta();
    tasks_meta["io.modelcontextprotocol/clientCapabilities"] =
        json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
    let (_, started) = post(
        &k,
        2,
        "tools/call",
        json!({"name": "browser_wait_for", "arguments": {"time": 0.5}, "_meta": tasks_meta}),
    );
    assert_eq!(started["result"]["resultType"], "task", "{started}");
    let task = started["result"]["taskId"].as_str().unwrap().to_string();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut id = 3;
    let done = loop {
        id += 1;
        let (_, polled) = post(
            &k,
            id,
            "tasks/get",
            json!({"taskId": task, "_meta": tasks_meta}),
        );
        if polled["result"]["status"] != "working" {
            break polled;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still working: {polled}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(done["result"]["status"], "completed", "{done}");
    assert!(done.to_string().contains("waited 0.5 s"), "{done}");
}
