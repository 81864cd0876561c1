//! Starting a Chromium-family browser with the Kapture extension loaded and the native
//! host registered in its profile, so it pairs with this server without a human step.
//! The browser is ours: it dies with kapture, and a temporary profile is deleted. Its stderr
//! is kept (the last lines), so a browser that dies is reported with its own words.
//!
//! Routes ([`plan`]): `--load-extension` for browsers that honour it — with `--engine auto`
//! on unix also holding the browser's DevTools pipe, so the native engine stands by for when
//! the extension is away; for those that ignore it (Google Chrome 137+), or when asked, a
//! DevTools connection kapture holds — the pipe (`--remote-debugging-pipe`, unix) or, on
//! Windows, a loopback port the browser picks (`--remote-debugging-port=0`) — over which
//! `browser.rs` loads the extension (`Extensions.loadUnpacked`) or runs the native engine.

pub mod find;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ext_core::protocol::NATIVE_HOST_NAME;
use tokio::io::AsyncBufReadExt;
use tokio::process::{Child, Command};
use tokio::task::JoinHandle;

use find::{Env, Files, Found, Kind, LoadsExtension};

use crate::cli::EngineChoice;

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("no Chromium-family browser found (looked on PATH and in the usual install folders); install Chromium or Chrome for Testing (`npx @puppeteer/browsers install chrome@stable`), or pass --chromium PATH / set KAPTURE_CHROMIUM")]
    NoBrowser,
    #[error("the browser {0} does not exist")]
    Missing(PathBuf),
    #[error("cannot prepare the browser profile {path}: {source}")]
    Profile {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot start {path}: {source}")]
    Spawn {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot open the DevTools pipe for the browser: {0}")]
    Pipe(String),
}

/// Flags that keep a launched browser quiet and unprompted, also on a closed network.
pub const QUIET_FLAGS: &[&str] = &[
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-client-side-phishing-detection",
    "--disable-domain-reliability",
    "--metrics-recording-only",
    "--password-store=basic",
    "--use-mock-keychain",
    // No "is being debugged" infobar in a browser that kapture itself owns.
    "--silent-debugger-extension-api",
];

/// Find the browser: `explicit`, else `$KAPTURE_CHROMIUM`, else the best one installed
/// (PATH and the usual install folders) that loads the extension.
pub fn find_browser(explicit: Option<&Path>) -> Result<Found, LaunchError> {
    find_browser_in(explicit, &Env::current(), &find::RealFiles)
}

/// [`find_browser`] in a given environment.
pub fn find_browser_in(
    explicit: Option<&Path>,
    env: &Env,
    files: &impl Files,
) -> Result<Found, LaunchError> {
    let learn = |f: Found| {
        if f.needs_version() {
            f.with_version(env, files)
        } else {
            f
        }
    };
    let named = explicit
        .map(Path::to_path_buf)
        .or_else(|| env.var("KAPTURE_CHROMIUM").map(PathBuf::from));
    if let Some(path) = named {
        let text = path.to_string_lossy();
        let windows = env.os == find::Os::Windows;
        let bare = !(text.contains('/') || windows && text.contains('\\'));
        let path = if bare {
            which::which(&path).map_err(|_| LaunchError::Missing(path))?
        } else if files.is_file(&path) {
            path
        } else {
            return Err(LaunchError::Missing(path));
        };
        return Ok(learn(Found::at(path)));
    }
    let mut first_ignoring = None;
    for found in find::installed(env, files) {
        let found = learn(found);
        if found.loads_extension() != LoadsExtension::No {
            return Ok(found);
        }
        first_ignoring.get_or_insert(found);
    }
    // Only browsers that ignore --load-extension: one of them, reached over DevTools.
    first_ignoring.ok_or(LaunchError::NoBrowser)
}

/// How kapture holds a launched browser's DevTools connection on `os`: the pipe (fds 3
/// and 4) on unix; on Windows, which would need inherited handles for it, a loopback port.
/// `KAPTURE_DEVTOOLS_LINK=port` takes the port anywhere (the tests use it for the Windows
/// route).
pub fn devtools_link(os: find::Os, asked: Option<&str>) -> Route {
    match (os, asked) {
        (_, Some("port")) | (find::Os::Windows, _) => Route::Port,
        _ => Route::Pipe,
    }
}

/// How kapture reaches a browser it launches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// `--load-extension`: the extension connects on its own.
    Flag,
    /// `--load-extension` and `--remote-debugging-pipe`: the extension connects on its own,
    /// and kapture holds the browser's DevTools pipe for the native engine standing by.
    FlagAndPipe,
    /// `--remote-debugging-pipe`: kapture holds a DevTools connection to the browser.
    Pipe,
    /// `--remote-debugging-port=0`: as the pipe, over the loopback port the browser writes
    /// in its profile's `DevToolsActivePort` (other local processes can reach it too).
    Port,
}

impl Route {
    /// What kapture holds the browser by, for messages.
    pub fn link(self) -> &'static str {
        match self {
            Route::Flag => "--load-extension",
            Route::Pipe | Route::FlagAndPipe => "DevTools pipe",
            Route::Port => "DevTools port",
        }
    }
}

/// The route and the engines to try for a launch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub route: Route,
    /// Load the extension over the pipe (`Extensions.loadUnpacked`).
    pub extension_over_pipe: bool,
    /// When the extension does not come, drive the browser with the native engine instead.
    pub fallback_native: bool,
    /// Why this route, said with the engine in `browser_status` and on stderr.
    pub why: String,
}

/// Decide how to launch `found` for `engine` (`over_pipe`: `--extension-over-pipe`); an
/// error says why it cannot be launched here.
/// `link`: how a DevTools connection is held here ([`devtools_link`]).
pub fn plan(
    found: &Found,
    engine: EngineChoice,
    over_pipe: bool,
    link: Route,
    standby: bool,
) -> Result<Plan, String> {
    if engine == EngineChoice::Native {
        return Ok(Plan {
            route: link,
            extension_over_pipe: false,
            fallback_native: false,
            why: "--engine native".into(),
        });
    }
    let ignores = found.loads_extension() == LoadsExtension::No;
    if !ignores && !over_pipe {
        // Asked for (`--native-standby`), kapture also holds the pipe (never a port others
        // could reach): the native engine stands by for when the extension is away. Not by
        // default: the pipe costs every navigation some milliseconds, and a person watching
        // the browser may press Disconnect or turn the extension off to stop the agent.
        let standby = standby && engine == EngineChoice::Auto && link == Route::Pipe;
        return Ok(Plan {
            route: if standby {
                Route::FlagAndPipe
            } else {
                Route::Flag
            },
            extension_over_pipe: false,
            fallback_native: standby,
            why: "it loads --load-extension".into(),
        });
    }
    let why = if ignores {
        find::chrome_refusal(found.version.as_ref().map(|v| v.major))
    } else {
        "--extension-over-pipe".into()
    };
    Ok(Plan {
        route: link,
        extension_over_pipe: true,
        fallback_native: engine == EngineChoice::Auto,
        why,
    })
}

/// Is this process root (Chromium then needs --no-sandbox)?
pub fn running_as_root() -> bool {
    #[cfg(unix)]
    {
        nix::unistd::geteuid().is_root()
    }
    #[cfg(not(unix))]
    {
        false
    }
}

/// The native-messaging host manifest that lets extension `extension_id` start `host_path`.
pub fn native_host_manifest(host_path: &Path, extension_id: &str) -> serde_json::Value {
    serde_json::json!({
        "name": NATIVE_HOST_NAME,
        "description": "Kapture: tells the Kapture extension which kapture servers are running",
        "path": host_path,
        "type": "stdio",
        "allowed_origins": [format!("chrome-extension://{extension_id}/")],
    })
}

/// Write the native-host manifest into `dir` (a `NativeMessagingHosts` folder).
pub fn write_native_host_manifest(
    dir: &Path,
    host_path: &Path,
    extension_id: &str,
) -> std::io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(format!("{NATIVE_HOST_NAME}.json"));
    let json = serde_json::to_vec_pretty(&native_host_manifest(host_path, extension_id))
        .unwrap_or_default();
    crate::pairing::write_private_atomic(&path, &json)?;
    Ok(path)
}

/// Point a fresh profile's downloads at `dir`, without a save dialog.
fn write_download_preferences(profile: &Path, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let default = profile.join("Default");
    std::fs::create_dir_all(&default)?;
    let prefs = serde_json::json!({
        "download": {"default_directory": dir, "prompt_for_download": false, "directory_upgrade": true},
        "savefile": {"default_directory": dir},
    });
    crate::pairing::write_private_atomic(&default.join("Preferences"), prefs.to_string().as_bytes())
}

/// Whether a launched browser runs without a window, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Headless {
    No,
    /// `--headless` was given.
    Asked,
    /// There is no display (Linux without `DISPLAY` or `WAYLAND_DISPLAY`): chosen on its own.
    NoDisplay,
}

impl Headless {
    /// Headless when asked, or when a window could not open.
    pub fn choose(asked: bool, env: &Env) -> Headless {
        if asked {
            Headless::Asked
        } else if !find::has_display(env) {
            Headless::NoDisplay
        } else {
            Headless::No
        }
    }

    pub fn on(self) -> bool {
        self != Headless::No
    }

    /// How `browser_status` and stderr say it.
    pub fn describe(self) -> &'static str {
        match self {
            Headless::No => "with a window",
            Headless::Asked => "headless (--headless)",
            Headless::NoDisplay => {
                "headless, chosen because there is no display (DISPLAY and WAYLAND_DISPLAY are unset)"
            }
        }
    }
}

/// What to launch.
#[derive(Debug, Clone)]
pub struct LaunchSpec {
    pub browser: PathBuf,
    /// What kind of browser it is (for the hint when it dies).
    pub kind: Kind,
    /// Its route and engines.
    pub plan: Plan,
    pub extension_dir: PathBuf,
    pub extension_id: String,
    /// `None`: a fresh temporary profile, deleted on exit.
    pub user_data_dir: Option<PathBuf>,
    pub headless: Headless,
    /// The window's size (headless: the viewport's).
    pub window: crate::cli::WindowSize,
    pub extra_args: Vec<String>,
    /// Passed to the browser (and so to the native host it starts) as `KAPTURE_RUNTIME_DIR`.
    pub runtime_dir: PathBuf,
    /// The binary Chrome starts as native host (normally this one).
    pub host_binary: PathBuf,
    /// Where the browser saves downloads (kapture's download folder).
    pub download_dir: PathBuf,
}

/// The command line of a launch (without the program).
pub fn browser_args(spec: &LaunchSpec, profile: &Path, as_root: bool) -> Vec<String> {
    let mut args = vec![format!("--user-data-dir={}", profile.display())];
    match spec.plan.route {
        Route::Flag => args.push(format!("--load-extension={}", spec.extension_dir.display())),
        Route::FlagAndPipe => args.extend([
            format!("--load-extension={}", spec.extension_dir.display()),
            "--remote-debugging-pipe".into(),
        ]),
        Route::Pipe | Route::Port => {
            args.push(match spec.plan.route {
                Route::Pipe => "--remote-debugging-pipe".into(),
                _ => "--remote-debugging-port=0".into(),
            });
            if spec.plan.extension_over_pipe {
                // Extensions.loadUnpacked is offered only with it (documented; Chromium 156
                // offers it without).
                args.push("--enable-unsafe-extension-debugging".into());
            }
        }
    }
    args.extend(QUIET_FLAGS.iter().map(|f| f.to_string()));
    if spec.headless.on() {
        args.push("--headless=new".into());
    }
    if as_root {
        args.push("--no-sandbox".into());
    }
    args.push(format!(
        "--window-size={},{}",
        spec.window.width, spec.window.height
    ));
    args.extend(spec.extra_args.iter().cloned());
    args.push("about:blank".into());
    args
}

/// Lines of the browser's stderr kept, and how long each may be.
const STDERR_KEPT: usize = 64;
const STDERR_LINE_MAX: usize = 300;
/// Lines quoted when it dies.
const STDERR_QUOTED: usize = 5;
/// After the browser exits, how long its stderr may take to end (helpers still hold it).
const STDERR_DRAIN: Duration = Duration::from_millis(500);

/// The last lines of the browser's stderr.
type Tail = Arc<Mutex<VecDeque<String>>>;

/// Read the browser's stderr to its end (a pipe nobody reads would stall the browser), keep
/// the last lines, and pass them on to kapture's stderr when asked to.
fn keep_stderr(stderr: tokio::process::ChildStderr, tail: Tail, show: bool) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut reader = tokio::io::BufReader::new(stderr);
        let mut line = Vec::new();
        loop {
            line.clear();
            match reader.read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end();
            if show {
                eprintln!("{text}");
            }
            if text.trim().is_empty() {
                continue;
            }
            let cut: String = text.chars().take(STDERR_LINE_MAX).collect();
            let mut kept = tail.lock().unwrap_or_else(|p| p.into_inner());
            if kept.len() == STDERR_KEPT {
                kept.pop_front();
            }
            kept.push_back(cut);
        }
    })
}

/// Chromium's everyday complaints in containers and CI: not why it died.
fn is_noise(line: &str) -> bool {
    [
        "dbus",
        "D-Bus",
        "Fontconfig",
        "Floss",
        "Failed to connect to the bus",
        "gcm",
        "google_apis",
        "DevTools listening",
    ]
    .iter()
    .any(|n| line.contains(n))
}

/// The lines worth quoting: the last few that are not noise (else the last few).
pub fn quoted_lines(lines: &[String]) -> Vec<String> {
    let telling: Vec<&String> = lines.iter().filter(|l| !is_noise(l)).collect();
    let pick: Vec<&String> = if telling.is_empty() {
        lines.iter().collect()
    } else {
        telling
    };
    pick[pick.len().saturating_sub(STDERR_QUOTED)..]
        .iter()
        .map(|l| l.to_string())
        .collect()
}

/// What a launch was, for telling why it died.
#[derive(Debug, Clone, Copy)]
pub struct LaunchFacts {
    pub kind: Kind,
    pub headless: Headless,
}

/// The likely cause of a death and its fix, from the browser's stderr and the launch.
pub fn diagnose(lines: &[String], facts: &LaunchFacts) -> String {
    let any = |needles: &[&str]| lines.iter().any(|l| needles.iter().any(|n| l.contains(n)));
    if let Some(lib) = lines.iter().find_map(|l| {
        let rest = l.split("error while loading shared libraries: ").nth(1)?;
        Some(rest.split(':').next().unwrap_or(rest).trim().to_string())
    }) {
        return format!("a system library is missing ({lib}): install the browser's dependencies with the system's package manager (installing the distribution's chromium package pulls them in)");
    }
    if any(&["Running as root without --no-sandbox"]) {
        return "the browser refuses to run as root with its sandbox on: run kapture as an ordinary user, or pass --chromium-arg=--no-sandbox".into();
    }
    if any(&[
        "No usable sandbox",
        "setuid sandbox",
        "Failed to move to new namespace",
    ]) {
        return "its sandbox cannot start here (a container without user namespaces?): pass --chromium-arg=--no-sandbox, or allow unprivileged user namespaces".into();
    }
    if any(&[
        "profile appears to be in use",
        "ProcessSingleton",
        "SingletonLock",
        "Opening in existing browser session",
    ]) {
        return "its profile folder is used by another browser: close that browser, or pass another --user-data-dir (without one, kapture uses a fresh profile)".into();
    }
    if any(&[
        "Missing X server",
        "$DISPLAY",
        "cannot open display",
        "Failed to connect to Wayland display",
        "platform failed to initialize",
    ]) {
        return if facts.headless.on() {
            "it found no usable display although it ran headless: check the --chromium-arg flags (an --ozone-platform one?)".into()
        } else {
            "no usable display: start kapture with --headless (chosen on its own when DISPLAY and WAYLAND_DISPLAY are unset), or give it a display (e.g. xvfb-run)".into()
        };
    }
    "run the browser by hand with the same flags to see why, or start kapture with KAPTURE_BROWSER_LOG=1 to see all of the browser's output on kapture's stderr".into()
}

/// A launched browser that exited on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Death {
    pub browser: PathBuf,
    /// `exit status: 1`, `signal: 9 (SIGKILL)`…
    pub status: String,
    pub after: Duration,
    /// Its last stderr lines worth quoting.
    pub quoted: Vec<String>,
    /// The likely cause and its fix.
    pub hint: String,
}

impl Death {
    /// One paragraph for the agent and for kapture's stderr. The stderr lines are the
    /// browser's (a page's console text may be among them): whoever answers escapes them.
    pub fn message(&self) -> String {
        let when = if self.after < Duration::from_secs(10) {
            format!("{:.1} s after it started", self.after.as_secs_f64())
        } else {
            format!("after {} s", self.after.as_secs())
        };
        let said = if self.quoted.is_empty() {
            "it wrote nothing to stderr".to_string()
        } else {
            let quoted: Vec<String> = self.quoted.iter().map(|l| format!("\"{l}\"")).collect();
            format!("its last stderr lines: {}", quoted.join(", "))
        };
        format!(
            "the browser kapture launched ({}) exited ({}) {when}; {said}. Likely fix: {}",
            self.browser.display(),
            self.status,
            self.hint
        )
    }
}

/// A browser kapture started. Dropping it kills the browser and removes a temporary profile.
#[derive(Debug)]
pub struct LaunchedBrowser {
    child: Child,
    pub pid: Option<u32>,
    pub browser: PathBuf,
    pub profile: PathBuf,
    pub facts: LaunchFacts,
    started: Instant,
    tail: Tail,
    stderr_task: Option<JoinHandle<()>>,
    /// The DevTools connection over the pipe (pipe route): it must stay open while the
    /// browser is wanted, the browser exits when it closes.
    pub devtools: Option<crate::cdp::Browser>,
    /// Port route: the file the browser names its DevTools port in ([`connect_over_port`]).
    pub devtools_port_file: Option<PathBuf>,
    // Declared last: the profile is deleted after the child is gone.
    _temp_profile: Option<tempfile::TempDir>,
}

impl LaunchedBrowser {
    pub fn start(spec: &LaunchSpec) -> Result<Self, LaunchError> {
        let temp_profile = match &spec.user_data_dir {
            Some(_) => None,
            None => Some(
                tempfile::Builder::new()
                    .prefix("kapture-profile-")
                    .tempdir()
                    .map_err(|source| LaunchError::Profile {
                        path: std::env::temp_dir(),
                        source,
                    })?,
            ),
        };
        let profile = match (&spec.user_data_dir, &temp_profile) {
            (Some(dir), _) => dir.clone(),
            (None, Some(t)) => t.path().to_path_buf(),
            (None, None) => unreachable!("a temporary profile exists when no dir is given"),
        };
        write_native_host_manifest(
            &profile.join("NativeMessagingHosts"),
            &spec.host_binary,
            &spec.extension_id,
        )
        .map_err(|source| LaunchError::Profile {
            path: profile.clone(),
            source,
        })?;
        if spec.user_data_dir.is_none() {
            write_download_preferences(&profile, &spec.download_dir).map_err(|source| {
                LaunchError::Profile {
                    path: profile.clone(),
                    source,
                }
            })?;
        }
        let as_root = running_as_root();
        let args = browser_args(spec, &profile, as_root);
        let show_logs = std::env::var_os("KAPTURE_BROWSER_LOG").is_some_and(|v| v == "1");
        let mut command = Command::new(&spec.browser);
        command
            .args(&args)
            .env("KAPTURE_RUNTIME_DIR", &spec.runtime_dir)
            .env(
                crate::native_messaging::LAUNCHED_BY_ENV,
                std::process::id().to_string(),
            )
            .stdin(Stdio::null())
            // stdout belongs to MCP: the browser must never write there.
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let ours = match spec.plan.route {
            Route::Flag | Route::Port => None,
            Route::Pipe | Route::FlagAndPipe => Some(give_pipe(&mut command)?),
        };
        let devtools_port_file = (spec.plan.route == Route::Port).then(|| {
            // A file left by an earlier run of this profile names a port long gone.
            let file = profile.join("DevToolsActivePort");
            let _ = std::fs::remove_file(&file);
            file
        });
        let spawned = command.spawn();
        // The command holds the browser's pipe ends: closed here, so only the browser has them.
        drop(command);
        let mut child = spawned.map_err(|source| LaunchError::Spawn {
            path: spec.browser.clone(),
            source,
        })?;
        let devtools = match ours {
            Some(ours) => Some(ours.connect()?),
            None => None,
        };
        let tail = Tail::default();
        let stderr_task = child
            .stderr
            .take()
            .map(|e| keep_stderr(e, tail.clone(), show_logs));
        let pid = child.id();
        tracing::info!(browser = %spec.browser.display(), kind = spec.kind.name(), pid, profile = %profile.display(), headless = spec.headless.describe(), "launched browser");
        Ok(Self {
            child,
            pid,
            browser: spec.browser.clone(),
            profile,
            facts: LaunchFacts {
                kind: spec.kind,
                headless: spec.headless,
            },
            started: Instant::now(),
            tail,
            stderr_task,
            devtools,
            devtools_port_file,
            _temp_profile: temp_profile,
        })
    }

    /// Wait for the browser to exit on its own; then say how, with its last stderr lines.
    pub async fn died(&mut self) -> Death {
        let status = self.child.wait().await;
        let after = self.started.elapsed();
        if let Some(task) = self.stderr_task.take() {
            // Its last words may still be in the pipe; helpers may hold it open a moment.
            let _ = tokio::time::timeout(STDERR_DRAIN, task).await;
        }
        let lines: Vec<String> = self
            .tail
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect();
        Death {
            browser: self.browser.clone(),
            status: status
                .map(|s| s.to_string())
                .unwrap_or_else(|e| format!("unknown status: {e}")),
            after,
            quoted: quoted_lines(&lines),
            hint: diagnose(&lines, &self.facts),
        }
    }

    /// Stop the browser, wait for it, then remove a temporary profile.
    pub async fn stop(mut self) {
        let mut exited = false;
        if let Some(devtools) = self.devtools.take() {
            // Over the pipe the browser closes itself cleanly (its last answer may not come).
            let close = devtools.call(None, "Browser.close", serde_json::json!({}));
            let _ = tokio::time::timeout(Duration::from_secs(2), close).await;
            let wait = tokio::time::timeout(Duration::from_secs(3), self.child.wait());
            exited = wait.await.is_ok();
        }
        #[cfg(unix)]
        if let Some(pid) = self
            .pid
            .and_then(|p| i32::try_from(p).ok())
            .filter(|_| !exited)
        {
            use nix::sys::signal::{kill, Signal};
            // SIGTERM first lets Chromium close its children; SIGKILL follows if needed.
            let _ = kill(nix::unistd::Pid::from_raw(pid), Signal::SIGTERM);
            let wait = tokio::time::timeout(Duration::from_secs(3), self.child.wait());
            exited = wait.await.is_ok();
        }
        if !exited {
            let _ = self.child.kill().await;
        }
        if let Some(profile) = self._temp_profile.take() {
            // Helper processes may still write into the profile for a moment after the main
            // process exited; a bounded retry removes what they leave behind.
            let path = profile.keep();
            for _ in 0..40 {
                if std::fs::remove_dir_all(&path).is_ok() || !path.exists() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// How long a browser launched on the port route may take to name its DevTools port.
const PORT_NAMED_WITHIN: Duration = Duration::from_secs(20);

/// The DevTools connection of a browser launched with `--remote-debugging-port=0`, once it
/// wrote its port and browser path in `file` (its profile's `DevToolsActivePort`).
pub async fn connect_over_port(file: &Path) -> Result<crate::cdp::Browser, String> {
    let deadline = Instant::now() + PORT_NAMED_WITHIN;
    loop {
        let text = tokio::fs::read_to_string(file).await.unwrap_or_default();
        let mut lines = text.lines();
        let port = lines.next().and_then(|p| p.trim().parse::<u16>().ok());
        if let (Some(port), Some(path)) = (port, lines.next().map(str::trim)) {
            if path.starts_with("/devtools/browser/") {
                let url = format!("ws://127.0.0.1:{port}{path}");
                return crate::cdp::Browser::connect(&url)
                    .await
                    .map_err(|e| e.to_string());
            }
        }
        if Instant::now() > deadline {
            return Err(format!(
                "the browser did not name its DevTools port within {} s",
                PORT_NAMED_WITHIN.as_secs()
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// kapture's ends of a launched browser's DevTools pipe, until the browser runs.
struct PipeEnds(#[cfg(unix)] crate::cdp::pipe::OurEnds);

impl PipeEnds {
    /// The DevTools connection over them (on the current tokio runtime).
    fn connect(self) -> Result<crate::cdp::Browser, LaunchError> {
        #[cfg(unix)]
        {
            let transport = self
                .0
                .transport()
                .map_err(|e| LaunchError::Pipe(e.to_string()))?;
            Ok(crate::cdp::Browser::over(transport))
        }
        #[cfg(not(unix))]
        Err(LaunchError::Pipe("not on this system".into()))
    }
}

/// Give the browser its DevTools pipe as fds 3 (it reads) and 4 (it writes).
fn give_pipe(command: &mut Command) -> Result<PipeEnds, LaunchError> {
    #[cfg(unix)]
    {
        use command_fds::{CommandFdExt, FdMapping};
        let (theirs, ours) =
            crate::cdp::pipe::open().map_err(|e| LaunchError::Pipe(e.to_string()))?;
        command
            .fd_mappings(vec![
                FdMapping {
                    parent_fd: theirs.reads,
                    child_fd: 3,
                },
                FdMapping {
                    parent_fd: theirs.writes,
                    child_fd: 4,
                },
            ])
            .map_err(|e| LaunchError::Pipe(e.to_string()))?;
        Ok(PipeEnds(ours))
    }
    #[cfg(not(unix))]
    {
        let _ = command;
        Err(LaunchError::Pipe(
            "kapture holds a launched browser's DevTools pipe on Linux and macOS only".into(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> LaunchSpec {
        LaunchSpec {
            browser: "/usr/bin/chromium".into(),
            kind: Kind::Chromium,
            plan: Plan {
                route: Route::Flag,
                extension_over_pipe: false,
                fallback_native: false,
                why: "it loads --load-extension".into(),
            },
            extension_dir: "/x/extension".into(),
            extension_id: "abc".into(),
            user_data_dir: None,
            headless: Headless::Asked,
            window: crate::cli::WindowSize {
                width: 1280,
                height: 720,
            },
            extra_args: vec!["--host-resolver-rules=MAP * ~NOTFOUND".into()],
            runtime_dir: "/run/k".into(),
            host_binary: "/bin/kapture".into(),
            download_dir: "/tmp/downloads".into(),
        }
    }

    #[test]
    fn args_load_the_extension_quietly() {
        let args = browser_args(&spec(), Path::new("/p"), true);
        assert_eq!(args[0], "--user-data-dir=/p");
        assert_eq!(args[1], "--load-extension=/x/extension");
        for flag in [
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            "--disable-sync",
            "--headless=new",
            "--no-sandbox",
            "--window-size=1280,720",
        ] {
            assert!(args.iter().any(|a| a == flag), "{flag} missing");
        }
        assert!(args.contains(&"--host-resolver-rules=MAP * ~NOTFOUND".to_string()));
        assert_eq!(args.last().unwrap(), "about:blank");
        let args = browser_args(
            &LaunchSpec {
                headless: Headless::No,
                ..spec()
            },
            Path::new("/p"),
            false,
        );
        assert!(!args
            .iter()
            .any(|a| a == "--no-sandbox" || a.starts_with("--headless")));
    }

    #[test]
    fn native_host_manifest_names_exactly_our_extension() {
        let m = native_host_manifest(Path::new("/bin/kapture"), "abc");
        assert_eq!(m["name"], NATIVE_HOST_NAME);
        assert_eq!(m["type"], "stdio");
        assert_eq!(m["path"], "/bin/kapture");
        assert_eq!(
            m["allowed_origins"],
            serde_json::json!(["chrome-extension://abc/"])
        );
    }

    #[test]
    fn a_named_browser_that_does_not_exist_is_an_error() {
        assert!(matches!(
            find_browser(Some(Path::new("/nope/chromium"))),
            Err(LaunchError::Missing(_))
        ));
    }

    /// Files that exist, for `find_browser_in`.
    struct Present(Vec<&'static str>);

    impl Files for Present {
        fn is_file(&self, p: &Path) -> bool {
            self.0.iter().any(|f| Path::new(f) == p)
        }
        /// Windows paths (tested on any system): children by `\\`.
        fn children(&self, dir: &Path) -> Vec<PathBuf> {
            let prefix = format!("{}\\", dir.display());
            self.0
                .iter()
                .filter_map(|f| f.strip_prefix(&prefix)?.split('\\').next())
                .map(|name| PathBuf::from(format!("{prefix}{name}")))
                .collect()
        }
    }

    #[test]
    fn the_browser_picked_is_one_that_loads_the_extension() {
        let windows = |vars: &[(&str, &str)]| {
            let mut all = vec![("ProgramFiles", r"C:\P"), ("LOCALAPPDATA", r"C:\L")];
            all.extend_from_slice(vars);
            Env::new(find::Os::Windows, None, &all)
        };
        let chrome = r"C:\P\Google\Chrome\Application\chrome.exe";
        let edge = r"C:\P\Microsoft\Edge\Application\msedge.exe";
        let files = Present(vec![
            chrome,
            r"C:\P\Google\Chrome\Application\140.0.1.2\x",
            edge,
        ]);
        let picked = find_browser_in(None, &windows(&[]), &files).unwrap();
        assert_eq!(
            (picked.path.to_str(), picked.kind),
            (Some(edge), Kind::Edge)
        );
        // Only a current Google Chrome: taken (reached over its DevTools port), found or
        // named.
        let only_chrome = Present(vec![chrome, r"C:\P\Google\Chrome\Application\140.0.1.2\x"]);
        let found = find_browser_in(None, &windows(&[]), &only_chrome).unwrap();
        assert_eq!(found.kind, Kind::Chrome);
        let named = find_browser_in(
            None,
            &windows(&[("KAPTURE_CHROMIUM", chrome)]),
            &only_chrome,
        )
        .unwrap();
        assert_eq!(named.path.to_str(), Some(chrome));
        // An old Chrome still loads it.
        let old = Present(vec![chrome, r"C:\P\Google\Chrome\Application\136.0.1.2\x"]);
        assert_eq!(
            find_browser_in(None, &windows(&[]), &old).unwrap().kind,
            Kind::Chrome
        );
        assert!(matches!(
            find_browser_in(None, &windows(&[]), &Present(vec![])),
            Err(LaunchError::NoBrowser)
        ));
    }

    #[test]
    fn on_linux_and_macos_a_current_google_chrome_is_launched_over_its_pipe() {
        let chrome = "/opt/google/chrome/google-chrome";
        let linux = Env::new(find::Os::Linux, None, &[("KAPTURE_CHROMIUM", chrome)]);
        let found = find_browser_in(None, &linux, &Present(vec![chrome])).unwrap();
        assert_eq!(found.kind, Kind::Chrome);
        let plan = plan(&found, EngineChoice::Auto, false, Route::Pipe, true).unwrap();
        assert_eq!(plan.route, Route::Pipe);
        assert!(plan.extension_over_pipe && plan.fallback_native);
        assert!(
            plan.why.contains("ignores --load-extension"),
            "{}",
            plan.why
        );
        let args = browser_args(
            &LaunchSpec {
                plan: plan.clone(),
                ..spec()
            },
            Path::new("/p"),
            false,
        );
        assert!(args.contains(&"--remote-debugging-pipe".to_string()));
        assert!(args.contains(&"--enable-unsafe-extension-debugging".to_string()));
        assert!(!args.iter().any(|a| a.starts_with("--load-extension")));
        // --engine extension: no native engine behind it.
        let only = super::plan(&found, EngineChoice::Extension, false, Route::Pipe, true).unwrap();
        assert!(only.extension_over_pipe && !only.fallback_native);
        // On Windows: the same over a loopback DevTools port.
        let link = devtools_link(find::Os::Windows, None);
        assert_eq!(link, Route::Port);
        let windows = super::plan(&found, EngineChoice::Auto, false, link, true).unwrap();
        assert_eq!(windows.route, Route::Port);
        assert!(windows.extension_over_pipe && windows.fallback_native);
        let args = browser_args(
            &LaunchSpec {
                plan: windows,
                ..spec()
            },
            Path::new("/p"),
            false,
        );
        assert!(args.contains(&"--remote-debugging-port=0".to_string()));
        assert!(!args.contains(&"--remote-debugging-pipe".to_string()));
        // Asked for anywhere (the tests take the Windows route so).
        assert_eq!(devtools_link(find::Os::Linux, Some("port")), Route::Port);
        assert_eq!(devtools_link(find::Os::Linux, None), Route::Pipe);
    }

    #[test]
    fn the_plan_follows_the_engine_asked_for() {
        let chromium = Found::at("/usr/bin/chromium".into());
        // The default: the flag alone (a person's Disconnect or turning the extension off
        // stops the agent, and navigations pay nothing for a pipe).
        let plain = plan(&chromium, EngineChoice::Auto, false, Route::Pipe, false).unwrap();
        assert_eq!((plain.route, plain.fallback_native), (Route::Flag, false));
        // `--native-standby`: the flag, and the pipe held for the native engine standing by.
        let flag = plan(&chromium, EngineChoice::Auto, false, Route::Pipe, true).unwrap();
        assert_eq!(
            (flag.route, flag.extension_over_pipe, flag.fallback_native),
            (Route::FlagAndPipe, false, true)
        );
        let args = browser_args(
            &LaunchSpec {
                plan: flag,
                ..spec()
            },
            Path::new("/p"),
            false,
        );
        assert!(args.contains(&"--load-extension=/x/extension".to_string()));
        assert!(args.contains(&"--remote-debugging-pipe".to_string()));
        assert!(!args.iter().any(|a| a.contains("unsafe-extension")));
        // Only the extension asked for, or a port (never opened by default): the flag alone.
        for (engine, link) in [
            (EngineChoice::Extension, Route::Pipe),
            (EngineChoice::Auto, Route::Port),
        ] {
            let only = plan(&chromium, engine, false, link, true).unwrap();
            assert_eq!((only.route, only.fallback_native), (Route::Flag, false));
        }
        let forced = plan(&chromium, EngineChoice::Extension, true, Route::Pipe, true).unwrap();
        assert_eq!(forced.route, Route::Pipe);
        assert!(forced.extension_over_pipe && !forced.fallback_native);
        assert_eq!(forced.why, "--extension-over-pipe");
        let native = plan(&chromium, EngineChoice::Native, false, Route::Pipe, true).unwrap();
        assert_eq!(
            (native.route, native.extension_over_pipe),
            (Route::Pipe, false)
        );
        let args = browser_args(
            &LaunchSpec {
                plan: native,
                ..spec()
            },
            Path::new("/p"),
            false,
        );
        assert!(args.contains(&"--remote-debugging-pipe".to_string()));
        assert!(!args
            .iter()
            .any(|a| a.starts_with("--load-extension") || a.contains("unsafe-extension")));
        let windows = plan(&chromium, EngineChoice::Native, false, Route::Port, true).unwrap();
        assert_eq!(
            (windows.route, windows.extension_over_pipe),
            (Route::Port, false)
        );
    }

    fn facts(headless: Headless) -> LaunchFacts {
        LaunchFacts {
            kind: Kind::Chromium,
            headless,
        }
    }

    fn lines(text: &str) -> Vec<String> {
        text.lines().map(str::to_string).collect()
    }

    #[test]
    fn a_death_is_explained_by_its_cause() {
        let display = lines("[1:1:ERROR:bus.cc(407)] Failed to connect to the bus: no dbus\n[1:1:ERROR:ozone_platform_x11.cc(240)] Missing X server or $DISPLAY\n[1:1:ERROR:env.cc(257)] The platform failed to initialize.  Exiting.");
        let hint = diagnose(&display, &facts(Headless::No));
        assert!(hint.contains("--headless"), "{hint}");
        assert!(diagnose(&display, &facts(Headless::Asked)).contains("although it ran headless"));
        for (text, expected) in [
            ("[1:1:FATAL:zygote_host_impl_linux.cc(127)] Running as root without --no-sandbox is not supported.", "--no-sandbox"),
            ("[1:1:FATAL:zygote_host_impl_linux.cc(201)] No usable sandbox! ...", "user namespaces"),
            ("[1:1:ERROR:process_singleton_posix.cc(358)] The profile appears to be in use by another Chromium process", "--user-data-dir"),
            ("Opening in existing browser session.", "--user-data-dir"),
            ("/usr/lib/chromium/chromium: error while loading shared libraries: libnss3.so: cannot open shared object file", "libnss3.so"),
            ("something else", "KAPTURE_BROWSER_LOG=1"),
        ] {
            let hint = diagnose(&lines(text), &facts(Headless::No));
            assert!(hint.contains(expected), "{text} → {hint}");
        }
    }

    #[test]
    fn the_quoted_lines_skip_the_everyday_noise() {
        let mut all = vec!["[x] the real cause".to_string()];
        all.extend((0..10).map(|i| format!("[{i}:ERROR:bus.cc] Failed to connect to the bus")));
        assert_eq!(quoted_lines(&all), ["[x] the real cause"]);
        let noise_only: Vec<String> = (0..8).map(|i| format!("dbus {i}")).collect();
        assert_eq!(quoted_lines(&noise_only).len(), STDERR_QUOTED);
        assert!(quoted_lines(&[]).is_empty());
    }

    #[test]
    fn headless_is_chosen_without_a_display() {
        let env = |vars: &[(&str, &str)]| Env::new(find::Os::Linux, None, vars);
        assert_eq!(Headless::choose(false, &env(&[])), Headless::NoDisplay);
        assert_eq!(Headless::choose(true, &env(&[])), Headless::Asked);
        assert_eq!(
            Headless::choose(false, &env(&[("DISPLAY", ":0")])),
            Headless::No
        );
        let mac = Env::new(find::Os::MacOs, None, &[]);
        assert_eq!(Headless::choose(false, &mac), Headless::No);
        assert!(Headless::NoDisplay.describe().contains("no display"));
    }

    /// A real process that dies at once: its stderr's last lines and the fitting hint come back.
    #[cfg(unix)]
    #[tokio::test]
    async fn a_browser_that_dies_is_reported_with_its_stderr() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("fake-chromium");
        std::fs::write(
            &fake,
            "#!/bin/sh\necho '[9:9:ERROR:ozone_platform_x11.cc(240)] Missing X server or $DISPLAY' >&2\nexit 1\n",
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let spec = LaunchSpec {
            browser: fake.clone(),
            kind: Kind::Unknown,
            headless: Headless::No,
            runtime_dir: dir.path().join("run"),
            download_dir: dir.path().join("downloads"),
            ..spec()
        };
        let mut browser = LaunchedBrowser::start(&spec).unwrap();
        let death = tokio::time::timeout(Duration::from_secs(10), browser.died())
            .await
            .expect("the death is seen");
        assert_eq!(death.status, "exit status: 1");
        assert_eq!(
            death.quoted,
            ["[9:9:ERROR:ozone_platform_x11.cc(240)] Missing X server or $DISPLAY"]
        );
        let message = death.message();
        assert!(
            message.contains("Missing X server") && message.contains("--headless"),
            "{message}"
        );
        browser.stop().await;
    }
}
