//! Which browser the tools reach, per `--browser`: launch one (and own it until exit), use
//! one whose extension connected, or wait for one. Tool calls ask [`BrowserAccess::ready`].
//!
//! A browser launched over its DevTools pipe gets its engine here: the extension, loaded with
//! `Extensions.loadUnpacked`, when it loads and connects within [`EXTENSION_CONNECT_LIMIT`];
//! else (or with `--engine native`) the native engine over that same pipe. Which one and why
//! is said once on stderr and in `browser_status`. With `--engine auto` the choice is made
//! again at every call (`bridge::select`): the extension while it is connected, else the
//! native engine over the pipe. That holds for the default launch too (`--load-extension`
//! with the pipe held beside it): once the extension connected, the native engine stands by.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use ext_core::policy::Policy;
use ext_core::protocol::{ErrorCode, WireError};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::bridge::BridgeHandle;
use crate::cli::BrowserMode;
use crate::launcher::find::Kind;
use crate::launcher::{Death, Headless, LaunchSpec, LaunchedBrowser, Plan, Route};

/// In `auto` mode, how long an already running browser's extension gets to connect before
/// kapture launches its own.
pub const AUTO_CONNECT_GRACE: Duration = Duration::from_millis(1500);
/// How long `Extensions.loadUnpacked` may take.
const LOAD_LIMIT: Duration = Duration::from_secs(15);
/// How long an extension loaded over the pipe gets to connect before the native engine takes
/// over (it connects within a second or two on a laptop; a loaded CI machine is slower).
pub const EXTENSION_CONNECT_LIMIT: Duration = Duration::from_secs(10);

/// After a launched browser's pipe closed, how long its death may take to be known.
const DEATH_AFTER_PIPE: Duration = Duration::from_secs(2);

/// What the native engine of a launched browser judges commands on.
#[derive(Clone)]
pub struct NativeRules {
    pub policy: Policy,
    pub approval_ms: u64,
    /// The viewport of a headless launched browser's tabs.
    pub viewport: Option<ext_core::protocol::Viewport>,
}

/// The engine driving a launched browser, and how it came to be.
#[derive(Debug, Clone)]
pub enum EngineUsed {
    /// The extension (its connection is the bridge's): how it got in.
    Extension(String),
    /// The native engine over the browser's DevTools pipe or port ([`Route::link`]): why.
    Native(&'static str, String),
}

impl EngineUsed {
    /// One line for `browser_status` and stderr.
    pub fn describe(&self) -> String {
        match self {
            EngineUsed::Extension(how) => format!("engine: the Kapture extension, {how}"),
            EngineUsed::Native(link, why) => format!(
                "engine: the native CDP engine over the browser's {link}, {why} (no panel, recorder widget or approvals in the browser)"
            ),
        }
    }
}

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
    /// The engine, once known (`None`: the extension is being loaded over the pipe).
    pub engine: Option<EngineUsed>,
}

impl State {
    /// Nothing will connect from here on: calls fail at once instead of waiting.
    fn is_final(&self) -> bool {
        matches!(self, State::LaunchFailed(_) | State::Exited(_))
    }

    /// The launched browser is driven by the native engine (set on the bridge before this).
    fn is_native(&self) -> bool {
        matches!(
            self,
            State::Launched(Launched {
                engine: Some(EngineUsed::Native(..)),
                ..
            })
        )
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
            return self.native_ready(engine).await;
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
            // The guard is not Send: what it says is taken out before any other await.
            let settled = state
                .wait_for(|s| s.is_final() || s.is_native())
                .await
                .ok()
                .map(|s| s.error());
            match settled {
                Some(Some(err)) => Err(err),
                // The native engine took over the launched browser.
                Some(None) => Ok(()),
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
            settled = ended => match (settled, bridge.native()) {
                (Err(err), _) => return Err(err),
                (Ok(()), Some(engine)) => return self.native_ready(engine).await,
                (Ok(()), None) => {}
            },
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

    /// The native engine is ready, or why not. A launched browser that died is told by its
    /// death (exit status, stderr, hint), which comes a moment after its pipe closed.
    async fn native_ready(&self, engine: &crate::native::NativeEngine) -> Result<(), WireError> {
        let err = match engine.ready().await {
            Ok(()) => return Ok(()),
            Err(e) => e,
        };
        if !matches!(self.get(), State::Launched(_)) {
            return Err(err);
        }
        let mut state = self.state.subscribe();
        let death = tokio::time::timeout(DEATH_AFTER_PIPE, state.wait_for(State::is_final)).await;
        match death {
            Ok(Ok(s)) => Err(s.error().unwrap_or(err)),
            _ => Err(err),
        }
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
                "launched {} ({}, pid {}), {}; {}",
                l.path,
                l.kind.name(),
                l.pid.map(|p| p.to_string()).unwrap_or_else(|| "?".into()),
                l.headless.describe(),
                match &l.engine {
                    Some(engine) => engine.describe(),
                    None => "loading the Kapture extension over DevTools".into(),
                }
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
    rules: NativeRules,
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
        let launched = spec.and_then(|spec| {
            let browser = LaunchedBrowser::start(&spec).map_err(|e| e.to_string())?;
            Ok((browser, spec))
        });
        let (mut browser, spec) = match launched {
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
        let launched = Launched {
            pid: browser.pid,
            path: browser.browser.display().to_string(),
            kind: browser.facts.kind,
            headless: browser.facts.headless,
            engine: matches!(spec.plan.route, Route::Flag | Route::FlagAndPipe)
                .then(|| EngineUsed::Extension("loaded with --load-extension".into())),
        };
        access.set(State::Launched(launched.clone()));
        let (pipe, port_file) = (browser.devtools.clone(), browser.devtools_port_file.clone());
        // Over DevTools: the engine is chosen while the browser runs (it may die meanwhile).
        let decide = async {
            let devtools = match (pipe, port_file) {
                (Some(pipe), _) => pipe,
                (None, Some(file)) => match crate::launcher::connect_over_port(&file).await {
                    Ok(port) => port,
                    Err(why) => {
                        tracing::error!("{why}");
                        access.set(State::LaunchFailed(why));
                        return std::future::pending().await;
                    }
                },
                (None, None) => return std::future::pending().await,
            };
            let extension = (spec.extension_dir.as_path(), spec.extension_id.as_str());
            let chosen = choose_engine(&devtools, &spec.plan, extension, &bridge, wait).await;
            if devtools.is_closed() {
                // The browser went away meanwhile: its death is the news, not an engine.
                return std::future::pending().await;
            }
            match chosen {
                Ok(engine) => {
                    // Native now, or standing by for when the extension is away (`--engine
                    // auto`: the extension takes over whenever it is connected).
                    let standby = spec.plan.fallback_native;
                    if matches!(engine, EngineUsed::Native(..)) || standby {
                        let engine = crate::native::NativeEngine::launched(
                            devtools.clone(),
                            rules.viewport,
                            rules.policy.clone(),
                            rules.approval_ms,
                            bridge.event_sink(),
                        );
                        // Before the state says so: a waiting call then finds the engine.
                        bridge.use_native(engine);
                    }
                    // Said once: which engine drives the browser kapture launched, and why.
                    tracing::warn!("{}", engine.describe());
                    access.set(State::Launched(Launched {
                        engine: Some(engine),
                        ..launched
                    }));
                }
                Err(why) => {
                    tracing::error!("{why}");
                    access.set(State::LaunchFailed(why));
                }
            }
            std::future::pending().await
        };
        tokio::select! {
            () = decide => {}
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

/// The engine for a browser launched over its DevTools pipe: the extension when it loads
/// there and connects in time, else (when the plan allows) the native engine, with why.
/// Loaded by `--load-extension` beside the pipe, the extension has as long to connect as a
/// call waits for a browser (`wait`), so the first calls go as without the pipe.
async fn choose_engine(
    devtools: &crate::cdp::Browser,
    plan: &Plan,
    (dir, id): (&Path, &str),
    bridge: &BridgeHandle,
    wait: Duration,
) -> Result<EngineUsed, String> {
    let link = plan.route.link();
    if plan.route == Route::FlagAndPipe {
        if bridge.wait_connected(wait).await {
            return Ok(EngineUsed::Extension(format!(
                "loaded with --load-extension; kapture holds the browser's {link}"
            )));
        }
        return Ok(EngineUsed::Native(
            link,
            format!(
                "because the extension, loaded with --load-extension, did not connect within {} s",
                wait.as_secs()
            ),
        ));
    }
    if !plan.extension_over_pipe {
        return Ok(EngineUsed::Native(link, format!("as asked ({})", plan.why)));
    }
    let started = std::time::Instant::now();
    let failed = match load_unpacked(devtools, dir, id).await {
        Ok(()) => {
            if bridge.wait_connected(EXTENSION_CONNECT_LIMIT).await {
                let took_ms = started.elapsed().as_millis() as u64;
                tracing::info!(took_ms, "the extension loaded over the pipe connected");
                return Ok(EngineUsed::Extension(format!(
                    "loaded over the browser's {link} with Extensions.loadUnpacked, because {}",
                    plan.why
                )));
            }
            format!(
                "the extension, loaded over the {link}, did not connect within {} s",
                EXTENSION_CONNECT_LIMIT.as_secs()
            )
        }
        Err(why) => format!("Extensions.loadUnpacked failed: {why}"),
    };
    match plan.fallback_native {
        true => Ok(EngineUsed::Native(
            link,
            format!("because {}, and {failed}", plan.why),
        )),
        false => Err(format!(
            "the Kapture extension cannot run in the launched browser: {failed} ({}); --engine auto drives it with the native engine instead",
            plan.why
        )),
    }
}

/// Load the extension at `dir` over the pipe; it must come back with Kapture's id (the one
/// its native-host manifest lets in).
async fn load_unpacked(devtools: &crate::cdp::Browser, dir: &Path, id: &str) -> Result<(), String> {
    let path = dir
        .canonicalize()
        .map_err(|e| format!("{}: {e}", dir.display()))?;
    let params = serde_json::json!({"path": path});
    let call = devtools.call(None, "Extensions.loadUnpacked", params);
    let answer = tokio::time::timeout(LOAD_LIMIT, call)
        .await
        .map_err(|_| format!("no answer within {} s", LOAD_LIMIT.as_secs()))?
        .map_err(|e| e.message)?;
    match answer.get("id").and_then(serde_json::Value::as_str) {
        Some(got) if got == id => Ok(()),
        got => Err(format!(
            "it was loaded as {got:?}, not as Kapture's extension {id}"
        )),
    }
}
