//! `kapture`: the MCP server on stdio, the WebSocket bridge to the Kapture extension,
//! pairing, the browser launcher, and the human subcommands. `main.rs` only parses the
//! command line and calls in here.

pub mod audit;
pub mod bridge;
pub mod browser;
pub mod cdp;
pub mod cli;
pub mod doctor;
pub mod egress;
pub mod embedded;
pub mod extension;
pub mod files;
pub mod http;
pub mod install;
pub mod launcher;
pub mod logins;
pub mod manual_pairing;
pub mod mcp;
pub mod native;
pub mod native_messaging;
pub mod pairing;
pub mod policy_config;
pub mod policy_settings;
pub mod replay;
pub mod scenario_tools;
pub mod scenarios;
pub mod secret_store;
pub mod session_log;
pub mod stdio;
pub mod tool_args;

use std::io::IsTerminal;

use rmcp::ServiceExt;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::bridge::BridgeConfig;
use crate::cli::{BrowserMode, ServeArgs};
use crate::launcher::LaunchSpec;

/// After stdin ends, how long answers still being worked on may take before kapture exits
/// (MCP: a server should exit promptly when its input closes).
const EOF_GRACE: std::time::Duration = std::time::Duration::from_millis(500);

#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error(transparent)]
    Extension(#[from] extension::ExtensionError),
    #[error(transparent)]
    Pairing(#[from] pairing::PairingError),
    #[error("cannot listen on 127.0.0.1:{port}: {source}")]
    Bind { port: u16, source: std::io::Error },
    #[error(transparent)]
    Http(#[from] http::HttpError),
    #[error("MCP on stdio failed: {0}")]
    Mcp(String),
    #[error("{0}")]
    Setup(String),
}

/// Bind the bridge on loopback: `port` if free (0: any), falling back to an ephemeral port
/// when the default one is taken by another server.
pub async fn bind_bridge(port: u16) -> Result<TcpListener, ServeError> {
    match TcpListener::bind(("127.0.0.1", port)).await {
        Ok(l) => Ok(l),
        Err(e) if port == cli::DEFAULT_PORT && e.kind() == std::io::ErrorKind::AddrInUse => {
            TcpListener::bind(("127.0.0.1", 0))
                .await
                .map_err(|source| ServeError::Bind { port: 0, source })
        }
        Err(source) => Err(ServeError::Bind { port, source }),
    }
}

fn launch_spec(
    args: &ServeArgs,
    extension_id: &str,
    runtime_dir: &std::path::Path,
) -> Result<LaunchSpec, String> {
    let env = launcher::find::Env::current();
    let found =
        launcher::find_browser_in(args.chromium.as_deref(), &env, &launcher::find::RealFiles)
            .map_err(|e| e.to_string())?;
    let link = launcher::devtools_link(env.os, env.var("KAPTURE_DEVTOOLS_LINK"));
    let headless = launcher::Headless::choose(args.headless, &env);
    let plan = launcher::plan(
        &found,
        args.engine,
        args.extension_over_pipe,
        link,
        args.native_standby,
    )?;
    Ok(LaunchSpec {
        plan,
        browser: found.path,
        kind: found.kind,
        extension_dir: extension_dir(args.extension_dir.as_deref(), &data_dir(args))
            .map_err(|e| e.to_string())?,
        extension_id: extension_id.to_string(),
        user_data_dir: args.user_data_dir.clone(),
        headless,
        window: args.window_size,
        extra_args: args.chromium_args.clone(),
        runtime_dir: runtime_dir.to_path_buf(),
        host_binary: std::env::current_exe()
            .map_err(|e| format!("cannot find this program's path: {e}"))?,
        download_dir: args
            .download_dir
            .clone()
            .unwrap_or_else(files::default_download_dir),
    })
}

/// The unpacked extension kapture uses: `--extension-dir`, else one built beside it, else
/// the one it carries, written out into `data_dir` with the panel's tool list.
pub fn extension_dir(
    explicit: Option<&std::path::Path>,
    data_dir: &std::path::Path,
) -> Result<std::path::PathBuf, extension::ExtensionError> {
    extension::locate_or_write(explicit, data_dir, panel_tools_json)
}

/// The panel's tool list as the extension reads it (`tools.json`).
pub fn panel_tools_json() -> Vec<u8> {
    let mut json = serde_json::to_string_pretty(&mcp::panel_tools()).unwrap_or_default();
    json.push('\n');
    json.into_bytes()
}

/// kapture's data folder: `--data-dir`, else the user's data folder, `kapture`.
fn data_dir(args: &ServeArgs) -> std::path::PathBuf {
    args.data_dir.clone().unwrap_or_else(scenarios::default_dir)
}

/// What a person who started kapture in a terminal should know.
fn terminal_banner(port: u16) {
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "kapture".into());
    let config = serde_json::json!({"mcpServers": {"kapture": {"command": exe, "args": ["--browser", "auto"]}}});
    eprintln!(
        "kapture is running: an MCP server on stdin/stdout, bridge on ws://127.0.0.1:{port}.\n\
         It is meant to be started by an MCP client. Add this to the client's configuration:\n\n{}\n\n\
         (Claude Code: claude mcp add kapture -- {exe})\nPress Ctrl+C to stop.",
        serde_json::to_string_pretty(&config).unwrap_or_default()
    );
}

/// Resolves when the process is asked to stop (Ctrl+C, SIGTERM). SIGHUP does not stop
/// kapture: it is the bridge's kill switch ([`rotate_on_hangup`]).
async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let Ok(mut term) = signal(SignalKind::terminate()) else {
            return std::future::pending().await;
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// The kill switch: on each SIGHUP, a new bridge token replaces the old one (announced in
/// the handshake file, for native messaging), every old token is refused from then on, and
/// the connected extension is cut off; it pairs again as on first pairing. MCP goes on.
async fn rotate_on_hangup(
    key: pairing::BridgeKey,
    handshake: std::sync::Arc<pairing::HandshakeFile>,
    door: manual_pairing::PairingDoor,
    port: u16,
    bridge: bridge::BridgeHandle,
    shutdown: CancellationToken,
) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let Ok(mut hup) = signal(SignalKind::hangup()) else {
            tracing::warn!("no SIGHUP handler: the bridge token cannot be rotated");
            return;
        };
        loop {
            tokio::select! {
                got = hup.recv() => if got.is_none() { return },
                () = shutdown.cancelled() => return,
            }
            // The key first: a reader of the file in between gets the old token, which is
            // refused, and asks again; never the new one refused.
            let token = match key.rotate() {
                Ok(token) => token,
                Err(e) => {
                    tracing::error!("SIGHUP: no new bridge token ({e}); the old one stays");
                    continue;
                }
            };
            bridge.revoke().await;
            // A pending pairing code would pair with the new token: it goes too.
            door.void();
            match handshake.write(port, &token) {
                Ok(()) => tracing::warn!("SIGHUP: new bridge token; every old token is refused and the extension pairs again"),
                // A kill switch first: the old token stays refused even so.
                Err(e) => tracing::error!("SIGHUP: new bridge token, every old token refused, but the handshake file could not be written ({e}): no extension can pair until the next SIGHUP"),
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (key, handshake, door, port, bridge);
        shutdown.cancelled().await;
    }
}

/// How long a tool call waits for a browser before answering `NO_BROWSER`.
pub fn browser_wait(args: &ServeArgs) -> std::time::Duration {
    if let Some(ms) = args.browser_wait_ms {
        return std::time::Duration::from_millis(ms);
    }
    match args.browser {
        // The extension in a running browser rediscovers servers every few seconds.
        BrowserMode::Connect => std::time::Duration::from_secs(20),
        _ => std::time::Duration::from_secs(30),
    }
}

/// A started kapture, before any MCP transport: the shared server (one
/// [`mcp::Kapture::session`] per MCP session) and what ends with it.
pub struct Started {
    pub kapture: mcp::Kapture,
    /// Cancel to stop the bridge and the browser supervision.
    pub shutdown: CancellationToken,
    /// The browser supervisor: awaited (bounded) on the way out, so a launched browser closes.
    pub browser_task: tokio::task::JoinHandle<()>,
    /// Removed on drop (of the last holder: the token rotation holds it until shutdown).
    pub handshake: Option<std::sync::Arc<pairing::HandshakeFile>>,
}

/// Everything but the transport: the bridge (or the native engine), the browser, the
/// journal and the shared MCP server.
pub async fn start(args: ServeArgs) -> Result<Started, ServeError> {
    start_serving(args, None).await
}

/// [`start`], saying the MCP URL `--http` serves at (browser_status shows it).
async fn start_serving(args: ServeArgs, http_url: Option<String>) -> Result<Started, ServeError> {
    let shutdown = CancellationToken::new();
    let extension_id = extension::extension_id()?;
    let runtime_dir = pairing::runtime_dir(args.runtime_dir.as_deref())?;
    let policy = policy_config::PolicyConfig::load(&args).map_err(ServeError::Setup)?;
    // A headless launched browser's window includes browser UI and info bars: its pages are
    // given the stated viewport instead, on either engine.
    let launched_viewport =
        launcher::Headless::choose(args.headless, &launcher::find::Env::current())
            .on()
            .then_some(ext_core::protocol::Viewport {
                width: args.window_size.width,
                height: args.window_size.height,
            });
    let rules = browser::NativeRules {
        policy: policy.policy(true),
        approval_ms: args.approval_timeout_ms,
        viewport: launched_viewport,
    };
    let bridge_config = BridgeConfig {
        launched_policy: policy.policy(true),
        connected_policy: policy.policy(false),
        approval_timeout: std::time::Duration::from_millis(args.approval_timeout_ms),
        launched_viewport,
        runtime_dir: Some(runtime_dir.clone()),
        ..BridgeConfig::new(extension::origin(&extension_id))
    };
    // The native engine needs no bridge server: no extension is to connect.
    let (bridge, handshake, port) = match (&args.browser, &args.cdp_endpoint) {
        (BrowserMode::Cdp, Some(endpoint)) => {
            // A malformed endpoint is said once, at start, not on every tool call.
            cdp::endpoint::parse(endpoint).map_err(|e| ServeError::Setup(e.to_string()))?;
            let throwaway = args.endpoint_browser == cli::EndpointBrowser::Throwaway;
            let bridge =
                bridge::start_native(endpoint.clone(), throwaway, bridge_config, shutdown.clone());
            (bridge, None, 0)
        }
        _ => {
            let listener = bind_bridge(args.port).await?;
            let port = listener
                .local_addr()
                .map_err(|source| ServeError::Bind {
                    port: args.port,
                    source,
                })?
                .port();
            let token = pairing::Token::generate()?;
            let handshake =
                std::sync::Arc::new(pairing::HandshakeFile::create(&runtime_dir, port, &token)?);
            let key = pairing::BridgeKey::new(token);
            let bridge = bridge::start(listener, key.clone(), bridge_config, shutdown.clone())
                .map_err(|source| ServeError::Bind { port, source })?;
            tokio::spawn(rotate_on_hangup(
                key,
                handshake.clone(),
                manual_pairing::PairingDoor::new(Some(runtime_dir.as_path()), port),
                port,
                bridge.clone(),
                shutdown.clone(),
            ));
            (bridge, Some(handshake), port)
        }
    };
    tracing::info!(port, runtime = %runtime_dir.display(), mode = ?args.browser, "kapture started");

    let spec = {
        let (args, extension_id, runtime_dir) =
            (args.clone(), extension_id.clone(), runtime_dir.clone());
        move || match args.browser {
            BrowserMode::Connect | BrowserMode::Cdp => Err("not launching in this mode".into()),
            _ => launch_spec(&args, &extension_id, &runtime_dir),
        }
    };
    let (access, browser_task) = browser::supervise(
        args.browser,
        spec,
        bridge.clone(),
        browser_wait(&args),
        rules,
        shutdown.clone(),
    );

    if args.http.is_none() && std::io::stdin().is_terminal() {
        terminal_banner(port);
    }
    let facts = mcp::ServerFacts {
        version: env!("CARGO_PKG_VERSION").into(),
        protocol: ext_core::protocol::PROTOCOL_VERSION,
        pid: std::process::id(),
        mode: format!("{:?}", args.browser).to_lowercase(),
    };
    let data_dir = args.data_dir.clone().unwrap_or_else(scenarios::default_dir);
    let download_dir = args
        .download_dir
        .clone()
        .unwrap_or_else(files::default_download_dir);
    let audit_dir = args.audit_dir.clone().unwrap_or_else(audit::default_dir);
    let uploads = files::UploadFolders::new(
        files::default_upload_dir(&data_dir),
        policy.upload_dirs.clone(),
        &files::KaptureFolders {
            data_dir: &data_dir,
            audit_dir: &audit_dir,
            runtime_dir: &runtime_dir,
            download_dir: &download_dir,
            secrets_file: args.secrets.as_deref(),
            policy_file: policy.file.as_deref(),
            user_data_dir: args.user_data_dir.as_deref(),
        },
    );
    // The command line, once, as the plain config the MCP server takes.
    let config = mcp::Config {
        max_chars: args.max_chars,
        include_snapshot: match args.include_snapshot {
            cli::IncludeSnapshot::Off => mcp::SnapshotMode::Off,
            cli::IncludeSnapshot::Full => mcp::SnapshotMode::Full,
            cli::IncludeSnapshot::Diff => mcp::SnapshotMode::Diff,
        },
        dialog: match args.dialog {
            cli::DialogPolicy::Ask => mcp::DialogAnswer::Ask,
            cli::DialogPolicy::Accept => mcp::DialogAnswer::Accept,
            cli::DialogPolicy::Dismiss => mcp::DialogAnswer::Dismiss,
        },
        download_dir,
        uploads,
        reveal_sensitive_headers: args.reveal_sensitive_headers,
        data_dir,
        secret_values: match &args.secrets {
            Some(path) => files::secret_values(path).map_err(ServeError::Setup)?,
            None => Vec::new(),
        },
        share_tabs: policy.share_tabs,
        max_steps: policy.max_steps,
        http_url,
        tool_timeout_ms: policy.settings.tool_timeout_ms,
        screenshot_dir: policy.settings.screenshot_dir.clone(),
        masks: policy.settings.masks.clone(),
    };
    let audit = audit::Audit::start_keeping(&audit_dir, policy.settings.journal).map_err(|e| {
        ServeError::Setup(format!(
            "cannot open the audit journal in {}: {e}",
            audit_dir.display()
        ))
    })?;
    Ok(Started {
        kapture: mcp::Kapture::new(bridge, access, facts, config, audit),
        shutdown,
        browser_task,
        handshake,
    })
}

/// Serve MCP on stdio until the client goes away or a stop signal arrives; then close the
/// launched browser and remove the handshake file.
pub async fn serve(args: ServeArgs) -> Result<(), ServeError> {
    // A refused or taken --http address is said at once, before a browser is launched.
    let http_listener = match &args.http {
        Some(addr) => Some(http::bind(addr, args.http_allow_remote).await?),
        None => None,
    };
    let http_url = match &http_listener {
        Some(listeners) => Some(http::mcp_url(
            listeners
                .local_addr()
                .map_err(|source| ServeError::Bind { port: 0, source })?,
        )),
        None => None,
    };
    let Started {
        kapture,
        shutdown,
        browser_task,
        handshake,
    } = start_serving(args.clone(), http_url).await?;
    if let Some(listener) = http_listener {
        let result = serve_http(listener, &args, kapture, shutdown.clone()).await;
        tracing::info!("kapture stopping");
        shutdown.cancel();
        let _ = tokio::time::timeout(std::time::Duration::from_secs(5), browser_task).await;
        drop(handshake);
        return result;
    }
    // stdio is exactly one MCP session: the default context, which stateless requests
    // without a handle (MCP 2026-07-28) use too.
    let server = kapture.default_context();
    let (transport, stdio) = crate::stdio::transport();
    let input_ended = stdio.input_ended();
    let result = match server.serve(transport).await {
        Ok(running) => {
            tokio::select! {
                r = running.waiting() => r.map(drop).map_err(|e| ServeError::Mcp(e.to_string())),
                () = stop_signal() => Ok(()),
                // The client closed stdin: answers still being worked on get a moment, not
                // the whole time rmcp would wait for them.
                () = async {
                    input_ended.cancelled().await;
                    tokio::time::sleep(EOF_GRACE).await;
                } => Ok(()),
            }
        }
        // The client went away before initializing (or stdin was never a client): not a fault.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => {
            tracing::info!("stdin closed before an MCP client initialized");
            Ok(())
        }
        Err(e) => Err(ServeError::Mcp(e.to_string())),
    };
    // Answers already written (rmcp stops as soon as stdin ends) reach stdout before exit.
    stdio.flush().await;
    kapture.close_contexts();
    tracing::info!("kapture stopping");
    shutdown.cancel();
    let _ = tokio::time::timeout(std::time::Duration::from_secs(5), browser_task).await;
    drop(handshake);
    result
}

/// `--http`: serve MCP over Streamable HTTP (and the Test Web App) until a stop signal,
/// then close every session (their handlers are dropped) before the browser is closed.
async fn serve_http(
    listener: http::Listeners,
    args: &ServeArgs,
    kapture: mcp::Kapture,
    shutdown: CancellationToken,
) -> Result<(), ServeError> {
    let bind = listener
        .local_addr()
        .map_err(|source| ServeError::Bind { port: 0, source })?;
    let options = http::HttpOptions {
        bind,
        max_sessions: usize::from(args.http_max_sessions),
        idle: std::time::Duration::from_secs(args.http_idle_secs),
        limits: http::serve::Limits {
            max_connections: usize::from(args.http_max_connections),
            header_timeout: std::time::Duration::from_secs(args.http_header_secs),
        },
        app_dir: extension_dir(args.extension_dir.as_deref(), &data_dir(args)).ok(),
    };
    // Its own token, not the bridge's: this one is shown to the person (in the app URL).
    let token = pairing::Token::generate()?;
    // One handler per MCP session: its own current tab, tabs, step log and masks; a
    // stateless request (2026-07-28) gets the default context's, and names a handle's.
    let stateless = kapture.clone();
    let closing = kapture.clone();
    let running = http::start(
        listener,
        options,
        token,
        http::Factories {
            session: move || Ok(kapture.session()),
            stateless: move || Ok(stateless.default_context()),
        },
        shutdown.clone(),
    )?;
    eprintln!(
        "kapture serves MCP over HTTP at {} (send Authorization: Bearer <token>; the token is in the app URL)",
        running.mcp_url()
    );
    eprintln!("Test Web App: {}", running.app_url());
    tracing::info!(addr = %running.addr(), "MCP over HTTP listening");
    stop_signal().await;
    tracing::info!(
        sessions = running.open_sessions().await,
        "closing the HTTP sessions"
    );
    shutdown.cancel();
    running.stopped(std::time::Duration::from_secs(5)).await;
    closing.close_contexts();
    Ok(())
}
