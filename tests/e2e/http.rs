//! `kapture --http`: MCP over Streamable HTTP with a launched headless Chromium. Real
//! sessions for rmcp clients (two at once, each running tools), the attacks a web page or a
//! stranger on the machine could try (no or wrong token, foreign Origin, `null`, Host
//! rebinding, unknown sessions, huge bodies: refused before anything runs), the session cap
//! and idle expiry, the Test Web App's files, SIGTERM closing everything, and real clients
//! that are not ours: the MCP conformance suite and the MCP Inspector CLI.

use std::time::Duration;

use kapture_e2e::http::{mcp_clients, HttpClient, HttpKapture, INITIALIZE};
use kapture_e2e::{descendants_of, eventually, process_alive};
use rmcp::model::CallToolRequestParams;
use serde_json::{json, Value};

fn text_of(result: &rmcp::model::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

async fn call(client: &HttpClient, tool: &str, args: Value) -> String {
    let params = CallToolRequestParams::new(tool.to_string())
        .with_arguments(args.as_object().cloned().unwrap_or_default());
    let result = client.call_tool(params).await.expect("tools/call answered");
    let text = text_of(&result);
    assert_ne!(result.is_error, Some(true), "{tool} failed: {text}");
    text
}

fn tab_in(answer: &str) -> i64 {
    kapture_e2e::tab_of(answer)
}

/// The JSON-RPC message of an answer (plain JSON, or the first `data:` of an event stream).
fn rpc(answer: &kapture_e2e::http::RawAnswer) -> Value {
    if let Ok(v) = serde_json::from_str(&answer.body) {
        return v;
    }
    answer
        .body
        .lines()
        .filter_map(|l| l.trim().strip_prefix("data:"))
        .find_map(|d| serde_json::from_str(d.trim()).ok())
        .unwrap_or_else(|| panic!("no JSON-RPC message in {:?}", answer.body))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_gives_every_client_a_session_and_stops_cleanly() {
    let site = www_test_pages::Site::start().unwrap();
    let k = HttpKapture::start(&[]).await;
    assert!(k.mcp_url.ends_with("/mcp"), "{}", k.mcp_url);
    assert!(k.token.len() >= 32, "a token of at least 128 bits");

    let client = k.client().await;
    let tools = client.list_all_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "browser_snapshot"));
    let went = call(
        &client,
        "browser_navigate",
        json!({"url": site.url("page-a.html")}),
    )
    .await;
    assert!(went.contains("Page A"), "{went}");
    let snap = call(&client, "browser_snapshot", json!({})).await;
    assert!(snap.contains("Go to B"), "{snap}");

    // A raw initialize is given a session id.
    let init = k.post_mcp(&[], INITIALIZE);
    assert_eq!(init.status, 200, "{init:?}");
    assert!(init.header("mcp-session-id").is_some_and(|s| !s.is_empty()));
    assert_eq!(rpc(&init)["result"]["serverInfo"]["name"], "kapture");
    // A 2026-07-28 probe without the revision's metadata is told what it lacks (a whole
    // one is served: tests/e2e/stateless.rs); it opens no session.
    let discover = k.post_mcp(
        &[],
        r#"{"jsonrpc":"2.0","id":7,"method":"server/discover","params":{}}"#,
    );
    assert!(discover.header("mcp-session-id").is_none());
    assert_eq!(rpc(&discover)["error"]["code"], -32602, "{discover:?}");
    assert_eq!(rpc(&discover)["id"], 7);
    // Neither a session nor the revision's metadata: refused.
    let list = k.post_mcp(
        &[],
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/list","params":{}}"#,
    );
    assert_eq!(list.status, 400, "{list:?}");
    assert_eq!(rpc(&list)["error"]["code"], -32600);

    // SIGTERM: kapture exits, its browser with it.
    let family = descendants_of(k.pid);
    assert!(!family.is_empty(), "a launched browser");
    drop(client);
    let status = k.stop(Duration::from_secs(15)).await;
    assert!(status.success(), "{status:?}");
    eventually(
        "the launched browser to exit",
        Duration::from_secs(10),
        || {
            let alive: Vec<u32> = family
                .iter()
                .copied()
                .filter(|p| process_alive(*p))
                .collect();
            async move { alive.is_empty().then_some(()) }
        },
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_refuses_strangers_before_anything_runs() {
    let site = www_test_pages::Site::start().unwrap();
    let k = HttpKapture::start(&[]).await;
    let port = k.port;
    let own = format!("http://127.0.0.1:{port}");
    let init = k.post_mcp(&[], INITIALIZE);
    let session = init.header("mcp-session-id").unwrap().to_string();
    let navigate = json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"browser_navigate","arguments":{"url": site.url("page-b.html")}}}).to_string();
    let json_headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Mcp-Session-Id", session.as_str()),
    ];

    // No token, a wrong one, another scheme, the token in the query of /app: 401.
    let wrong = format!("Bearer {}", "0".repeat(k.token.len()));
    let basic = format!("Basic {}", k.token);
    for auth in [None, Some(wrong.as_str()), Some(basic.as_str())] {
        let mut headers = json_headers.to_vec();
        if let Some(a) = auth {
            headers.push(("Authorization", a));
        }
        let answer = k.raw("POST", "/mcp", &headers, navigate.as_bytes());
        assert_eq!(answer.status, 401, "{auth:?}: {answer:?}");
        assert!(answer
            .header("www-authenticate")
            .is_some_and(|v| v.starts_with("Bearer")));
    }
    // Foreign pages (with the right token, even): 403, on /mcp and /app.
    let auth = format!("Bearer {}", k.token);
    for origin in [
        "https://evil.example",
        "null",
        "http://127.0.0.1:1",
        "http://localhost",
    ] {
        let mut headers = json_headers.to_vec();
        headers.extend([("Authorization", auth.as_str()), ("Origin", origin)]);
        let answer = k.raw("POST", "/mcp", &headers, navigate.as_bytes());
        assert_eq!(answer.status, 403, "{origin}: {answer:?}");
        assert_eq!(k.raw("GET", "/app", &[("Origin", origin)], b"").status, 403);
    }
    // DNS rebinding: the page's own name in Host, our port: refused on every route.
    for host in [
        format!("evil.example:{port}"),
        format!("127.0.0.1.nip.io:{port}"),
        format!("0.0.0.0:{port}"),
        "127.0.0.1".to_string(),
    ] {
        let mut headers = json_headers.to_vec();
        headers.extend([("Authorization", auth.as_str()), ("Host", host.as_str())]);
        let answer = k.raw("POST", "/mcp", &headers, navigate.as_bytes());
        assert_eq!(answer.status, 421, "{host}: {answer:?}");
        assert_eq!(k.raw("GET", "/app", &[("Host", &host)], b"").status, 421);
    }
    // A session kapture does not know: 404.
    let unknown = k.post_mcp(
        &[("Mcp-Session-Id", "not-a-session")],
        r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#,
    );
    assert_eq!(unknown.status, 404, "{unknown:?}");
    // A body over the cap: 413, before it is read whole.
    let huge = format!(
        r#"{{"jsonrpc":"2.0","id":4,"method":"ping","params":{{"pad":"{}"}}}}"#,
        "x".repeat(5 * 1024 * 1024)
    );
    let answer = k.post_mcp(&[("Mcp-Session-Id", &session)], &huge);
    assert_eq!(answer.status, 413);

    // Nothing of the refused ran: no navigation was journaled, none happened.
    assert!(
        !k.audit_lines()
            .iter()
            .any(|e| e["tool"] == "browser_navigate"),
        "a refused request ran: {:?}",
        k.audit_lines()
    );
    // The same page, our own Origin, the token in the query (for clients without headers):
    // served, and journaled — the check above could fail.
    let query = format!("/mcp?token={}", k.token);
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("Origin", own.as_str()),
    ];
    let answer = k.raw("POST", &query, &headers, INITIALIZE.as_bytes());
    assert_eq!(answer.status, 200, "{answer:?}");
    let fresh = answer.header("mcp-session-id").unwrap().to_string();
    headers.push(("Mcp-Session-Id", fresh.as_str()));
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(
        k.raw("POST", &query, &headers, initialized.as_bytes())
            .status,
        202
    );
    let went = k.raw("POST", &query, &headers, navigate.as_bytes());
    assert_eq!(went.status, 200, "{went:?}");
    assert!(rpc(&went).to_string().contains("Page B"), "{went:?}");
    // The journal is written behind the answer: wait for the line, then there is exactly
    // one (a refused request that ran would have made a second).
    let navigations = eventually(
        "the served navigation in the journal",
        Duration::from_secs(10),
        || {
            let n = k
                .audit_lines()
                .iter()
                .filter(|e| e["tool"] == "browser_navigate")
                .count();
            async move { (n > 0).then_some(n) }
        },
    )
    .await;
    assert_eq!(
        navigations,
        1,
        "a refused request ran: {:?}",
        k.audit_lines()
    );
    // The token is only taken from a query on /mcp: never logged.
    assert!(!k.stderr().replace(&k.app_url, "").contains(&k.token));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_sessions_are_capped_and_idle_ones_expire() {
    // No browser needed: sessions only.
    let k = HttpKapture::start_with(
        &["--browser", "connect", "--browser-wait-ms", "1000"],
        &["--http-max-sessions", "2", "--http-idle-secs", "3"],
    )
    .await;
    let open = |k: &HttpKapture| {
        let a = k.post_mcp(&[], INITIALIZE);
        (a.status, a.header("mcp-session-id").map(str::to_string), a)
    };
    let (s1, first, _) = open(&k);
    let second_opened = std::time::Instant::now();
    let (s2, second, _) = open(&k);
    assert_eq!((s1, s2), (200, 200));
    let (s3, none, refused) = open(&k);
    assert_eq!(s3, 503, "{refused:?}");
    assert!(none.is_none());
    assert!(rpc(&refused)["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("--http-max-sessions")));
    // Ending one lets the next one in.
    let auth = format!("Bearer {}", k.token);
    let first = first.unwrap();
    let ended = k.raw(
        "DELETE",
        "/mcp",
        &[("Authorization", &auth), ("Mcp-Session-Id", &first)],
        b"",
    );
    assert!(ended.status < 300, "{ended:?}");
    let (s4, third, _) = open(&k);
    assert_eq!(s4, 200);
    // Idle ones expire: once one did, a new session fits again (nothing touched them
    // meanwhile: a probe of a session would keep it alive). The oldest goes first.
    let fourth = eventually("an idle session to expire", Duration::from_secs(30), || {
        let got = open(&k);
        async move { (got.0 == 200).then_some(got.1) }
    })
    .await;
    assert!(fourth.is_some() && third.is_some());
    assert!(
        second_opened.elapsed() >= Duration::from_millis(2500),
        "a session expired before its 3 idle seconds"
    );
    let gone = second.unwrap();
    let ping = k.post_mcp(
        &[("Mcp-Session-Id", &gone)],
        r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#,
    );
    assert_eq!(ping.status, 404, "{gone}: {ping:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_two_clients_run_tools_at_once() {
    let site = www_test_pages::Site::start().unwrap();
    let k = HttpKapture::start(&[]).await;
    let (a, b) = tokio::join!(k.client(), k.client());
    let run = |client: HttpClient, page: &'static str, text: &'static str| {
        let url = site.url(page);
        async move {
            let opened = call(
                &client,
                "browser_tabs",
                json!({"action": "new", "url": url}),
            )
            .await;
            let tab = opened
                .split_whitespace()
                .nth(2)
                .and_then(|t| t.parse::<i64>().ok())
                .unwrap_or_else(|| panic!("no tab in {opened}"));
            let mut seen = Vec::new();
            for _ in 0..3 {
                let went = call(
                    &client,
                    "browser_navigate",
                    json!({"url": url, "tabId": tab}),
                )
                .await;
                assert_eq!(tab_in(&went), tab, "{went}");
                let snap = call(&client, "browser_snapshot", json!({"tabId": tab})).await;
                assert!(snap.contains(text), "{snap}");
                seen.push(snap);
            }
            (client, seen.len())
        }
    };
    let ((a, na), (b, nb)) = tokio::join!(
        run(a, "page-a.html", "Go to B"),
        run(b, "page-b.html", "Page B")
    );
    assert_eq!((na, nb), (3, 3));
    drop((a, b));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_serves_the_app_files_and_nothing_else() {
    let ext = tempfile::tempdir().unwrap();
    let built = kapture_e2e::target_dir().join("extension");
    for f in ["manifest.json", "ext_core_bg.wasm"] {
        std::fs::copy(built.join(f), ext.path().join(f)).unwrap();
    }
    std::fs::create_dir(ext.path().join("pkg")).unwrap();
    std::fs::write(
        ext.path().join("app.html"),
        "<!doctype html><title>App</title>",
    )
    .unwrap();
    std::fs::write(ext.path().join("app.js"), "console.log('app')").unwrap();
    std::fs::write(ext.path().join("pkg").join("m.wasm"), b"\0asm\x01\0\0\0").unwrap();
    let dir = ext.path().display().to_string();
    let k = HttpKapture::start_with(
        &["--browser", "connect", "--browser-wait-ms", "1000"],
        &["--extension-dir", &dir],
    )
    .await;
    let with_token = format!("/app?token={}", k.token);
    for (path, kind, body) in [
        ("/app", "text/html", "<title>App</title>"),
        (with_token.as_str(), "text/html", "<title>App</title>"),
        ("/app/app.js", "text/javascript", "console.log"),
        ("/app/pkg/m.wasm", "application/wasm", "asm"),
    ] {
        let got = k.raw("GET", path, &[], b"");
        assert_eq!(got.status, 200, "{path}: {got:?}");
        assert!(
            got.header("content-type")
                .is_some_and(|c| c.starts_with(kind)),
            "{path}: {got:?}"
        );
        assert!(got.body.contains(body), "{path}: {got:?}");
        assert_eq!(got.header("referrer-policy"), Some("no-referrer"));
        assert_eq!(got.header("x-content-type-options"), Some("nosniff"));
    }
    for path in [
        "/app/manifest.json",
        "/app/../manifest.json",
        "/app/%2e%2e/manifest.json",
        "/app/pkg/../../app.js",
        "/app/missing.js",
        "/mcp/../app",
        "/elsewhere",
    ] {
        let got = k.raw("GET", path, &[], b"");
        assert_eq!(got.status, 404, "{path}: {got:?}");
    }
    let root = k.raw("GET", "/", &[], b"");
    assert_eq!(root.status, 303);
    assert_eq!(root.header("location"), Some("/app"));
    // Not built: a page that says how to build it.
    std::fs::remove_file(ext.path().join("app.html")).unwrap();
    let missing = k.raw("GET", "/app", &[], b"");
    assert_eq!(missing.status, 404);
    assert!(missing.body.contains("cargo make build"), "{missing:?}");
}

/// Run a Node.js program of tests/mcp-clients with `args`, within `limit`.
async fn node(
    node: &std::path::Path,
    dir: &std::path::Path,
    args: &[String],
    limit: Duration,
) -> std::process::Output {
    let child = tokio::process::Command::new(node)
        .args(args)
        .current_dir(dir)
        // What the Inspector starts over stdio inherits these: hermetic, no desktop keyring.
        .env("KAPTURE_KEYRING", "off")
        .env(
            "XDG_CONFIG_HOME",
            std::env::temp_dir().join("kapture-e2e-no-config"),
        )
        .kill_on_drop(true)
        .output();
    tokio::time::timeout(limit, child)
        .await
        .unwrap_or_else(|_| panic!("{args:?} did not finish within {limit:?}"))
        .expect("node runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conformance_suite_passes_every_scenario_that_applies() {
    let (dir, node_bin) = match mcp_clients() {
        Ok(found) => found,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    // The suite's client never ends its sessions (no DELETE): one each for 32 scenarios.
    let k = HttpKapture::start(&["--http-max-sessions", "64"]).await;
    let out_dir = k.scratch.path().join("conformance");
    let args: Vec<String> = [
        "node_modules/@modelcontextprotocol/conformance/dist/index.js",
        "server",
        "--url",
        // The suite cannot send a header: the token goes in the query, as /mcp allows.
        &format!("{}?token={}", k.mcp_url, k.token),
        "--expected-failures",
        "conformance-baseline.yml",
        "-o",
        &out_dir.display().to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let out = node(&node_bin, &dir, &args, Duration::from_secs(240)).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the conformance suite failed:\n{stdout}\n{stderr}"
    );
    // It really ran against kapture: the scenarios that apply passed by name.
    for passed in [
        "server-initialize",
        "ping",
        "tools-list",
        "resources-list",
        "server-sse-multiple-streams",
        "dns-rebinding-protection",
    ] {
        assert!(
            stdout.contains(&format!("✓ {passed}:")),
            "{passed} did not pass:\n{stdout}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn inspector_cli_lists_and_calls_tools_over_http_and_stdio() {
    let (dir, node_bin) = match mcp_clients() {
        Ok(found) => found,
        Err(why) => return eprintln!("skipped: {why}"),
    };
    // Run from its own folder: it finds its package.json relative to the working directory.
    let dir = dir.join("node_modules/@modelcontextprotocol/inspector-cli/build");
    let cli = "index.js".to_string();
    let site = www_test_pages::Site::start().unwrap();
    let page = site.url("page-a.html");
    let limit = Duration::from_secs(60);
    let run = |target: Vec<String>, method: Vec<String>| {
        // The server first (commander wants it before `--`), then the method, then after
        // `--` the server command's own arguments.
        let mut args = vec![cli.clone(), target[0].clone()];
        args.extend(method);
        args.push("--".into());
        args.extend(target[1..].iter().cloned());
        let (node_bin, dir) = (node_bin.clone(), dir.clone());
        async move {
            let out = node(&node_bin, &dir, &args, limit).await;
            let text = String::from_utf8_lossy(&out.stdout).to_string();
            if out.status.success() {
                Ok(text)
            } else {
                Err(format!(
                    "{args:?} failed:\n{text}\n{}",
                    String::from_utf8_lossy(&out.stderr)
                ))
            }
        }
    };
    let words = |s: &[&str]| s.iter().map(|w| w.to_string()).collect::<Vec<_>>();
    let list = words(&["--method", "tools/list"]);
    let navigate = {
        let mut m = words(&[
            "--method",
            "tools/call",
            "--tool-name",
            "browser_navigate",
            "--tool-arg",
        ]);
        m.push(format!("url={page}"));
        m
    };
    let snapshot = words(&["--method", "tools/call", "--tool-name", "browser_snapshot"]);

    // Over HTTP, with the bearer token in a header.
    let k = HttpKapture::start(&[]).await;
    let over_http = |method: Vec<String>| {
        let mut m = method;
        m.extend(["--transport".into(), "http".into(), "--header".into()]);
        m.push(format!("Authorization: Bearer {}", k.token));
        run(vec![k.mcp_url.clone()], m)
    };
    let tools = over_http(list.clone()).await.unwrap();
    assert!(tools.contains("\"browser_navigate\""), "{tools}");
    let went = over_http(navigate.clone()).await.unwrap();
    assert!(went.contains("Page A"), "{went}");
    // Each Inspector run is an MCP session of its own, and the navigating one still owns its
    // tab (the Inspector does not end its sessions): the next run gets a tab of its own, and
    // naming the other's tab is refused — sessions do not trample each other.
    let tab = kapture_e2e::tab_of(&went);
    let snap = over_http(snapshot.clone()).await.unwrap();
    assert!(
        snap.contains("of this session's own") && !snap.contains("Go to B"),
        "{snap}"
    );
    let mut named = snapshot.clone();
    named.extend(["--tool-arg".into(), format!("tabId={tab}")]);
    let refused = over_http(named).await.unwrap();
    assert!(refused.contains("TAB_NOT_YOURS"), "{refused}");
    // Without the token the Inspector is refused.
    let without = run(
        vec![k.mcp_url.clone()],
        words(&["--method", "tools/list", "--transport", "http"]),
    )
    .await;
    assert!(
        without.is_err(),
        "tools/list without the token succeeded: {without:?}"
    );
    drop(k);

    // Over stdio: the Inspector starts kapture itself, on a browser the test keeps between
    // runs (so the snapshot sees the page the previous run navigated to).
    let browser = kapture_e2e::devtools::DevToolsBrowser::start();
    let endpoint = browser.endpoint().await;
    let scratch = tempfile::tempdir().unwrap();
    let runtime = kapture_e2e::private_dir(scratch.path(), "run");
    let kapture = vec![
        kapture_e2e::kapture_bin().display().to_string(),
        "--browser".into(),
        "cdp".into(),
        "--cdp-endpoint".into(),
        endpoint,
        "--endpoint-browser".into(),
        "throwaway".into(),
        "--runtime-dir".into(),
        runtime.display().to_string(),
        "--audit-dir".into(),
        scratch.path().join("audit").display().to_string(),
        "--data-dir".into(),
        scratch.path().join("data").display().to_string(),
    ];
    let over_stdio = |method: Vec<String>| run(kapture.clone(), method);
    let tools = over_stdio(list).await.unwrap();
    assert!(tools.contains("\"browser_snapshot\""), "{tools}");
    let went = over_stdio(navigate).await.unwrap();
    assert!(went.contains("Page A"), "{went}");
    let snap = over_stdio(snapshot).await.unwrap();
    assert!(snap.contains("Go to B"), "{snap}");
    drop(browser);
}

/// Read from `stream` until the server closes it or `limit` passes: what came, and whether
/// it closed (EOF or reset) rather than went quiet.
fn read_until_closed(stream: &mut std::net::TcpStream, limit: Duration) -> (String, bool) {
    use std::io::Read;
    let deadline = std::time::Instant::now() + limit;
    stream
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while std::time::Instant::now() < deadline {
        match stream.read(&mut buf) {
            Ok(0) => return (String::from_utf8_lossy(&got).into(), true),
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return (String::from_utf8_lossy(&got).into(), true),
        }
    }
    (String::from_utf8_lossy(&got).into(), false)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_stalled_connections_are_capped_and_timed_out() {
    use std::io::Write;
    const CAP: usize = 8;
    const HEADER_SECS: u64 = 2;
    let k = HttpKapture::start(&[
        "--http-max-connections",
        &CAP.to_string(),
        "--http-header-secs",
        &HEADER_SECS.to_string(),
    ])
    .await;
    let port = k.port;
    let half = format!("GET /app HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n");
    // Slowloris: CAP requests whose headers never end.
    let mut stalled: Vec<std::net::TcpStream> = (0..CAP)
        .map(|_| {
            let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
            s.write_all(half.as_bytes()).unwrap();
            s
        })
        .collect();
    // One more, a whole request: closed unread at once (accepted after the CAP before it).
    let started = std::time::Instant::now();
    let mut over = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let _ = over.write_all(
        format!("GET /nope HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n")
            .as_bytes(),
    );
    let (answer, closed) = read_until_closed(&mut over, Duration::from_secs(10));
    assert!(
        closed && answer.is_empty(),
        "the connection over the cap is closed unanswered: {answer:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(HEADER_SECS),
        "closed at once, not at the header timeout: {:?}",
        started.elapsed()
    );
    // The stalled ones are closed at the header timeout (hyper may say 408 first).
    for s in &mut stalled {
        let (answer, closed) = read_until_closed(s, Duration::from_secs(HEADER_SECS + 10));
        assert!(closed, "a stalled connection stays open");
        assert!(
            answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
            "{answer:?}"
        );
    }
    // Then a real client gets through.
    let page = eventually(
        "a request to be served after the stalled ones",
        Duration::from_secs(10),
        || async { Some(k.raw("GET", "/nope", &[], b"")).filter(|a| a.status == 404) },
    )
    .await;
    assert!(page.body.contains("/mcp"), "{page:?}");
    // A kept-alive connection left idle after its answer is closed too.
    let mut idle = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    idle.write_all(format!("GET /nope HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n").as_bytes())
        .unwrap();
    let (answer, closed) = read_until_closed(&mut idle, Duration::from_secs(HEADER_SECS + 10));
    assert!(answer.starts_with("HTTP/1.1 404"), "{answer:?}");
    assert!(closed, "an idle keep-alive connection stays open");
    // MCP still works.
    let client = k.client().await;
    let status = call(&client, "browser_status", json!({})).await;
    assert!(status.contains(&k.mcp_url), "{status}");
    drop(client);
    k.stop(Duration::from_secs(15)).await;
}

/// Can this machine listen on the IPv6 loopback?
fn has_ipv6_loopback() -> bool {
    std::net::TcpListener::bind("[::1]:0").is_ok()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_holds_both_loopbacks_and_says_its_sessions() {
    let k = HttpKapture::start(&[]).await;
    let port = k.port;
    // browser_status: the URL (never the token), the sessions open, and which one this is.
    let a = k.client().await;
    let b = k.client().await;
    let status = call(&a, "browser_status", json!({})).await;
    assert!(
        status.contains(&format!("MCP over HTTP at {}: 2 sessions open", k.mcp_url)),
        "{status}"
    );
    assert!(!status.contains(&k.token), "the token is never shown");
    let other = call(&b, "browser_status", json!({})).await;
    let me = |s: &str| {
        s.split("this one is ")
            .nth(1)
            .map(|r| r.split('\n').next().unwrap().to_string())
    };
    assert!(
        me(&status).is_some() && me(&status) != me(&other),
        "{status}\n{other}"
    );
    drop(b);
    let fewer = eventually("one session fewer", Duration::from_secs(15), || {
        let a = &a;
        async move {
            let s = call(a, "browser_status", json!({})).await;
            s.contains(": 1 session open").then_some(s)
        }
    })
    .await;
    assert!(fewer.contains("MCP over HTTP"), "{fewer}");
    drop(a);

    if !has_ipv6_loopback() {
        eprintln!("skipped the IPv6 half: this machine has no ::1");
        k.stop(Duration::from_secs(15)).await;
        return;
    }
    // The other loopback answers too, and is taken from any squatter.
    use std::io::Write;
    let mut v6 = std::net::TcpStream::connect(("::1", port)).expect("kapture listens on [::1]");
    v6.write_all(
        format!("GET /nope HTTP/1.1\r\nHost: [::1]:{port}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
    .unwrap();
    let (answer, _) = read_until_closed(&mut v6, Duration::from_secs(10));
    assert!(answer.starts_with("HTTP/1.1 404"), "{answer:?}");
    assert!(
        std::net::TcpListener::bind(("::1", port)).is_err(),
        "nobody else may listen on [::1]:{port}"
    );
    k.stop(Duration::from_secs(15)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_refuses_to_start_when_the_other_loopback_is_squatted() {
    if !has_ipv6_loopback() {
        eprintln!("skipped: this machine has no ::1 to squat");
        return;
    }
    // A squatter on [::1]:P, with 127.0.0.1:P free (tried a bounded number of ports).
    let (squatter, port) = (0..20)
        .find_map(|_| {
            let l = std::net::TcpListener::bind("[::1]:0").ok()?;
            let port = l.local_addr().ok()?.port();
            std::net::TcpListener::bind(("127.0.0.1", port)).ok()?;
            Some((l, port))
        })
        .expect("a port free on 127.0.0.1 whose [::1] twin we hold");
    let scratch = tempfile::tempdir().unwrap();
    let run = scratch.path().join("run");
    std::fs::create_dir(&run).unwrap();
    let out = tokio::process::Command::new(kapture_e2e::kapture_bin())
        .args(["--browser", "launch", "--headless", "--port", "0", "--http"])
        .arg(format!("127.0.0.1:{port}"))
        .arg("--runtime-dir")
        .arg(&run)
        .arg("--audit-dir")
        .arg(scratch.path().join("audit"))
        .arg("--data-dir")
        .arg(scratch.path().join("data"))
        .env("KAPTURE_KEYRING", "off")
        .env("XDG_CONFIG_HOME", scratch.path().join("config"))
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(20), out)
        .await
        .expect("kapture refuses at once")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("[::1]:{port}")) && stderr.contains("another program holds it"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("/app?token="),
        "no token was handed out: {stderr}"
    );
    drop(squatter);
}

/// Open a tab at `url` for `client`'s session; its id.
async fn open_tab(client: &HttpClient, url: &str) -> i64 {
    let opened = call(client, "browser_tabs", json!({"action": "new", "url": url})).await;
    opened
        .split_whitespace()
        .nth(2)
        .and_then(|t| t.parse::<i64>().ok())
        .unwrap_or_else(|| panic!("no tab in {opened}"))
}

/// The profile folder of the browser the `--http` kapture launched.
fn launched_profile(k: &HttpKapture) -> std::path::PathBuf {
    let browser = *kapture_e2e::children_of(k.pid)
        .first()
        .expect("kapture launched a browser");
    std::fs::read_to_string(format!("/proc/{browser}/cmdline"))
        .unwrap_or_default()
        .split('\0')
        .find_map(|a| {
            a.strip_prefix("--user-data-dir=")
                .map(std::path::PathBuf::from)
        })
        .expect("the launched browser has a profile folder")
}

/// On the extension engine, an approval given "for this origin, this agent" in the Kapture
/// panel is the asking MCP session's alone: another client of the same kapture is asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_a_grant_in_the_panel_is_the_asking_sessions_alone() {
    let site = www_test_pages::Site::start().unwrap();
    let k = HttpKapture::start(&[
        "--ask",
        &format!("eval@127.0.0.1:{}", site.port()),
        "--approval-timeout-ms",
        "20000",
        "--chromium-arg=--remote-debugging-port=0",
    ])
    .await;
    let (a, b) = (k.client().await, k.client().await);
    let tab_a = open_tab(&a, &site.url("page-a.html")).await;
    let tab_b = open_tab(&b, &site.url("page-b.html")).await;
    let eval = |tab: i64| json!({"function": "() => 6 * 7", "tabId": tab});
    let profile = launched_profile(&k);

    // A is asked in its tab's panel, and the person allows the origin for A.
    let mut panel = kapture_e2e::panel::Panel::open_in(&profile, tab_a).await;
    let (first, ()) = tokio::join!(call(&a, "browser_evaluate", eval(tab_a)), async {
        panel
            .until(
                "A's approval",
                "document.querySelector('[id^=approve-origin-]')?.id",
            )
            .await;
        panel.click("[id^=approve-origin-]").await;
    });
    assert!(first.contains("42"), "{first}");
    // A again: nobody answers now, so an ask would end APPROVAL_DENIED; it runs unasked.
    let again = call(&a, "browser_evaluate", eval(tab_a)).await;
    assert!(again.contains("42"), "{again}");

    // B's same call on the same origin is asked (in a window for its tab); denied there.
    let mut raw = kapture_e2e::cdp::RawCdp::connect(&profile)
        .await
        .expect("raw CDP to the launched browser");
    let params = CallToolRequestParams::new("browser_evaluate")
        .with_arguments(eval(tab_b).as_object().cloned().unwrap_or_default());
    let (refused, ()) = tokio::join!(
        async { b.call_tool(params).await.expect("tools/call answered") },
        async {
            let wanted = format!("panel.html?tabId={tab_b}");
            // Polled with a deadline: the window opens when B's ask reaches the extension.
            let deadline = std::time::Instant::now() + Duration::from_secs(15);
            let session = loop {
                if let Ok(session) = raw.attach_page(&wanted).await {
                    break session;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "B's approval window never opened (B was not asked)"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            };
            let mut window = kapture_e2e::panel::Panel { raw, session };
            window
                .until(
                    "B's approval",
                    "document.querySelector('[id^=approve-deny-]')?.id",
                )
                .await;
            window.click("[id^=approve-deny-]").await;
        }
    );
    let text = text_of(&refused);
    assert_eq!(
        refused.is_error,
        Some(true),
        "B ran under A's grant: {text}"
    );
    assert!(text.contains("APPROVAL_DENIED"), "{text}");
    drop((a, b));
}
