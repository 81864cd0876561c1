//! Which browser the tools reach, per `--browser`: launch one (and own it until exit), use
//! one whose extension connected, or wait for one. Tool calls ask [`BrowserAccess::ready`].

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ext_core::protocol::{ErrorCode, WireError};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::bridge::BridgeHandle;
use crate::cli::BrowserMode;
use crate::launcher::{LaunchSpec, LaunchedBrowser};

/// In `auto` mode, how long an already running browser's extension gets to connect before
/// kapture launches its own.
pub const AUTO_CONNECT_GRACE: Duration = Duration::from_millis(1500);

#[derive(Debug, Clone)]
enum State {
    WaitingForExtension,
    Launching,
    Launched {
        pid: Option<u32>,
        path: String,
    },
    LaunchFailed(String),
    Exited(String),
    UsingConnected,
    /// `--browser cdp`: the native engine drives the browser at this endpoint.
    Native,
}

/// Shared view of the browser situation.
#[derive(Clone)]
pub struct BrowserAccess {
    state: Arc<Mutex<State>>,
    wait: Duration,
}

impl BrowserAccess {
    fn set(&self, s: State) {
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = s;
    }

    fn get(&self) -> State {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Wait (bounded) until an extension is connected, or say why none is.
    pub async fn ready(&self, bridge: &BridgeHandle) -> Result<(), WireError> {
        // The native engine says itself why there is no browser (and which endpoint).
        if let Some(engine) = bridge.native() {
            return engine.ready().await;
        }
        if let State::LaunchFailed(why) = self.get() {
            return Err(WireError::new(
                ErrorCode::NoBrowser,
                format!("kapture could not launch a browser: {why}"),
            ));
        }
        if bridge.wait_connected(self.wait).await {
            return Ok(());
        }
        let why = match self.get() {
            State::LaunchFailed(why) => format!("kapture could not launch a browser: {why}"),
            State::Exited(why) => format!("the browser kapture launched has exited ({why})"),
            State::WaitingForExtension | State::UsingConnected | State::Native => format!(
                "no browser with the Kapture extension connected within {} s",
                self.wait.as_secs()
            ),
            State::Launching | State::Launched { .. } => format!(
                "the launched browser's extension did not connect within {} s",
                self.wait.as_secs()
            ),
        };
        Err(WireError::new(ErrorCode::NoBrowser, why))
    }

    /// One line for `browser_status`.
    pub fn describe(&self) -> String {
        match self.get() {
            State::WaitingForExtension => {
                "waiting for a browser's Kapture extension to connect".into()
            }
            State::Launching => "launching a browser".into(),
            State::Launched { pid, path } => {
                format!(
                    "launched {path} (pid {})",
                    pid.map(|p| p.to_string()).unwrap_or_else(|| "?".into())
                )
            }
            State::LaunchFailed(why) => format!("launch failed: {why}"),
            State::Exited(why) => format!("the launched browser exited: {why}"),
            State::UsingConnected => "using a browser whose extension connected".into(),
            State::Native => "driving a browser through its DevTools endpoint".into(),
        }
    }
}

/// Start the browser side per `mode`. The returned task ends after `shutdown`, once a
/// launched browser is stopped.
pub fn supervise(
    mode: BrowserMode,
    spec: Result<LaunchSpec, String>,
    bridge: BridgeHandle,
    wait: Duration,
    shutdown: CancellationToken,
) -> (BrowserAccess, JoinHandle<()>) {
    let initial = match mode {
        BrowserMode::Connect => State::WaitingForExtension,
        BrowserMode::Cdp => State::Native,
        _ => State::Launching,
    };
    let access = BrowserAccess {
        state: Arc::new(Mutex::new(initial)),
        wait,
    };
    let task_access = access.clone();
    let task = tokio::spawn(async move {
        let access = task_access;
        match mode {
            // Never launched, never closed by kapture: the browser is someone else's.
            BrowserMode::Connect | BrowserMode::Cdp => return shutdown.cancelled().await,
            BrowserMode::Auto => {
                let connected = tokio::select! {
                    c = bridge.wait_connected(AUTO_CONNECT_GRACE) => c,
                    () = shutdown.cancelled() => return,
                };
                if connected {
                    access.set(State::UsingConnected);
                    return shutdown.cancelled().await;
                }
            }
            BrowserMode::Launch => {}
        }
        let launched =
            spec.and_then(|spec| LaunchedBrowser::start(&spec).map_err(|e| e.to_string()));
        let mut browser = match launched {
            Ok(b) => b,
            Err(why) => {
                tracing::error!("{why}");
                access.set(State::LaunchFailed(why));
                return shutdown.cancelled().await;
            }
        };
        access.set(State::Launched {
            pid: browser.pid,
            path: browser.browser.display().to_string(),
        });
        tokio::select! {
            status = browser.wait() => {
                let why = status.map(|s| s.to_string()).unwrap_or_else(|| "unknown status".into());
                tracing::warn!("the launched browser exited: {why}");
                access.set(State::Exited(why));
                shutdown.cancelled().await;
            }
            () = shutdown.cancelled() => browser.stop().await,
        }
    });
    (access, task)
}
