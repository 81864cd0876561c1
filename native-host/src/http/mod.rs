//! `kapture --http ADDRESS:PORT`: MCP over Streamable HTTP at `/mcp` (rmcp's
//! `StreamableHttpService`, one handler per MCP session from a factory) and the Test Web
//! App's files at `/app`. Every request passes the Host and Origin checks first
//! (`guard.rs`); `/mcp` then wants the boot's bearer token. Sessions are bounded in number
//! (`--http-max-sessions`) and expire when idle (`--http-idle-secs`); bodies are capped.
//!
//! Every client gets a real session: rmcp would serve a session-less request (the
//! 2026-07-28 lifecycle: `server/discover`, per-request metadata) with a fresh handler per
//! request, past the session cap and without a current tab. Here the factory runs only
//! for an admitted `initialize`; `server/discover` is answered "method not found", which a
//! client reads as "legacy server, initialize instead".

pub mod app;
pub mod guard;

use std::net::SocketAddr;
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
}

/// How the HTTP face runs (from the command line).
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub bind: SocketAddr,
    pub max_sessions: usize,
    pub idle: Duration,
    /// The built extension folder the app's files come from (`None`: not built).
    pub app_dir: Option<PathBuf>,
}

/// Bind `--http`'s address (refusing a non-loopback one unless `allow_remote`).
pub async fn bind(text: &str, allow_remote: bool) -> Result<TcpListener, HttpError> {
    let addr = guard::parse_bind(text, allow_remote)?;
    TcpListener::bind(addr)
        .await
        .map_err(|source| HttpError::Bind { addr, source })
}

/// The running HTTP face.
pub struct HttpServer {
    addr: SocketAddr,
    token: Token,
    sessions: Arc<LocalSessionManager>,
    task: tokio::task::JoinHandle<()>,
}

impl HttpServer {
    /// `http://HOST:PORT` as a person on this machine reaches it.
    fn base(&self) -> String {
        let ip = if self.addr.ip().is_unspecified() {
            std::net::Ipv4Addr::LOCALHOST.into()
        } else {
            self.addr.ip()
        };
        format!("http://{}", SocketAddr::new(ip, self.addr.port()))
    }

    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.base())
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

/// Serve on `listener` until `shutdown` is cancelled. `factory` makes the handler of one
/// MCP session; it is called once per admitted `initialize`, and the handler is dropped
/// when its session ends (closed by the client, expired, or at shutdown).
pub fn start<S, F>(
    listener: TcpListener,
    options: HttpOptions,
    token: Token,
    factory: F,
    shutdown: CancellationToken,
) -> Result<HttpServer, HttpError>
where
    S: rmcp::ServerHandler + Send + 'static,
    F: Fn() -> Result<S, std::io::Error> + Send + Sync + 'static,
{
    let addr = listener.local_addr().map_err(|source| HttpError::Bind {
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
            Err(std::io::Error::other(
                "kapture serves MCP in sessions only: send initialize first",
            ))
        }
    };
    let shared = Arc::new(Shared {
        mcp: StreamableHttpService::new(guarded, sessions.clone(), config),
        sessions: sessions.clone(),
        authorities: guard::Authorities::new(addr),
        token: token.clone(),
        max_sessions: options.max_sessions.max(1),
        admit: tokio::sync::Mutex::new(()),
        app_dir: options.app_dir,
    });
    let router = axum::Router::new().fallback(handle::<S>).with_state(shared);
    let task = tokio::spawn(async move {
        use axum::serve::ListenerExt;
        // Without TCP_NODELAY an answer's last small write waits for the client's delayed
        // ACK: ~40 ms on every call.
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let served = axum::serve(listener, router)
            .with_graceful_shutdown(shutdown.cancelled_owned())
            .await;
        if let Err(e) = served {
            tracing::warn!("the HTTP server stopped: {e}");
        }
    });
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
        // A 2026-07-28 client probes first; "method not found" sends it to initialize.
        Some("server/discover") => rpc_error(
            StatusCode::OK,
            &id,
            -32601,
            "kapture serves MCP in sessions: send initialize",
        ),
        _ => rpc_error(
            StatusCode::BAD_REQUEST,
            &id,
            -32600,
            "Bad Request: no Mcp-Session-Id; send initialize first",
        ),
    }
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
