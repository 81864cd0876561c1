//! Reduced mode, the executor's third transport: a browser that did not grant the extension
//! the `debugger` permission is reached with `chrome.scripting` alone. Kapture's page script
//! (prelude and walker, packaged as [`PAGE_FILE`]) runs in the extension's isolated world
//! of the main frame; input is untrusted DOM events, each at a point the policy judged
//! first (the same hit test, the same frame rules); what needs the debugger answers
//! `UNSUPPORTED` with the reason and what to do instead.

use std::cell::RefCell;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};

use super::Host;
use crate::cdp::{self, TabEvents};
use crate::methods::{
    ActionOutcome, Click, Command, ElementTarget, MouseButton, PageInfo, Snapshot, Text, Type,
};
use crate::platform;
use crate::policy::Category;
use crate::protocol::{ErrorCode, TabId, WireError};
use crate::snapshot::{self, FrameKey, Page, RenderOptions};

/// The page script the extension packages for reduced mode (assembled by
/// `scripts/build-extension.sh` from the prelude, the walker and `reduced_page.js`).
pub const PAGE_FILE: &str = "reduced_page.js";

/// The frame key of the main frame: the only frame reduced mode reaches.
const MAIN: &str = "main";

/// Longest wait for a navigation to load, and for one an action started.
const LOAD_LIMIT_MS: f64 = 15_000.0;
/// Pause between two looks at a loading tab.
const LOAD_POLL: Duration = Duration::from_millis(50);
/// How long after an action a navigation it started is looked for.
const SETTLE_MS: f64 = 150.0;
/// How long a navigation may take to show as loading (a same-document one never does).
const NAVIGATE_START_MS: f64 = 1_000.0;

/// The refusal of a tool that needs the debugger, with what to do instead.
pub fn needs_debugger(what: &str) -> WireError {
    WireError::new(
        ErrorCode::Unsupported,
        format!(
            "{what} needs the browser's debugger, which this browser has not granted Kapture: \
             it runs in reduced mode (chrome.scripting, untrusted input; navigate, snapshot, \
             click and type work). Grant the extension its `debugger` permission (load it with \
             its full manifest), or use the native engine (`kapture --browser launch` or \
             `--browser cdp`)"
        ),
    )
}

/// What the page says of its document, with every answer.
#[derive(Debug, Deserialize)]
struct Here {
    url: String,
    origin: String,
    /// A random id the page script gives each document (refs are per document).
    doc: String,
    #[serde(default)]
    title: String,
}

/// Run one tab command in reduced mode. The gate judged it before (as on every transport);
/// what it reaches as it runs (the document now, the frame under a pointer) is judged here
/// with the command's judge (`events.judge`).
pub async fn run<H: Host>(
    host: &H,
    tab: TabId,
    events: &RefCell<TabEvents>,
    command: &Command,
) -> Result<Value, WireError> {
    let page = Tab { host, tab, events };
    let value = match command {
        Command::Navigate(p) => json!(page.navigate(&p.url).await?),
        Command::Snapshot(p) => json!(page.snapshot(p).await?),
        Command::Click(p) => json!(page.click(p).await?),
        Command::Type(p) => json!(page.type_text(p).await?),
        other => {
            let facts = other.facts();
            return Err(needs_debugger(facts.tool.unwrap_or(facts.name)));
        }
    };
    Ok(value)
}

/// One tab reached by page scripts.
struct Tab<'a, H: Host> {
    host: &'a H,
    tab: TabId,
    events: &'a RefCell<TabEvents>,
}

impl<H: Host> Tab<'_, H> {
    /// Call a page function; its `{here, value}` answer updates what is known of the
    /// document, an `{error, message}` one becomes a wire error.
    async fn call(&self, function: &str, args: Vec<Value>) -> Result<(Here, Value), WireError> {
        let raw = self.host.page_call(self.tab, function, args).await?;
        let raw = cdp::world::coded(raw)?;
        let here: Here = serde_json::from_value(raw.get("here").cloned().unwrap_or_default())
            .map_err(|e| WireError::new(ErrorCode::Internal, format!("page script: {e}")))?;
        self.learn(&here);
        Ok((here, raw.get("value").cloned().unwrap_or(Value::Null)))
    }

    /// Record the main frame's current document, as CDP's frame events would.
    fn learn(&self, here: &Here) {
        let mut state = self.events.borrow_mut();
        state.set_main_frame(MAIN.to_string());
        let origin = (here.origin != "null").then_some(here.origin.as_str());
        state.frame_seen(MAIN, &here.doc, &here.url, origin, None);
        state.main_url = Some(here.url.clone());
    }

    /// The running command may act (or read) in the main frame's current document.
    fn judge_main(&self) -> Result<(), WireError> {
        cdp::world::judge_landing(self.events, MAIN, None)
    }

    /// The running command may act where its input lands: the main document, and the
    /// document of the iframe element under the point when it lands on one.
    fn judge_landing(&self, inner: Option<&str>) -> Result<(), WireError> {
        cdp::world::judge_landing(self.events, MAIN, inner)
    }

    async fn navigate(&self, url: &str) -> Result<PageInfo, WireError> {
        self.host.start_load(self.tab, url).await?;
        self.settle(NAVIGATE_START_MS).await;
        self.page_info(true).await
    }

    /// Wait (bounded) for a load of the tab: one seen under way to end, or, when none is
    /// seen within `start_ms` (an action that starts none), no longer.
    async fn settle(&self, start_ms: f64) {
        let start = platform::now_ms();
        let mut seen = false;
        while platform::now_ms() < start + LOAD_LIMIT_MS {
            match self.host.loading(self.tab).await {
                Ok(true) => seen = true,
                Ok(false) if !seen && platform::now_ms() < start + start_ms => {}
                _ => break,
            }
            platform::sleep(LOAD_POLL).await;
        }
    }

    /// The page's URL and title. `judged`: a page the command may not reach (a redirect to
    /// a refused origin) is refused; else a page it may not read is named by its origin
    /// alone. A page no script reaches (about:blank, a browser page) is named by the
    /// browser's tab.
    async fn page_info(&self, judged: bool) -> Result<PageInfo, WireError> {
        match self.call("here", vec![]).await {
            Ok((here, _)) => {
                if judged {
                    self.judge_main()?;
                }
                let unreadable = {
                    let state = self.events.borrow();
                    let judge = state.judge.as_ref();
                    judge.is_some_and(|j| j.check(Category::Read, &state.judged(MAIN)).is_err())
                };
                let (url, title) = if unreadable {
                    (here.origin, String::new())
                } else {
                    (here.url, here.title)
                };
                Ok(PageInfo {
                    tab_id: self.tab,
                    url,
                    title,
                    status: None,
                    notes: Vec::new(),
                })
            }
            Err(e) if e.code == ErrorCode::UnsupportedPage => {
                let tab = self.host.tab(self.tab).await?;
                Ok(PageInfo {
                    tab_id: self.tab,
                    url: tab.url,
                    title: tab.title,
                    status: None,
                    notes: Vec::new(),
                })
            }
            Err(e) => Err(e),
        }
    }

    async fn snapshot(&self, p: &Snapshot) -> Result<Text, WireError> {
        let root = match p.target.get() {
            Some(t) => self.locate(&t)?,
            None => Value::Null,
        };
        let (here, walked) = self.call("walk", vec![root.clone()]).await?;
        self.judge_main()?;
        let walk = cdp::walk_of(&walked)?;
        let page = Page::from_walk(
            walk,
            FrameKey {
                frame_id: MAIN.to_string(),
                loader_id: here.doc.clone(),
            },
        );
        let root_idx = (!root.is_null())
            .then(|| page.roots.first().copied())
            .flatten();
        let (max_chars, offset) = cdp::budget(&p.budget);
        let max_chars = max_chars.max(cdp::SNAPSHOT_MIN_CHARS);
        let opts = RenderOptions {
            max_chars,
            depth: p.depth,
            interactive_only: p.interactive_only,
            offset,
            ..RenderOptions::default()
        };
        let frames = !page.iframes(0).is_empty();
        let mut state = self.events.borrow_mut();
        let out = snapshot::render(&page, root_idx, &mut state.refs, &opts);
        let mut text = if p.diff {
            snapshot::diff_text(&snapshot::diff(&state.last_snapshot, &out.lines), max_chars)
        } else {
            out.text
        };
        if root.is_null() && offset == 0 && !p.interactive_only && p.depth.is_none() {
            state.last_snapshot = out.lines;
        }
        if frames {
            text.push_str(
                "\n(reduced mode: the contents of frames are not read; the main document is)",
            );
        }
        Ok(Text {
            tab_id: self.tab,
            text,
            cut: out.cut,
            refs: out.refs,
        })
    }

    /// A ref (of this document) or a selector, as the page script's `resolve` takes it.
    fn locate(&self, t: &ElementTarget) -> Result<Value, WireError> {
        match (&t.element_ref, &t.selector) {
            (Some(r), None) => {
                let state = self.events.borrow();
                let target = state.refs.resolve(r, |frame| state.frame_loader(frame))?;
                Ok(json!({"id": target.local, "ref": r.trim()}))
            }
            (None, Some(sel)) if !sel.trim().is_empty() => Ok(json!({"sel": sel})),
            (None, Some(_)) => Err(WireError::new(ErrorCode::BadArgs, "selector is empty")),
            _ => Err(WireError::new(
                ErrorCode::BadArgs,
                "name the element with exactly one of `ref` (from browser_snapshot) or `selector`",
            )),
        }
    }

    /// Aim at an element as a person's pointer would (scrolled into view, not covered),
    /// judge where that lands, and answer the judged point.
    async fn aim(&self, target: &Value) -> Result<(f64, f64), WireError> {
        let (_, aim) = self
            .call("aim", vec![target.clone(), json!(cdp::ACTIONABLE_WAIT_MS)])
            .await?;
        let at = |k: &str| aim.get(k).and_then(Value::as_f64).unwrap_or(0.0);
        // A frame of another origin does not say which document it shows now: where the
        // input would land cannot be judged.
        if aim.get("innerUnknown").and_then(Value::as_bool) == Some(true) {
            return Err(needs_debugger(
                "input that lands in a frame of another origin",
            ));
        }
        self.judge_landing(aim.get("inner").and_then(Value::as_str))?;
        Ok((at("x"), at("y")))
    }

    async fn click(&self, p: &Click) -> Result<ActionOutcome, WireError> {
        if p.button != MouseButton::Left || !p.modifiers.is_empty() {
            return Err(needs_debugger(
                "a click with another button or modifier keys",
            ));
        }
        let target = self.locate(&p.target)?;
        let (x, y) = self.aim(&target).await?;
        let before = self.events.borrow().frame_loader(MAIN);
        self.call(
            "press",
            vec![target, json!(x), json!(y), json!(p.double_click)],
        )
        .await?;
        self.outcome(before, Vec::new()).await
    }

    async fn type_text(&self, p: &Type) -> Result<ActionOutcome, WireError> {
        let target = self.locate(&p.target)?;
        self.aim(&target).await?;
        let before = self.events.borrow().frame_loader(MAIN);
        let (_, typed) = self
            .call(
                "typeIn",
                vec![target, json!(p.text), json!(p.submit), json!(p.only_on)],
            )
            .await?;
        let secret = typed.get("secret").and_then(Value::as_bool) == Some(true);
        self.outcome(before, if secret { vec![0] } else { Vec::new() })
            .await
    }

    /// The page after an action: a navigation it started waited for (bounded).
    async fn outcome(
        &self,
        before: Option<String>,
        confidential: Vec<usize>,
    ) -> Result<ActionOutcome, WireError> {
        self.settle(SETTLE_MS).await;
        let loading = self.host.loading(self.tab).await.unwrap_or(false);
        let info = self.page_info(false).await?;
        let now = self.events.borrow().frame_loader(MAIN);
        Ok(ActionOutcome {
            tab_id: self.tab,
            navigated: now != before,
            url: info.url,
            title: info.title,
            loading,
            file_chooser: false,
            confidential,
        })
    }
}
