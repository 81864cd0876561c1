//! The Test Web App end to end (kapture itself: `crate::http::HttpKapture`): a
//! second headless Chromium the test drives over raw CDP like a person (mouse at element
//! boxes, typed text), with screenshots saved to look at.

use std::path::PathBuf;
use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Value};

use crate::cdp::RawCdp;
use crate::devtools::DevToolsBrowser;
use crate::panel::Panel;
use crate::{eventually, target_dir};

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
