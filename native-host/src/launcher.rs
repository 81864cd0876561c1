//! Starting a Chromium-family browser with the Kapture extension loaded and the native
//! host registered in its profile, so it pairs with this server without a human step.
//! The browser is ours: it dies with kapture, and a temporary profile is deleted.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use ext_core::protocol::NATIVE_HOST_NAME;
use tokio::process::{Child, Command};

#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    #[error("no Chromium-family browser found (looked for {0} on PATH); install Chromium or pass --chromium PATH / set KAPTURE_CHROMIUM")]
    NoBrowser(String),
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
}

/// Executables tried, in order, when no browser is named.
pub const BROWSER_NAMES: &[&str] = &[
    "chromium",
    "chromium-browser",
    "google-chrome",
    "google-chrome-stable",
    "chrome",
    "brave-browser",
    "brave",
    "microsoft-edge",
    "microsoft-edge-stable",
];

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

/// Find the browser: `explicit`, else `$KAPTURE_CHROMIUM`, else the first known name on PATH.
pub fn find_browser(explicit: Option<&Path>) -> Result<PathBuf, LaunchError> {
    let named = explicit.map(Path::to_path_buf).or_else(|| {
        std::env::var_os("KAPTURE_CHROMIUM")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    });
    if let Some(path) = named {
        if path.components().count() == 1 {
            return which::which(&path).map_err(|_| LaunchError::Missing(path));
        }
        return if path.exists() {
            Ok(path)
        } else {
            Err(LaunchError::Missing(path))
        };
    }
    BROWSER_NAMES
        .iter()
        .find_map(|name| which::which(name).ok())
        .ok_or_else(|| LaunchError::NoBrowser(BROWSER_NAMES.join(", ")))
}

/// Is this process root (Chromium then needs --no-sandbox)?
fn running_as_root() -> bool {
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

/// What to launch.
#[derive(Debug, Clone)]
pub struct LaunchSpec {
    pub browser: PathBuf,
    pub extension_dir: PathBuf,
    pub extension_id: String,
    /// `None`: a fresh temporary profile, deleted on exit.
    pub user_data_dir: Option<PathBuf>,
    pub headless: bool,
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
    let mut args = vec![
        format!("--user-data-dir={}", profile.display()),
        format!("--load-extension={}", spec.extension_dir.display()),
    ];
    args.extend(QUIET_FLAGS.iter().map(|f| f.to_string()));
    if spec.headless {
        args.push("--headless=new".into());
    }
    if as_root {
        args.push("--no-sandbox".into());
    }
    args.extend(spec.extra_args.iter().cloned());
    args.push("about:blank".into());
    args
}

/// A browser kapture started. Dropping it kills the browser and removes a temporary profile.
#[derive(Debug)]
pub struct LaunchedBrowser {
    child: Child,
    pub pid: Option<u32>,
    pub browser: PathBuf,
    pub profile: PathBuf,
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
        let args = browser_args(spec, &profile, running_as_root());
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
            .stderr(if show_logs {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .kill_on_drop(true);
        let child = command.spawn().map_err(|source| LaunchError::Spawn {
            path: spec.browser.clone(),
            source,
        })?;
        let pid = child.id();
        tracing::info!(browser = %spec.browser.display(), pid, profile = %profile.display(), headless = spec.headless, "launched browser");
        Ok(Self {
            child,
            pid,
            browser: spec.browser.clone(),
            profile,
            _temp_profile: temp_profile,
        })
    }

    /// Wait for the browser to exit on its own.
    pub async fn wait(&mut self) -> Option<std::process::ExitStatus> {
        self.child.wait().await.ok()
    }

    /// Stop the browser, wait for it, then remove a temporary profile.
    pub async fn stop(mut self) {
        let mut exited = false;
        #[cfg(unix)]
        if let Some(pid) = self.pid.and_then(|p| i32::try_from(p).ok()) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> LaunchSpec {
        LaunchSpec {
            browser: "/usr/bin/chromium".into(),
            extension_dir: "/x/extension".into(),
            extension_id: "abc".into(),
            user_data_dir: None,
            headless: true,
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
        ] {
            assert!(args.iter().any(|a| a == flag), "{flag} missing");
        }
        assert!(args.contains(&"--host-resolver-rules=MAP * ~NOTFOUND".to_string()));
        assert_eq!(args.last().unwrap(), "about:blank");
        let args = browser_args(
            &LaunchSpec {
                headless: false,
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
}
