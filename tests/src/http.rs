//! `kapture --http` for the tests: start the real binary serving MCP over Streamable HTTP
//! (with a launched headless Chromium), read its address and token from stderr, connect
//! rmcp clients with the bearer token, speak raw HTTP/1.1 for the attack tests, and stop it
//! with SIGTERM as a person's Ctrl+C would.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};

use crate::{kapture_bin, RESOLVER_RULES};

/// A running `kapture --http 127.0.0.1:0`.
pub struct HttpKapture {
    child: tokio::process::Child,
    pub pid: u32,
    /// `http://127.0.0.1:PORT/mcp` as kapture printed it.
    pub mcp_url: String,
    /// `http://127.0.0.1:PORT/app?token=T` as kapture printed it.
    pub app_url: String,
    pub token: String,
    pub port: u16,
    pub stderr_path: PathBuf,
    pub scratch: tempfile::TempDir,
}

/// One raw HTTP answer.
#[derive(Debug)]
pub struct RawAnswer {
    pub status: u16,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl RawAnswer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// An rmcp client over Streamable HTTP.
pub type HttpClient = RunningService<RoleClient, ()>;

impl HttpKapture {
    /// Start kapture with `--http 127.0.0.1:0`, a launched headless Chromium and `flags`.
    pub async fn start(flags: &[&str]) -> HttpKapture {
        Self::start_with(&["--browser", "launch", "--headless"], flags).await
    }

    /// Start kapture with `--http 127.0.0.1:0`, `browser` flags and `flags`.
    pub async fn start_with(browser: &[&str], flags: &[&str]) -> HttpKapture {
        let scratch = tempfile::tempdir().expect("temp dir");
        let runtime = crate::private_dir(scratch.path(), "run");
        let stderr_path = scratch.path().join("kapture.stderr");
        let stderr = std::fs::File::create(&stderr_path).expect("stderr file");
        let child = tokio::process::Command::new(kapture_bin())
            .arg(format!("--chromium-arg={RESOLVER_RULES}"))
            .args(browser)
            .args(["--http", "127.0.0.1:0", "--port", "0"])
            .args(flags)
            .arg("--runtime-dir")
            .arg(&runtime)
            .arg("--audit-dir")
            .arg(scratch.path().join("audit"))
            .arg("--data-dir")
            .arg(scratch.path().join("data"))
            .env("KAPTURE_LOG", "debug")
            .env("KAPTURE_KEYRING", "off")
            .env("XDG_CONFIG_HOME", scratch.path().join("config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(stderr))
            .kill_on_drop(true)
            .spawn()
            .expect("kapture starts");
        let pid = child.id().expect("kapture pid");
        let path = stderr_path.clone();
        let (mcp_url, app_url) = crate::eventually(
            "kapture to print its HTTP addresses",
            Duration::from_secs(20),
            || {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                async move {
                    let find = |needle: &str| {
                        text.split_whitespace()
                            .find(|w| w.starts_with("http://127.0.0.1:") && w.contains(needle))
                            .map(str::to_string)
                    };
                    Some((find("/mcp")?, find("/app?token=")?))
                }
            },
        )
        .await;
        let token = app_url
            .split("token=")
            .nth(1)
            .expect("a token in the app URL")
            .to_string();
        let port = mcp_url
            .trim_start_matches("http://127.0.0.1:")
            .trim_end_matches("/mcp")
            .parse()
            .expect("a port in the MCP URL");
        HttpKapture {
            child,
            pid,
            mcp_url,
            app_url,
            token,
            port,
            stderr_path,
            scratch,
        }
    }

    /// An rmcp client that initialized a session with the token.
    pub async fn client(&self) -> HttpClient {
        self.try_client().await.expect("MCP initialize over HTTP")
    }

    pub async fn try_client(&self) -> Result<HttpClient, String> {
        let config = StreamableHttpClientTransportConfig::with_uri(self.mcp_url.as_str())
            .auth_header(&self.token);
        ().serve(StreamableHttpClientTransport::from_config(config))
            .await
            .map_err(|e| e.to_string())
    }

    /// `http://127.0.0.1:PORT`.
    pub fn origin(&self) -> String {
        self.mcp_url.trim_end_matches("/mcp").to_string()
    }

    /// kapture's stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    /// The audit journal's entries so far.
    pub fn audit_lines(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(self.scratch.path().join("audit").join("audit.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// One raw HTTP/1.1 request to kapture's port: `headers` as given (a `Host` among them
    /// replaces the right one), the answer read until the server closes, or until the first
    /// JSON-RPC message of an event stream arrived, within 15 s.
    pub fn raw(
        &self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: &[u8],
    ) -> RawAnswer {
        raw_request(self.port, method, path, headers, body)
    }

    /// A raw POST of JSON to /mcp with the token and the Accept header MCP wants.
    pub fn post_mcp(&self, extra: &[(&str, &str)], body: &str) -> RawAnswer {
        let auth = format!("Bearer {}", self.token);
        let mut headers = vec![
            ("Authorization", auth.as_str()),
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        headers.extend_from_slice(extra);
        self.raw("POST", "/mcp", &headers, body.as_bytes())
    }

    /// Stop kapture as Ctrl+C would (SIGTERM) and wait for it to exit, at most `limit`.
    pub async fn stop(mut self, limit: Duration) -> std::process::ExitStatus {
        #[cfg(unix)]
        {
            let _ = std::process::Command::new("kill")
                .args(["-TERM", &self.pid.to_string()])
                .status();
        }
        match tokio::time::timeout(limit, self.child.wait()).await {
            Ok(status) => status.expect("kapture's exit status"),
            Err(_) => panic!("kapture did not exit within {limit:?} of SIGTERM"),
        }
    }
}

impl Drop for HttpKapture {
    /// A test that ends (or fails) without `stop` still stops kapture politely (SIGTERM), so
    /// that kapture closes the browser it launched instead of leaving it running.
    fn drop(&mut self) {
        if !crate::process_alive(self.pid) {
            return;
        }
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &self.pid.to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while crate::process_alive(self.pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The initialize request a raw client sends.
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

fn raw_request(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> RawAnswer {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).expect("connect to kapture");
    let deadline = Instant::now() + Duration::from_secs(15);
    stream
        .set_read_timeout(Some(Duration::from_millis(500)))
        .expect("read timeout");
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    stream.write_all(head.as_bytes()).expect("send head");
    // The server may answer (413) before the whole body went: a failed write is fine.
    let _ = stream.write_all(body);
    let mut got = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    while Instant::now() < deadline {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                got.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&got);
                // An event stream stays open: the answer is its first message with an id
                // (notifications, such as progress, may come before it).
                let message = text.lines().any(|l| {
                    l.trim_start().strip_prefix("data:").is_some_and(|d| {
                        serde_json::from_str::<serde_json::Value>(d.trim())
                            .is_ok_and(|m| m.get("id").is_some())
                    })
                });
                if text.contains("text/event-stream") && message {
                    break;
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) => {}
            Err(_) => break,
        }
    }
    let text = String::from_utf8_lossy(&got).to_string();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP status line in {text:?}"));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    RawAnswer {
        status,
        headers,
        body: body.to_string(),
    }
}

/// The tests/mcp-clients folder (the conformance suite and the Inspector CLI, installed by
/// `cargo make setup`) and its pinned Node.js, or why they cannot run.
pub fn mcp_clients() -> Result<(PathBuf, PathBuf), String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("mcp-clients");
    let node = dir.join("node_modules").join(".bin").join("node");
    if crate::on_path("npm").is_none() {
        return Err("npm is not installed".into());
    }
    assert!(
        node.is_file(),
        "{} is missing: run `cargo make setup` (it installs tests/mcp-clients)",
        node.display()
    );
    Ok((dir, node))
}
