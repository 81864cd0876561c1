//! A Kapture panel page opened in the launched browser and driven through raw CDP like a
//! person: real mouse clicks and typing, polling with a deadline, screenshots to look at.

use std::time::Duration;

use base64::Engine;
use serde_json::{json, Value};

use crate::cdp::RawCdp;
use crate::target_dir;

/// The id the pinned manifest key gives the extension.
pub const EXTENSION_ID: &str = "djjhjaffgifolhomiafbjplbhmfblamg";

/// A panel page and the CDP session attached to it.
pub struct Panel {
    pub raw: RawCdp,
    pub session: String,
}

impl Panel {
    /// Open the panel page for `tab` in the launched browser (started debuggable).
    pub async fn open(k: &crate::Kapture, tab: i64) -> Panel {
        let mut raw = k.raw_cdp().await;
        let url = format!("chrome-extension://{EXTENSION_ID}/panel.html?tabId={tab}");
        raw.send(None, "Target.createTarget", json!({"url": url}))
            .await
            .unwrap();
        let session = raw.attach_page("panel.html").await.unwrap();
        Panel::ready(Panel { raw, session }).await
    }

    /// Open the panel page for `tab` in the browser whose profile is `profile` (started
    /// debuggable), e.g. after the kapture that launched it is gone.
    pub async fn open_in(profile: &std::path::Path, tab: i64) -> Panel {
        let mut raw = RawCdp::connect(profile)
            .await
            .expect("the browser's CDP endpoint");
        let url = format!("chrome-extension://{EXTENSION_ID}/panel.html?tabId={tab}");
        raw.send(None, "Target.createTarget", json!({"url": url}))
            .await
            .unwrap();
        let session = raw.attach_page("panel.html").await.unwrap();
        Panel::ready(Panel { raw, session }).await
    }

    /// `panel` once its page is the extension's own document: attached early, a page can
    /// still be the blank one it starts as, with no `chrome.runtime` to talk to the worker.
    async fn ready(mut panel: Panel) -> Panel {
        panel
            .until(
                "the panel page",
                "location.protocol === 'chrome-extension:' && !!(globalThis.chrome && chrome.runtime && chrome.runtime.id)",
            )
            .await;
        panel
    }

    /// Accept, as the person would, the looser rules the kapture on `port` asks for (shown in
    /// the Connection section when that kapture did not launch this browser).
    pub async fn accept_looser_rules(&mut self, port: u64) {
        let block = format!("document.querySelector('.looser[data-port=\"{port}\"]')");
        self.until("the question about looser rules", &block).await;
        self.click(&format!(
            "button[data-agree=\"accept\"][data-port=\"{port}\"]"
        ))
        .await;
        self.until(
            "the looser rules accepted",
            &format!("{block}?.dataset.agreed === 'accepted'"),
        )
        .await;
    }

    /// Close the panel page (so that nothing else finds it among the tabs).
    pub async fn close(mut self) {
        let targets = self
            .raw
            .send(None, "Target.getTargets", json!({}))
            .await
            .unwrap_or_default();
        for t in targets["targetInfos"].as_array().into_iter().flatten() {
            if t["url"].as_str().is_some_and(|u| u.contains("/panel.html")) {
                let _ = self
                    .raw
                    .send(
                        None,
                        "Target.closeTarget",
                        json!({"targetId": t["targetId"]}),
                    )
                    .await;
            }
        }
    }

    pub async fn eval(&mut self, expr: &str) -> Value {
        let res = self
            .raw
            .send(
                Some(&self.session),
                "Runtime.evaluate",
                json!({"expression": expr, "returnByValue": true, "awaitPromise": true}),
            )
            .await
            .expect("panel evaluate");
        res.pointer("/result/value").cloned().unwrap_or(Value::Null)
    }

    /// Wait until `expr` is truthy in the panel.
    pub async fn until(&mut self, what: &str, expr: &str) -> Value {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            let v = self.eval(expr).await;
            if !(v.is_null() || v == json!(false) || v == json!("")) {
                return v;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "timed out waiting for {what}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Click an element like a user: a real mouse event at its centre.
    pub async fn click(&mut self, selector: &str) {
        // A person waits for a greyed-out button to come alive (a new approval's answers
        // arm after a moment; nothing takes clicks while the panel reconnects to its
        // worker), up to a bound; then clicks whatever is there.
        let deadline = std::time::Instant::now() + Duration::from_secs(3);
        while self
            .eval(&format!("(() => {{ const e = document.querySelector({selector:?}); return !!(e?.disabled || e?.closest('[inert]')); }})()"))
            .await
            == json!(true)
            && std::time::Instant::now() < deadline
        {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let at = self
            .eval(&format!("(() => {{ const e = document.querySelector({selector:?}); e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; }})()"))
            .await;
        let (x, y) = (at[0].as_f64().unwrap(), at[1].as_f64().unwrap());
        for kind in ["mousePressed", "mouseReleased"] {
            self.raw
                .send(
                    Some(&self.session),
                    "Input.dispatchMouseEvent",
                    json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
                )
                .await
                .unwrap();
        }
    }

    /// Focus a field and type into it like a user.
    pub async fn type_into(&mut self, selector: &str, text: &str) {
        self.click(selector).await;
        self.raw
            .send(
                Some(&self.session),
                "Input.insertText",
                json!({"text": text}),
            )
            .await
            .unwrap();
    }

    pub async fn choose_tool(&mut self, tool: &str) {
        self.eval(&format!("(() => {{ const s = document.getElementById('tool'); s.value = {tool:?}; s.dispatchEvent(new Event('change')); }})()")).await;
    }

    pub async fn shot(&mut self, name: &str) {
        screenshot(&mut self.raw, &self.session, name).await;
    }
}

/// Save the page of `session` as `target/panel-screenshots/<name>.png`, to look at.
pub async fn screenshot(raw: &mut RawCdp, session: &str, name: &str) {
    let dir = target_dir().join("panel-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    let res = raw
        .send(
            Some(session),
            "Page.captureScreenshot",
            json!({"format": "png", "captureBeyondViewport": true}),
        )
        .await
        .unwrap();
    let png = base64::engine::general_purpose::STANDARD
        .decode(res["data"].as_str().unwrap())
        .unwrap();
    std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
}
