//! The Test Web App end to end: `kapture --http` with its launched headless Chromium, and a
//! second headless Chromium the test drives over raw CDP like a person (mouse at element
//! boxes, typed text), with screenshots saved to look at.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Value};

use crate::cdp::RawCdp;
use crate::devtools::DevToolsBrowser;
use crate::panel::Panel;
use crate::{eventually, kapture_bin, process_alive, target_dir, RESOLVER_RULES};

/// A `kapture --http 127.0.0.1:0` with a launched headless Chromium; stopped (SIGTERM, then
/// SIGKILL after a bounded wait) when dropped.
pub struct HttpKapture {
    child: tokio::process::Child,
    pub pid: u32,
    /// `http://127.0.0.1:PORT/mcp`, as kapture printed it.
    pub mcp_url: String,
    /// `http://127.0.0.1:PORT/app?token=T`, as kapture printed it.
    pub app_url: String,
    pub stderr_path: PathBuf,
    _scratch: tempfile::TempDir,
}

impl HttpKapture {
    pub async fn start(extra: &[&str]) -> HttpKapture {
        let scratch = tempfile::tempdir().expect("temp dir");
        let runtime = scratch.path().join("run");
        std::fs::create_dir(&runtime).expect("runtime dir");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700))
                .expect("private runtime dir");
        }
        let stderr_path = scratch.path().join("kapture.stderr");
        let stderr = std::fs::File::create(&stderr_path).expect("stderr file");
        let child = tokio::process::Command::new(kapture_bin())
            .arg(format!("--chromium-arg={RESOLVER_RULES}"))
            .args(["--browser", "launch", "--headless", "--http", "127.0.0.1:0"])
            .args(extra)
            .args(["--port", "0"])
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
        let (mcp_url, app_url) = eventually(
            "kapture to print its MCP and app URLs",
            Duration::from_secs(30),
            || {
                let path = path.clone();
                async move {
                    let text = std::fs::read_to_string(&path).ok()?;
                    let mcp = url_in(&text, "/mcp")?;
                    let app = url_in(&text, "/app?token=")?;
                    Some((mcp, app))
                }
            },
        )
        .await;
        HttpKapture {
            child,
            pid,
            mcp_url,
            app_url,
            stderr_path,
            _scratch: scratch,
        }
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr_path).unwrap_or_default()
    }

    /// `http://127.0.0.1:PORT`.
    pub fn origin(&self) -> String {
        self.mcp_url.trim_end_matches("/mcp").to_string()
    }

    /// SIGTERM, as a person's Ctrl+C; waits for the exit (bounded).
    pub async fn stop(mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &self.pid.to_string()])
            .status();
        let exited = tokio::time::timeout(Duration::from_secs(20), self.child.wait()).await;
        assert!(
            matches!(exited, Ok(Ok(_))) && !process_alive(self.pid),
            "kapture did not stop on SIGTERM"
        );
    }
}

/// The first `http://127.0.0.1:…` URL in `text` that contains `part`, cut at whitespace.
fn url_in(text: &str, part: &str) -> Option<String> {
    text.split_whitespace()
        .map(|w| w.trim_matches(|c: char| c == '(' || c == ')' || c == ',' || c == '"'))
        .find(|w| w.starts_with("http://127.0.0.1:") && w.contains(part))
        .map(str::to_string)
}

/// The app page open in a second headless Chromium, driven like a person.
pub struct AppPage {
    pub page: Panel,
    pub browser: DevToolsBrowser,
    /// Where the browser saves downloads.
    pub downloads: tempfile::TempDir,
}

impl AppPage {
    /// Start a browser of the test's own and open `url` in it.
    pub async fn open(url: &str) -> AppPage {
        let browser = DevToolsBrowser::start();
        let mut raw = RawCdp::connect(browser.profile())
            .await
            .expect("the second browser's CDP endpoint");
        let downloads = tempfile::tempdir().expect("downloads dir");
        raw.send(
            None,
            "Browser.setDownloadBehavior",
            json!({"behavior": "allow", "downloadPath": downloads.path().to_str().unwrap()}),
        )
        .await
        .expect("downloads allowed");
        raw.send(None, "Target.createTarget", json!({"url": url}))
            .await
            .expect("the app page opens");
        let session = raw.attach_page("/app").await.expect("attach to the app");
        raw.send(
            Some(&session),
            "Emulation.setDeviceMetricsOverride",
            json!({"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": false}),
        )
        .await
        .expect("viewport");
        AppPage {
            page: Panel { raw, session },
            browser,
            downloads,
        }
    }

    pub async fn eval(&mut self, expr: &str) -> Value {
        self.page.eval(expr).await
    }

    pub async fn until(&mut self, what: &str, expr: &str) -> Value {
        self.page.until(what, expr).await
    }

    pub async fn click(&mut self, selector: &str) {
        self.page.click(selector).await
    }

    /// Replace what a field holds with `text`, typed (the field's text selected first, as
    /// a person's Ctrl+A does).
    pub async fn retype(&mut self, selector: &str, text: &str) {
        self.page.click(selector).await;
        self.eval(&format!("document.querySelector({selector:?}).select()"))
            .await;
        self.page
            .raw
            .send(
                Some(&self.page.session),
                "Input.insertText",
                json!({"text": text}),
            )
            .await
            .expect("typing");
    }

    /// Press a key (e.g. "Enter") on the focused element.
    pub async fn press(&mut self, key: &str, code: u32) {
        for kind in ["keyDown", "keyUp"] {
            let mut p =
                json!({"type": kind, "key": key, "code": key, "windowsVirtualKeyCode": code});
            if kind == "keyDown" && key == "Enter" {
                p["text"] = json!("\r");
            }
            self.page
                .raw
                .send(Some(&self.page.session), "Input.dispatchKeyEvent", p)
                .await
                .expect("key");
        }
    }

    /// Save the page as `target/app-screenshots/<name>.png`; answers the path.
    pub async fn shot(&mut self, name: &str) -> PathBuf {
        let dir = target_dir().join("app-screenshots");
        std::fs::create_dir_all(&dir).expect("screenshot dir");
        // From the top: a sticky header scrolled along would land mid-page in the capture.
        self.eval("window.scrollTo(0, 0)").await;
        // The whole page at the window's width: a capture beyond the viewport lays the page
        // out without its scrollbar (1280 px) but, left to itself, clips it to the content
        // width measured with one (1265 px), cutting the right edge off.
        let size = self
            .eval("[innerWidth, document.documentElement.scrollHeight]")
            .await;
        let (width, height) = (size[0].as_f64().unwrap(), size[1].as_f64().unwrap());
        let res = self
            .page
            .raw
            .send(
                Some(&self.page.session),
                "Page.captureScreenshot",
                json!({
                    "format": "png",
                    "captureBeyondViewport": true,
                    "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
                }),
            )
            .await
            .expect("screenshot");
        let png = base64::engine::general_purpose::STANDARD
            .decode(res["data"].as_str().expect("png data"))
            .expect("base64");
        let path = dir.join(format!("{name}.png"));
        std::fs::write(&path, png).expect("write screenshot");
        path
    }

    /// The file the browser downloaded under `name`, once complete.
    pub async fn downloaded(&self, name: &str) -> String {
        let path = self.downloads.path().join(name);
        eventually("the download", Duration::from_secs(20), || {
            let path = path.clone();
            async move {
                std::fs::read_to_string(&path)
                    .ok()
                    .filter(|t| !t.is_empty())
            }
        })
        .await
    }
}
