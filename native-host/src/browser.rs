//! Which browser the tools reach, per `--browser`: launch one (and own it until exit), use
//! one whose extension connected, or wait for one. Tool calls ask [`BrowserAccess::ready`].

use std::sync::Arc;
use std::time::Duration;

use ext_core::protocol::{ErrorCode, WireError};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::bridge::BridgeHandle;
use crate::cli::BrowserMode;
use crate::launcher::find::Kind;
use crate::launcher::{Death, Headless, LaunchSpec, LaunchedBrowser};

/// In `auto` mode, how long an already running browser's extension gets to connect before
/// kapture launches its own.
pub const AUTO_CONNECT_GRACE: Duration = Duration::from_millis(1500);

#[derive(Debug, Clone)]
enum State {
    WaitingForExtension,
    Launching,
    Launched(Launched),
    LaunchFailed(String),
    Exited(Box<Death>),
    UsingConnected,
    /// `--browser cdp`: the native engine drives the browser at this endpoint.
    Native,
}

/// The browser kapture launched, as `browser_status` tells it.
#[derive(Debug, Clone)]
pub struct Launched {
    pub pid: Option<u32>,
    pub path: String,
    pub kind: Kind,
    /// Headless or not, and why (`browser_status` says it).
    pub headless: Headless,
}

impl State {
    /// Nothing will connect from here on: calls fail at once instead of waiting.
    fn is_final(&self) -> bool {
        matches!(self, State::LaunchFailed(_) | State::Exited(_))
    }

    fn error(&self) -> Option<WireError> {
        match self {
            State::LaunchFailed(why) => Some(WireError::new(
                ErrorCode::NoBrowser,
                format!("kapture could not launch a browser: {why}"),
            )),
            State::Exited(death) => Some(WireError::new(ErrorCode::BrowserExited, death.message())),
            _ => None,
        }
    }
}

/// Shared view of the browser situation.
#[derive(Clone)]
pub struct BrowserAccess {
    state: Arc<watch::Sender<State>>,
    wait: Duration,
}

impl BrowserAccess {
    fn set(&self, s: State) {
        self.state.send_replace(s);
    }

    fn get(&self) -> State {
        self.state.borrow().clone()
    }

    /// Wait (bounded) until an extension is connected, or say why none is. A launched
    /// browser that died, or a launch that failed, ends the wait at once.
    pub async fn ready(&self, bridge: &BridgeHandle) -> Result<(), WireError> {
        // The native engine says itself why there is no browser (and which endpoint).
        if let Some(engine) = bridge.native() {
            return engine.ready().await;
        }
        let mut state = self.state.subscribe();
        let settled = state.borrow_and_update().error();
        if let Some(err) = settled {
            // Another browser's extension may have connected meanwhile (it finds every
            // kapture in the runtime folder).
            return match bridge.status().await.extension {
                Some(_) => Ok(()),
                None => Err(err),
            };
        }
        let ended = async {
            // The guard is not Send: the error is taken out before any other await.
            let err = state
                .wait_for(State::is_final)
                .await
                .ok()
                .and_then(|s| s.error());
            match err {
                Some(err) => err,
                // The supervisor is gone (shutting down): only a connection ends the wait.
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            connected = bridge.wait_connected(self.wait) => {
                if connected {
                    return Ok(());
                }
            }
            err = ended => return Err(err),
        }
        let now = self.get();
        if let Some(err) = now.error() {
            return Err(err);
        }
        let secs = self.wait.as_secs();
        let why = match now {
            State::LaunchFailed(_)
            | State::Exited(_)
            | State::WaitingForExtension
            | State::UsingConnected
            | State::Native => {
                format!("no browser with the Kapture extension connected within {secs} s")
            }
            State::Launching => {
                format!("the launched browser's extension did not connect within {secs} s")
            }
            State::Launched(l) => {
                let mut why = format!(
                    "the extension in the launched browser ({}) did not connect within {secs} s",
                    l.path
                );
                if l.kind == Kind::Unknown {
                    why.push_str("; if it is Google Chrome 137 or later, it ignores --load-extension: use Chromium or Chrome for Testing (--chromium PATH)");
                }
                why
            }
        };
        Err(WireError::new(ErrorCode::NoBrowser, why))
    }

    /// Whether the launched browser runs headless and why (`None`: none launched).
    pub fn headless(&self) -> Option<Headless> {
        match self.get() {
            State::Launched(l) => Some(l.headless),
            _ => None,
        }
    }

    /// One line for `browser_status`.
    pub fn describe(&self) -> String {
        match self.get() {
            State::WaitingForExtension => {
                "waiting for a browser's Kapture extension to connect".into()
            }
            State::Launching => "launching a browser".into(),
            State::Launched(l) => format!(
                "launched {} ({}, pid {}), {}",
                l.path,
                l.kind.name(),
                l.pid.map(|p| p.to_string()).unwrap_or_else(|| "?".into()),
                l.headless.describe()
            ),
            State::LaunchFailed(why) => format!("launch failed: {why}"),
            State::Exited(death) => death.message(),
            State::UsingConnected => "using a browser whose extension connected".into(),
            State::Native => "driving a browser through its DevTools endpoint".into(),
        }
    }
}

/// Start the browser side per `mode`; `spec` finds the browser to launch when one is needed.
/// The returned task ends after `shutdown`, once a launched browser is stopped.
pub fn supervise(
    mode: BrowserMode,
    spec: impl FnOnce() -> Result<LaunchSpec, String> + Send + 'static,
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
        state: Arc::new(watch::channel(initial).0),
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
        // Finding the browser may ask it its version: blocking work, off the runtime.
        let spec = tokio::task::spawn_blocking(spec)
            .await
            .unwrap_or_else(|e| Err(format!("finding the browser failed: {e}")));
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
        if browser.facts.headless == Headless::NoDisplay {
            // Said once: the person wonders where the window is.
            tracing::warn!(
                "no display (DISPLAY and WAYLAND_DISPLAY are unset): the browser runs headless"
            );
        }
        access.set(State::Launched(Launched {
            pid: browser.pid,
            path: browser.browser.display().to_string(),
            kind: browser.facts.kind,
            headless: browser.facts.headless,
        }));
        tokio::select! {
            death = browser.died() => {
                tracing::error!("{}", death.message());
                access.set(State::Exited(Box::new(death)));
                shutdown.cancelled().await;
            }
            () = shutdown.cancelled() => browser.stop().await,
        }
    });
    (access, task)
}
