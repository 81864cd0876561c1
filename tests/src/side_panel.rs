//! Kapture's real side panel (`sidepanel.html` docked in the agent's window, opened as the
//! toolbar icon opens it) driven like a person: real mouse clicks, keys and typing through
//! CDP (the `Panel` helpers), screenshots to look at.

use std::ops::{Deref, DerefMut};
use std::time::Duration;

use serde_json::json;

use crate::panel::{Panel, EXTENSION_ID};

/// The width the side panel gets in a browser window by default (it can be dragged to
/// about 320–600 px).
pub const WIDTH: u32 = 400;

/// A side panel page and the CDP session attached to it.
pub struct SidePanel {
    pub panel: Panel,
    /// The newest approval seen (ids only grow): the next one is another.
    last_approval: u64,
}

impl Deref for SidePanel {
    type Target = Panel;
    fn deref(&self) -> &Panel {
        &self.panel
    }
}

impl DerefMut for SidePanel {
    fn deref_mut(&mut self) -> &mut Panel {
        &mut self.panel
    }
}

impl SidePanel {
    /// Open Kapture's real side panel in `tab`'s window, as a click on the toolbar icon
    /// does (`chrome.sidePanel.open` with a user gesture, from a page of the extension's,
    /// closed again), and attach to it. It follows that window's active tab. Waits until
    /// it is connected.
    pub async fn open(k: &crate::Kapture, tab: i64) -> SidePanel {
        let mut raw = k.raw_cdp().await;
        let panel_url = format!("chrome-extension://{EXTENSION_ID}/sidepanel.html");
        let opener = raw
            .send(
                None,
                "Target.createTarget",
                json!({"url": format!("{panel_url}?opener"), "background": true}),
            )
            .await
            .unwrap();
        let session = raw.attach_page("sidepanel.html?opener").await.unwrap();
        let mut opener_page = Panel { raw, session };
        opener_page
            .until(
                "the extension's page loaded",
                "location.search === '?opener' && !!globalThis.chrome?.sidePanel",
            )
            .await;
        let Panel { mut raw, session } = opener_page;
        let icon = format!(
            "chrome.tabs.get({tab}).then((t) => chrome.sidePanel.getPanelBehavior().then((b) => b.openPanelOnActionClick ? chrome.sidePanel.open({{windowId: t.windowId}}).then(() => 'opened') : 'the icon does not open the side panel'))"
        );
        let opened = raw
            .send(
                Some(&session),
                "Runtime.evaluate",
                json!({"expression": icon, "awaitPromise": true, "userGesture": true, "returnByValue": true}),
            )
            .await
            .unwrap();
        assert_eq!(opened["result"]["value"], "opened", "{opened}");
        raw.send(
            None,
            "Target.closeTarget",
            json!({"targetId": opener["targetId"]}),
        )
        .await
        .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let target = loop {
            let targets = raw
                .send(None, "Target.getTargets", json!({}))
                .await
                .unwrap();
            let found = targets["targetInfos"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|t| t["url"] == panel_url.as_str())
                .map(|t| t["targetId"].clone());
            if let Some(target) = found {
                break target;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "no side panel: {targets}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let attached = raw
            .send(
                None,
                "Target.attachToTarget",
                json!({"targetId": target, "flatten": true}),
            )
            .await
            .unwrap();
        let session = attached["sessionId"].as_str().unwrap().to_string();
        let mut panel = SidePanel {
            panel: Panel { raw, session },
            last_approval: 0,
        };
        panel.metrics(1000).await;
        panel
            .until(
                "the side panel connected",
                "document.getElementById('status').textContent === 'connected'",
            )
            .await;
        panel
    }

    /// Choose the site's mode (`auto`, `ask`, `read-only`) and wait until the worker has it.
    pub async fn choose_mode(&mut self, mode: &str) {
        let button = format!("document.getElementById('mode-{mode}')");
        self.until("the mode buttons", &button).await;
        self.click(&format!("#mode-{mode}")).await;
        self.until(
            &format!("mode {mode} chosen"),
            &format!("{button}?.getAttribute('aria-pressed') === 'true'"),
        )
        .await;
    }

    /// Wait until "This site" shows `origin`.
    pub async fn until_site(&mut self, origin: &str) {
        self.until(
            &format!("this site: {origin}"),
            &format!("document.getElementById('site-origin').textContent === {origin:?}"),
        )
        .await;
    }

    /// Press a key (`Tab`, `Enter`, `Escape`…) like a person, on whatever has the focus.
    pub async fn press(&mut self, key: &str) {
        let code = match key {
            "Tab" => 9,
            "Enter" => 13,
            "Escape" => 27,
            _ => 0,
        };
        for kind in ["rawKeyDown", "keyUp"] {
            let session = self.session.clone();
            self.raw
                .send(
                    Some(&session),
                    "Input.dispatchKeyEvent",
                    json!({"type": kind, "key": key, "code": key, "windowsVirtualKeyCode": code}),
                )
                .await
                .unwrap();
        }
    }

    /// Type characters as key presses (a closed `<select>` picks the option they begin).
    pub async fn keys(&mut self, text: &str) {
        for c in text.chars() {
            let session = self.session.clone();
            let s = c.to_string();
            let upper = c.to_ascii_uppercase() as u32;
            self.raw
                .send(
                    Some(&session),
                    "Input.dispatchKeyEvent",
                    json!({"type": "keyDown", "key": s, "text": s, "windowsVirtualKeyCode": upper}),
                )
                .await
                .unwrap();
            self.raw
                .send(
                    Some(&session),
                    "Input.dispatchKeyEvent",
                    json!({"type": "keyUp", "key": s, "windowsVirtualKeyCode": upper}),
                )
                .await
                .unwrap();
        }
    }

    /// Save the whole page as `target/panel-screenshots/<name>.png`: from the top (a
    /// sticky header captured while scrolled shows in the middle of the picture), in a
    /// viewport as tall as the page (no scroll bar eating the column's width).
    pub async fn shot(&mut self, name: &str) {
        let height = self
            .eval("(window.scrollTo(0, 0), document.documentElement.scrollHeight)")
            .await
            .as_u64()
            .unwrap_or(1000);
        self.metrics(height).await;
        self.panel.shot(name).await;
        self.metrics(1000).await;
    }

    /// Make the side panel `height` px tall (everything in view: no scroll, so nothing the
    /// browser's scroll anchoring keeps in place).
    pub async fn tall(&mut self, height: u64) {
        self.metrics(height).await;
    }

    async fn metrics(&mut self, height: u64) {
        let session = self.session.clone();
        self.raw
            .send(
                Some(&session),
                "Emulation.setDeviceMetricsOverride",
                json!({"width": WIDTH, "height": height, "deviceScaleFactor": 1, "mobile": false}),
            )
            .await
            .unwrap();
    }

    /// The text of the first element matching `selector` ("" when there is none).
    pub async fn text(&mut self, selector: &str) -> String {
        self.eval(&format!(
            "document.querySelector({selector:?})?.textContent ?? ''"
        ))
        .await
        .as_str()
        .unwrap_or_default()
        .to_string()
    }

    /// Wait until the approval list shows a new one (not one already answered, which may
    /// still show for a moment), and answer its id.
    pub async fn approval(&mut self) -> u64 {
        let newer = format!(
            "[...document.querySelectorAll('#approval-list li.approval')].map((l) => +l.dataset.id).find((id) => id > {})",
            self.last_approval
        );
        let id = self
            .until("a new approval in the side panel", &newer)
            .await
            .as_u64()
            .expect("an approval id");
        self.last_approval = id;
        id
    }
}

/// Click where `selector` is on screen right now, as a person already aiming there does: no
/// wait for it to take clicks, no scrolling. Answers how many ms before the click the page
/// last saw a layout change that `watch_moves` records (`None` when it saw none).
pub async fn click_at_once(panel: &mut Panel, selector: &str) -> Option<f64> {
    let at = panel
        .eval(&format!("(() => {{ const r = document.querySelector({selector:?}).getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2, window.__moved === undefined ? null : performance.now() - window.__moved]; }})()"))
        .await;
    let (x, y) = (at[0].as_f64().unwrap(), at[1].as_f64().unwrap());
    for kind in ["mousePressed", "mouseReleased"] {
        let session = panel.session.clone();
        panel
            .raw
            .send(
                Some(&session),
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            )
            .await
            .unwrap();
    }
    at[2].as_f64()
}

/// Record in the page when the elements matching `selector` last changed (children added
/// or removed): `click_at_once` tells how long before its click that was.
pub async fn watch_moves(panel: &mut Panel, selector: &str) {
    panel
        .eval(&format!("(() => {{ const o = new MutationObserver(() => {{ window.__moved = performance.now(); }}); for (const e of document.querySelectorAll({selector:?})) o.observe(e, {{childList: true, subtree: true}}); return true; }})()"))
        .await;
}

/// A script for `Page.addScriptToEvaluateOnNewDocument`: `window.__armed` lists every control
/// that loosens or grants as it first shows, `id:late` (not taking clicks yet) or `id:live`.
pub const RECORD_ARMING: &str = "window.__armed = []; new MutationObserver((rs) => { for (const r of rs) for (const n of r.addedNodes) { if (!(n instanceof Element)) continue; for (const e of [n, ...n.querySelectorAll('[data-arm]')]) if (e.matches('[data-arm]')) __armed.push(e.id + (e.disabled ? ':late' : ':live')); } }).observe(document, {childList: true, subtree: true});";
