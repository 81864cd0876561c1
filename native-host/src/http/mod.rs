//! `kapture --http ADDRESS:PORT`: MCP over Streamable HTTP at `/mcp` (rmcp's
//! `StreamableHttpService`, one handler per MCP session from a factory) and the Test Web
//! App's files at `/app`. Every request passes the Host and Origin checks first
//! (`guard.rs`); `/mcp` then wants the boot's bearer token. Sessions are bounded in number
//! (`--http-max-sessions`) and expire when idle (`--http-idle-secs`); bodies are capped.
//!
//! Both revisions are served, chosen per request. An `initialize` (admitted under the cap)
//! opens a session with its own handler. A request without `Mcp-Session-Id` that carries
//! the 2026-07-28 metadata in `_meta` (and `server/discover`) is served statelessly by
//! rmcp, with the default context's handler (`Factories::stateless`): no session, nothing
//! counted against the cap; isolation is by a context handle the request names
//! (`mcp/contexts.rs`). Anything else without a session is refused as before.
//!
//! On a loopback address kapture also holds the other loopback family's address on the
//! same port (127.0.0.1 ↔ [::1]): a client told `http://localhost:PORT` may try `::1`
//! first, and a squatter there would receive its bearer token. Connections are capped in
//! number and in how long they may dawdle (`serve.rs`).

pub mod app;
pub mod guard;
pub mod serve;

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, SessionConfig};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::pairing::Token;

/// Largest request body `/mcp` reads (tool arguments are small; an upload names paths).
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// The header naming a session (MCP Streamable HTTP).
const SESSION_HEADER: &str = "mcp-session-id";

#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error(transparent)]
    Refused(#[from] guard::BindRefusal),
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("cannot also listen on {addr} ({source}): another program holds it, and a client told http://localhost:{port} may reach that program first and hand it the bearer token. Stop it, or choose another port", port = addr.port())]
    TwinTaken {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// How the HTTP face runs (from the command line).
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub bind: SocketAddr,
    pub max_sessions: usize,
    pub idle: Duration,
    /// Connections served at once, and how long one may take to send headers or idle.
    pub limits: serve::Limits,
    /// The built extension folder the app's files come from (`None`: not built).
    pub app_dir: Option<PathBuf>,
}

/// `--http`'s listening sockets: the address asked for first, then (on loopback) its twin
/// in the other family on the same port.
pub struct Listeners(Vec<TcpListener>);

impl Listeners {
    /// The address asked for, its port resolved.
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.0[0].local_addr()
    }

    fn addrs(&self) -> Vec<SocketAddr> {
        self.0.iter().filter_map(|l| l.local_addr().ok()).collect()
    }
}

/// How many ports `PORT 0` tries for one free on both loopbacks.
const TWIN_TRIES: usize = 8;

/// The other loopback family's address (none off loopback: `--http-allow-remote`).
fn twin_of(ip: IpAddr) -> Option<IpAddr> {
    match ip {
        IpAddr::V4(v4) if v4.is_loopback() => Some(Ipv6Addr::LOCALHOST.into()),
        IpAddr::V6(v6) if v6.is_loopback() => Some(Ipv4Addr::LOCALHOST.into()),
        _ => None,
    }
}

/// The machine has no such loopback (no IPv6, say): nobody can squat it either.
fn no_such_address(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    const EAFNOSUPPORT: i32 = nix::errno::Errno::EAFNOSUPPORT as i32;
    #[cfg(windows)]
    const EAFNOSUPPORT: i32 = 10047;
    e.kind() == std::io::ErrorKind::AddrNotAvailable || e.raw_os_error() == Some(EAFNOSUPPORT)
}

/// Bind `--http`'s address (refusing a non-loopback one unless `allow_remote`) and, on
/// loopback, its twin in the other family; a twin someone else holds is refused.
pub async fn bind(text: &str, allow_remote: bool) -> Result<Listeners, HttpError> {
    let addr = guard::parse_bind(text, allow_remote)?;
    // PORT 0: another free port when the twin of the first one is taken.
    let tries = if addr.port() == 0 { TWIN_TRIES } else { 1 };
    let mut refused = None;
    for _ in 0..tries {
        let first = TcpListener::bind(addr)
            .await
            .map_err(|source| HttpError::Bind { addr, source })?;
        let Some(twin_ip) = twin_of(addr.ip()) else {
            return Ok(Listeners(vec![first]));
        };
        let port = first
            .local_addr()
            .map_err(|source| HttpError::Bind { addr, source })?
            .port();
        let twin = SocketAddr::new(twin_ip, port);
        match TcpListener::bind(twin).await {
            Ok(second) => return Ok(Listeners(vec![first, second])),
            Err(e) if no_such_address(&e) => {
                tracing::info!("no {twin_ip} on this machine ({e}): serving {addr} only");
                return Ok(Listeners(vec![first]));
            }
            Err(source) => refused = Some(HttpError::TwinTaken { addr: twin, source }),
        }
    }
    Err(refused.expect("at least one try"))
}

/// The running HTTP face.
pub struct HttpServer {
    addr: SocketAddr,
    token: Token,
    sessions: Arc<LocalSessionManager>,
    task: tokio::task::JoinHandle<()>,
}

/// `http://HOST:PORT` as a person on this machine reaches a server bound to `addr`.
fn base(addr: SocketAddr) -> String {
    let ip = if addr.ip().is_unspecified() {
        Ipv4Addr::LOCALHOST.into()
    } else {
        addr.ip()
    };
    format!("http://{}", SocketAddr::new(ip, addr.port()))
}

/// The MCP endpoint of a server bound to `addr`.
pub fn mcp_url(addr: SocketAddr) -> String {
    format!("{}/mcp", base(addr))
}

impl HttpServer {
    fn base(&self) -> String {
        base(self.addr)
    }

    pub fn mcp_url(&self) -> String {
        mcp_url(self.addr)
    }

    /// The one-click URL of the Test Web App, token included (the page takes it out of
    /// the address bar).
    pub fn app_url(&self) -> String {
        format!("{}/app?token={}", self.base(), self.token.expose())
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// MCP sessions open now.
    pub async fn open_sessions(&self) -> usize {
        self.sessions.sessions.read().await.len()
    }

    /// Wait (bounded) for the server to wind down after its shutdown token was cancelled.
    pub async fn stopped(self, limit: Duration) {
        let _ = tokio::time::timeout(limit, self.task).await;
    }
}

tokio::task_local! {
    /// Set while an admitted `initialize` is handed to rmcp: the only time the factory runs.
    static ADMITTED: ();
}

struct Shared<S> {
    mcp: StreamableHttpService<S, LocalSessionManager>,
    sessions: Arc<LocalSessionManager>,
    authorities: guard::Authorities,
    token: Token,
    max_sessions: usize,
    /// One `initialize` admitted at a time, so the cap is exact.
    admit: tokio::sync::Mutex<()>,
    app_dir: Option<PathBuf>,
}

/// Where `/mcp`'s handlers come from.
pub struct Factories<F, G> {
    /// The handler of one MCP session: called once per admitted `initialize`, dropped
    /// when its session ends (closed by the client, expired, or at shutdown).
    pub session: F,
    /// The handler of a stateless request (2026-07-28): called per request, so cheap.
    pub stateless: G,
}

/// Serve on `listener` until `shutdown` is cancelled, with handlers from `factories`.
pub fn start<S, F, G>(
    listeners: Listeners,
    options: HttpOptions,
    token: Token,
    factories: Factories<F, G>,
    shutdown: CancellationToken,
) -> Result<HttpServer, HttpError>
where
    S: rmcp::ServerHandler + Send + 'static,
    F: Fn() -> Result<S, std::io::Error> + Send + Sync + 'static,
    G: Fn() -> Result<S, std::io::Error> + Send + Sync + 'static,
{
    let Factories {
        session: factory,
        stateless,
    } = factories;
    let addr = listeners.local_addr().map_err(|source| HttpError::Bind {
        addr: options.bind,
        source,
    })?;
    let mut session_config = SessionConfig::default();
    session_config.keep_alive = Some(options.idle);
    let mut manager = LocalSessionManager::default();
    manager.session_config = session_config;
    let sessions = Arc::new(manager);
    // Host and Origin are checked here before rmcp sees a request (its own host list knows
    // no ports and no remote binding); the body cap is ours too.
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        .with_cancellation_token(shutdown.child_token());
    let guarded = move || {
        if ADMITTED.try_with(|_| ()).is_ok() {
            factory()
        } else {
            stateless()
        }
    };
    let shared = Arc::new(Shared {
        mcp: StreamableHttpService::new(guarded, sessions.clone(), config),
        sessions: sessions.clone(),
        authorities: guard::Authorities::serving(&listeners.addrs()),
        token: token.clone(),
        max_sessions: options.max_sessions.max(1),
        admit: tokio::sync::Mutex::new(()),
        app_dir: options.app_dir,
    });
    let router = axum::Router::new().fallback(handle::<S>).with_state(shared);
    let task = tokio::spawn(serve::run(listeners.0, router, options.limits, shutdown));
    Ok(HttpServer {
        addr,
        token,
        sessions,
        task,
    })
}

fn all(headers: &HeaderMap, name: header::HeaderName) -> Vec<&str> {
    // A value that is not text counts as present and wrong.
    headers
        .get_all(name)
        .iter()
        .map(|v| v.to_str().unwrap_or("\u{fffd}"))
        .collect()
}

fn plain(status: StatusCode, text: &str) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        text.to_string(),
    )
        .into_response()
}

/// A JSON-RPC error as the whole answer to a POST.
fn rpc_error(status: StatusCode, id: &Value, code: i64, message: &str) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

async fn handle<S>(State(shared): State<Arc<Shared<S>>>, request: Request) -> Response
where
    S: rmcp::ServerHandler + Send + 'static,
{
    let headers = request.headers();
    // Before anything else, on every route: a rebinding page's Host, a foreign page's Origin.
    if let Err(refusal) = shared.authorities.check_host(&all(headers, header::HOST)) {
        tracing::warn!("HTTP request refused: {refusal}");
        return plain(
            StatusCode::MISDIRECTED_REQUEST,
            "Refused: the Host header does not name this server.",
        );
    }
    if let Err(refusal) = shared
        .authorities
        .check_origin(&all(headers, header::ORIGIN))
    {
        tracing::warn!("HTTP request refused: {refusal}");
        return plain(
            StatusCode::FORBIDDEN,
            "Refused: requests from other sites' pages are not served.",
        );
    }
    let path = request.uri().path().to_string();
    match path.as_str() {
        "/mcp" => mcp(&shared, request).await,
        "/" if request.method() == Method::GET => (
            StatusCode::SEE_OTHER,
            [(header::LOCATION, "/app")],
            "See /app",
        )
            .into_response(),
        p if p == "/app" || p.starts_with("/app/") => app_file(&shared, request.method(), p),
        _ => plain(
            StatusCode::NOT_FOUND,
            "Not found: kapture serves MCP at /mcp and the Test Web App at /app.",
        ),
    }
}

fn app_file<S>(shared: &Shared<S>, method: &Method, path: &str) -> Response {
    if method != Method::GET && method != Method::HEAD {
        return plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "Only GET is served under /app.",
        );
    }
    let file = app::resolve(path);
    let bytes = match (&shared.app_dir, &file) {
        (Some(dir), Some(f)) => app::read(dir, f),
        _ => None,
    };
    let mut response = match (bytes, file) {
        (Some(bytes), Some(f)) => ([(header::CONTENT_TYPE, f.content_type)], bytes).into_response(),
        // The page itself missing: say how to build it.
        (None, Some(f)) if f.relative == std::path::Path::new("app.html") => (
            StatusCode::NOT_FOUND,
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            app::not_built_page(shared.app_dir.as_deref()),
        )
            .into_response(),
        _ => plain(StatusCode::NOT_FOUND, "Not found."),
    };
    for (name, value) in app::SECURITY_HEADERS {
        if let Ok(value) = header::HeaderValue::from_str(value) {
            response.headers_mut().insert(*name, value);
        }
    }
    response
}

async fn mcp<S>(shared: &Shared<S>, request: Request) -> Response
where
    S: rmcp::ServerHandler + Send + 'static,
{
    let headers = request.headers();
    let presented = guard::presented_token(
        &all(headers, header::AUTHORIZATION),
        request.uri().query(),
        true,
    );
    if !guard::token_matches(presented, shared.token.expose()) {
        let mut response = plain(
            StatusCode::UNAUTHORIZED,
            "Unauthorized: send Authorization: Bearer <token> (kapture prints the token on stderr when it starts, in the /app?token= URL).",
        );
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            header::HeaderValue::from_static("Bearer realm=\"kapture\""),
        );
        return response;
    }
    if request.method() != Method::POST {
        return forward(shared, request).await;
    }
    let has_session = request.headers().contains_key(SESSION_HEADER);
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return plain(
                StatusCode::PAYLOAD_TOO_LARGE,
                &format!("Payload too large: /mcp takes at most {MAX_BODY_BYTES} bytes."),
            )
        }
    };
    let message: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let request = Request::from_parts(parts, Body::from(bytes));
    if has_session {
        return forward(shared, request).await;
    }
    let id = message.get("id").cloned().unwrap_or(Value::Null);
    match message.get("method").and_then(Value::as_str) {
        Some("initialize") => {
            let _one_at_a_time = shared.admit.lock().await;
            let open = shared.sessions.sessions.read().await.len();
            if open >= shared.max_sessions {
                tracing::warn!(open, "MCP session refused: the session limit is reached");
                return rpc_error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    &id,
                    -32000,
                    &format!(
                        "kapture has {open} MCP sessions open, its limit (--http-max-sessions): end one (DELETE /mcp with its Mcp-Session-Id) or wait until an idle one expires"
                    ),
                );
            }
            ADMITTED.scope((), forward(shared, request)).await
        }
        // The 2026-07-28 lifecycle: rmcp serves it statelessly (and checks its metadata).
        Some("server/discover") => forward(shared, request).await,
        Some(_) if stateless(&message) => forward(shared, request).await,
        _ => rpc_error(
            StatusCode::BAD_REQUEST,
            &id,
            -32600,
            "Bad Request: no Mcp-Session-Id; send initialize first, or name the protocol version (2026-07-28) in _meta[\"io.modelcontextprotocol/protocolVersion\"] of every request",
        ),
    }
}

/// Whether a request chose the lifecycle without a handshake: it names its protocol
/// version in `_meta`.
fn stateless(message: &Value) -> bool {
    message
        .pointer("/params/_meta")
        .and_then(Value::as_object)
        .is_some_and(|meta| meta.contains_key("io.modelcontextprotocol/protocolVersion"))
}

async fn forward<S>(shared: &Shared<S>, request: Request) -> Response
where
    S: rmcp::ServerHandler + Send + 'static,
{
    let mut service = shared.mcp.clone();
    match tower_service::Service::call(&mut service, request).await {
        Ok(response) => response.map(Body::new),
        Err(never) => match never {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_twin_is_the_other_loopback() {
        assert_eq!(
            twin_of(Ipv4Addr::LOCALHOST.into()),
            Some(Ipv6Addr::LOCALHOST.into())
        );
        assert_eq!(
            twin_of(Ipv6Addr::LOCALHOST.into()),
            Some(Ipv4Addr::LOCALHOST.into())
        );
        assert_eq!(twin_of(Ipv4Addr::UNSPECIFIED.into()), None);
        assert_eq!(twin_of("192.168.1.5".parse().unwrap()), None);
    }

    #[cfg(unix)]
    #[test]
    fn only_a_missing_loopback_lets_kapture_go_on_without_it() {
        use nix::errno::Errno;
        let os = |e: Errno| std::io::Error::from_raw_os_error(e as i32);
        assert!(no_such_address(&os(Errno::EADDRNOTAVAIL)));
        assert!(no_such_address(&os(Errno::EAFNOSUPPORT)));
        assert!(!no_such_address(&os(Errno::EADDRINUSE)));
        assert!(!no_such_address(&os(Errno::EACCES)));
    }

    #[tokio::test]
    async fn a_loopback_port_is_held_in_both_families_or_refused() {
        if std::net::TcpListener::bind("[::1]:0").is_err() {
            eprintln!("skipped: this machine has no ::1");
            return;
        }
        let held = bind("127.0.0.1:0", false).await.unwrap();
        let addrs = held.addrs();
        assert_eq!(addrs.len(), 2, "{addrs:?}");
        assert_eq!(addrs[0].ip(), IpAddr::from(Ipv4Addr::LOCALHOST));
        assert_eq!(addrs[1].ip(), IpAddr::from(Ipv6Addr::LOCALHOST));
        assert_eq!(addrs[0].port(), addrs[1].port());
        // Someone on [::1]:P: 127.0.0.1:P is refused, naming the squatted address.
        let squatter = std::net::TcpListener::bind("[::1]:0").unwrap();
        let port = squatter.local_addr().unwrap().port();
        match bind(&format!("127.0.0.1:{port}"), false).await {
            Err(HttpError::TwinTaken { addr, .. }) => {
                assert_eq!(addr, SocketAddr::from((Ipv6Addr::LOCALHOST, port)))
            }
            Err(e) => panic!("{e}"),
            Ok(l) => panic!("bound beside a squatter: {:?}", l.addrs()),
        }
    }
}
