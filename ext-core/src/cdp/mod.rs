//! How Kapture drives a page, written once against the small [`CdpSession`] trait: the
//! extension implements it with `chrome.debugger`, anything else may with a CDP socket.

pub mod events;
pub mod js;
pub mod keys;

use std::cell::RefCell;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};

pub use events::TabEvents;

use crate::methods::{
    ActionOutcome, Captured, Click, ConsoleLog, ConsoleMessages, Evaluate, Evaluated, Hover,
    ImageType, MouseButton, PageInfo, PressKey, Screenshot, SelectOption, Selected, Type,
};
use crate::platform;
use crate::protocol::{ErrorCode, TabId, WireError};

/// How long element tools wait for their element to exist and become actionable.
pub const ACTIONABLE_WAIT_MS: u64 = 1500;
/// Full-page screenshots are cut at this height (CSS pixels) to bound their size.
pub const MAX_CAPTURE_HEIGHT: f64 = 16_384.0;
/// Longest wait for a navigation an action started (the action itself already happened).
const SETTLE_LIMIT_MS: f64 = 10_000.0;
/// How often a load wait is retried when the document is replaced under it (redirects).
const LOAD_RETRIES: usize = 5;

/// One attached tab: send CDP commands, and see its events through [`TabEvents`].
#[allow(async_fn_in_trait)] // single-threaded on wasm32; no Send bound wanted
pub trait CdpSession {
    fn tab_id(&self) -> TabId;
    /// Send one CDP command; failures are already classified into wire errors.
    async fn send(&self, method: &str, params: Value) -> Result<Value, WireError>;
    /// The tab's event bookkeeping, fed by the session's event source.
    fn events(&self) -> &RefCell<TabEvents>;
}

/// The number at `pointer` in `v`, or 0.
fn num(v: &Value, pointer: &str) -> f64 {
    v.pointer(pointer).and_then(Value::as_f64).unwrap_or(0.0)
}

/// Map a browser or CDP failure message to its error code.
pub fn classify_failure(message: &str) -> ErrorCode {
    let m = message.to_ascii_lowercase();
    if m.contains("no tab with") || m.contains("no target with given id") {
        ErrorCode::TabNotFound
    } else if m.contains("another debugger is already attached") {
        ErrorCode::DebuggerConflict
    } else if m.contains("cannot access")
        || m.contains("cannot attach to this target")
        || m.contains("cannot be scripted")
        || m.contains("chrome-extension://")
    {
        ErrorCode::UnsupportedPage
    } else if m.contains("detached while handling")
        || m.contains("target closed")
        || m.contains("debugger is not attached")
        || m.contains("tab was closed")
    {
        ErrorCode::TabClosed
    } else {
        ErrorCode::Internal
    }
}

/// A document was replaced while we spoke to it (navigation or redirect).
fn context_gone(err: &WireError) -> bool {
    let m = err.message.to_ascii_lowercase();
    m.contains("execution context was destroyed")
        || m.contains("cannot find context")
        || m.contains("inspected target navigated")
}

/// Turn on the event domains the tools rely on; called once after attaching.
pub async fn prepare<S: CdpSession>(s: &S) -> Result<(), WireError> {
    s.send("Page.enable", json!({})).await?;
    s.send("Runtime.enable", json!({})).await?;
    s.send("Log.enable", json!({})).await?;
    let tree = s.send("Page.getFrameTree", json!({})).await?;
    if let Some(id) = tree.pointer("/frameTree/frame/id").and_then(Value::as_str) {
        s.events().borrow_mut().set_main_frame(id.to_string());
    }
    Ok(())
}

/// Evaluate `expression` in the page and return its JSON value (`None` for `undefined`).
/// A page exception becomes `EVAL_FAILED` carrying the page's message.
pub async fn eval<S: CdpSession>(s: &S, expression: &str) -> Result<Option<Value>, WireError> {
    let res = s
        .send(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true, "userGesture": true}),
        )
        .await?;
    if let Some(details) = res.get("exceptionDetails") {
        let text = events::exception_text(details);
        return Err(WireError::new(
            ErrorCode::EvalFailed,
            format!("page script threw: {text}"),
        ));
    }
    let result = res.get("result").cloned().unwrap_or(Value::Null);
    if let Some(unser) = result.get("unserializableValue").and_then(Value::as_str) {
        return Ok(Some(Value::String(unser.to_string())));
    }
    match result.get("type").and_then(Value::as_str) {
        Some("undefined") => Ok(None),
        _ => Ok(Some(result.get("value").cloned().unwrap_or(Value::Null))),
    }
}

/// Call one of our own page scripts; an `{error, message}` answer becomes a wire error.
async fn run_script<S: CdpSession>(
    s: &S,
    function: &str,
    args: &[Value],
) -> Result<Value, WireError> {
    let value = eval(s, &js::call(function, args))
        .await
        .map_err(|e| {
            if e.code == ErrorCode::EvalFailed {
                WireError::new(ErrorCode::Internal, e.message)
            } else {
                e
            }
        })?
        .unwrap_or(Value::Null);
    if let Some(code) = value.get("error").and_then(Value::as_str) {
        let code: ErrorCode = serde_json::from_value(json!(code)).unwrap_or(ErrorCode::Internal);
        let message = value
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or(code.as_str());
        return Err(WireError::new(code, message));
    }
    Ok(value)
}

fn check_url(url: &str) -> Result<(), WireError> {
    let lower = url.trim().to_ascii_lowercase();
    let allowed = ["http://", "https://", "about:blank", "data:"];
    if allowed.iter().any(|p| lower.starts_with(p)) {
        Ok(())
    } else {
        Err(WireError::new(
            ErrorCode::BadArgs,
            format!("cannot navigate to {url:?}: only http(s) URLs (and about:blank, data:) are allowed; write the full URL, e.g. https://example.com/"),
        ))
    }
}

/// Await a commit (or its cancellation), bounded so a missing event cannot hang a command.
async fn await_commit(
    rx: futures::channel::oneshot::Receiver<(String, Value)>,
    limit: Duration,
) -> Result<(), WireError> {
    match platform::timeout(limit, rx).await {
        Some(Ok(_)) | None => Ok(()),
        Some(Err(_)) => Err(WireError::new(
            ErrorCode::TabClosed,
            "the tab went away during navigation",
        )),
    }
}

/// Wait until the current document has loaded, following documents that replace it.
pub async fn wait_for_load<S: CdpSession>(s: &S) -> Result<(), WireError> {
    let mut last = None;
    for _ in 0..LOAD_RETRIES {
        match eval(s, &js::call(js::WAIT_FOR_LOAD, &[])).await {
            Ok(_) => return Ok(()),
            Err(e) if context_gone(&e) => {
                last = Some(e);
                // The next document needs a moment to get an execution context.
                let rx = s.events().borrow_mut().wait_for_commit();
                await_commit(rx, Duration::from_millis(500)).await?;
            }
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| WireError::new(ErrorCode::Timeout, "the page kept navigating")))
}

/// URL, title and HTTP status of the page as it is now.
pub async fn page_info<S: CdpSession>(s: &S) -> Result<PageInfo, WireError> {
    #[derive(Deserialize)]
    struct Raw {
        url: String,
        title: String,
        status: Option<u16>,
    }
    let mut last = None;
    for _ in 0..LOAD_RETRIES {
        match run_script(s, js::PAGE_INFO, &[]).await {
            Ok(v) => {
                let raw: Raw = serde_json::from_value(v)
                    .map_err(|e| WireError::new(ErrorCode::Internal, format!("page info: {e}")))?;
                return Ok(PageInfo {
                    tab_id: s.tab_id(),
                    url: raw.url,
                    title: raw.title,
                    status: raw.status,
                });
            }
            Err(e) if context_gone(&e) => {
                last = Some(e);
                wait_for_load(s).await?;
            }
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| WireError::new(ErrorCode::Internal, "no page info")))
}

/// Load `url` in the tab and wait for it.
pub async fn navigate<S: CdpSession>(s: &S, url: &str) -> Result<PageInfo, WireError> {
    check_url(url)?;
    let commit = s.events().borrow_mut().wait_for_commit();
    let res = s.send("Page.navigate", json!({"url": url})).await?;
    if let Some(err) = res
        .get("errorText")
        .and_then(Value::as_str)
        .filter(|e| !e.is_empty())
    {
        return Err(WireError::new(
            ErrorCode::NavigationFailed,
            format!("could not load {url}: {err}"),
        ));
    }
    if res.get("loaderId").is_some() {
        await_commit(commit, Duration::from_secs(10)).await?;
    }
    wait_for_load(s).await?;
    page_info(s).await
}

/// Move `delta` entries through the tab's history (-1 back, +1 forward) and wait for the load.
pub async fn history<S: CdpSession>(s: &S, delta: i64) -> Result<PageInfo, WireError> {
    let hist = s.send("Page.getNavigationHistory", json!({})).await?;
    let current = hist
        .get("currentIndex")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let entries = hist
        .get("entries")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let target = usize::try_from(current + delta)
        .ok()
        .and_then(|i| entries.get(i));
    let Some(entry_id) = target.and_then(|e| e.get("id")).and_then(Value::as_i64) else {
        let which = if delta < 0 { "previous" } else { "next" };
        return Err(WireError::new(
            ErrorCode::BadArgs,
            format!("there is no {which} page in this tab's history"),
        ));
    };
    let commit = s.events().borrow_mut().wait_for_commit();
    s.send("Page.navigateToHistoryEntry", json!({"entryId": entry_id}))
        .await?;
    await_commit(commit, Duration::from_secs(10)).await?;
    wait_for_load(s).await?;
    page_info(s).await
}

/// Reload the tab and wait for the load.
pub async fn reload<S: CdpSession>(s: &S) -> Result<PageInfo, WireError> {
    let commit = s.events().borrow_mut().wait_for_commit();
    s.send("Page.reload", json!({})).await?;
    await_commit(commit, Duration::from_secs(10)).await?;
    wait_for_load(s).await?;
    page_info(s).await
}

/// After an input action: if it started a main-frame navigation, wait (bounded) for that
/// load to finish, then report where the page is.
async fn settle<S: CdpSession>(s: &S, navigations_before: u64) -> Result<ActionOutcome, WireError> {
    // One round trip lets the events the action caused arrive before we look at them.
    let first = page_info(s).await;
    let navigated = s.events().borrow().navigations_started() > navigations_before;
    let info = if navigated {
        let deadline = platform::now_ms() + SETTLE_LIMIT_MS;
        loop {
            let stopped = s.events().borrow_mut().wait_for_stop();
            let remaining = deadline - platform::now_ms();
            if !s.events().borrow().loading() || remaining <= 0.0 {
                break;
            }
            if let Some(Err(_)) =
                platform::timeout(Duration::from_millis(remaining as u64), stopped).await
            {
                return Err(WireError::new(
                    ErrorCode::TabClosed,
                    "the tab went away during navigation",
                ));
            }
        }
        page_info(s).await?
    } else {
        first?
    };
    Ok(ActionOutcome {
        tab_id: s.tab_id(),
        navigated,
        url: info.url,
        title: info.title,
    })
}

#[derive(Deserialize)]
struct Point {
    x: f64,
    y: f64,
}

async fn locate<S: CdpSession>(s: &S, selector: &str) -> Result<Point, WireError> {
    let v = run_script(
        s,
        &js::with_find(js::LOCATE),
        &[json!(selector), json!(ACTIONABLE_WAIT_MS)],
    )
    .await?;
    serde_json::from_value(v)
        .map_err(|e| WireError::new(ErrorCode::Internal, format!("locate: {e}")))
}

async fn mouse<S: CdpSession>(s: &S, kind: &str, p: &Point, extra: Value) -> Result<(), WireError> {
    let mut params = json!({"type": kind, "x": p.x, "y": p.y});
    if let (Some(obj), Value::Object(more)) = (params.as_object_mut(), extra) {
        obj.extend(more);
    }
    s.send("Input.dispatchMouseEvent", params).await.map(drop)
}

/// A trusted click at the element's centre after scrolling it into view.
pub async fn click<S: CdpSession>(s: &S, p: &Click) -> Result<ActionOutcome, WireError> {
    let before = s.events().borrow().navigations_started();
    let at = locate(s, &p.selector).await?;
    let button = match p.button {
        MouseButton::Left => "left",
        MouseButton::Right => "right",
        MouseButton::Middle => "middle",
    };
    let modifiers = keys::modifier_mask(&p.modifiers);
    mouse(s, "mouseMoved", &at, json!({"modifiers": modifiers})).await?;
    let clicks: &[u32] = if p.double_click { &[1, 2] } else { &[1] };
    for &count in clicks {
        let extra = json!({"button": button, "clickCount": count, "modifiers": modifiers});
        mouse(s, "mousePressed", &at, extra.clone()).await?;
        mouse(s, "mouseReleased", &at, extra).await?;
    }
    settle(s, before).await
}

/// Move the mouse over the element's centre.
pub async fn hover<S: CdpSession>(s: &S, p: &Hover) -> Result<ActionOutcome, WireError> {
    let before = s.events().borrow().navigations_started();
    let at = locate(s, &p.selector).await?;
    mouse(s, "mouseMoved", &at, json!({})).await?;
    settle(s, before).await
}

async fn key_event<S: CdpSession>(
    s: &S,
    kind: &str,
    key: &keys::KeyDef,
    modifiers: u32,
) -> Result<(), WireError> {
    // With Ctrl/Alt/Meta held a key is a shortcut and types no text.
    let text = key.text.as_ref().filter(|_| modifiers & 0b0111 == 0);
    let kind = if kind == "keyDown" && text.is_none() {
        "rawKeyDown"
    } else {
        kind
    };
    let mut params = json!({
        "type": kind, "key": key.key, "code": key.code, "modifiers": modifiers,
        "windowsVirtualKeyCode": key.key_code, "nativeVirtualKeyCode": key.key_code,
    });
    if let (Some(text), "keyDown", Some(obj)) = (text, kind, params.as_object_mut()) {
        obj.insert("text".into(), json!(text));
        obj.insert("unmodifiedText".into(), json!(text));
    }
    s.send("Input.dispatchKeyEvent", params).await.map(drop)
}

async fn press_chord<S: CdpSession>(s: &S, chord: &keys::Chord) -> Result<(), WireError> {
    let mut held = 0;
    for m in &chord.modifiers {
        held |= keys::modifier_bit(*m);
        key_event(s, "keyDown", &keys::modifier_key(*m), held).await?;
    }
    key_event(s, "keyDown", &chord.key, held).await?;
    key_event(s, "keyUp", &chord.key, held).await?;
    for m in chord.modifiers.iter().rev() {
        held &= !keys::modifier_bit(*m);
        key_event(s, "keyUp", &keys::modifier_key(*m), held).await?;
    }
    Ok(())
}

/// Press a key or a combination on whatever has focus.
pub async fn press_key<S: CdpSession>(s: &S, p: &PressKey) -> Result<ActionOutcome, WireError> {
    let chord = keys::parse_chord(&p.key)?;
    let before = s.events().borrow().navigations_started();
    press_chord(s, &chord).await?;
    settle(s, before).await
}

/// Fill a field as a user would: focus, replace the content, fire input and change events.
pub async fn type_text<S: CdpSession>(s: &S, p: &Type) -> Result<ActionOutcome, WireError> {
    let before = s.events().borrow().navigations_started();
    let prep = run_script(
        s,
        &js::with_find(js::PREPARE_TYPE),
        &[json!(p.selector), json!(ACTIONABLE_WAIT_MS), json!(p.text)],
    )
    .await?;
    if prep.get("mode").and_then(Value::as_str) == Some("insert") {
        let was_empty = prep.get("empty").and_then(Value::as_bool).unwrap_or(false);
        if p.text.is_empty() || p.slowly {
            if !was_empty {
                let backspace = keys::parse_chord("Backspace")?;
                press_chord(s, &backspace).await?;
            }
            if p.slowly {
                for c in p.text.chars() {
                    let key = keys::char_key(c);
                    key_event(s, "keyDown", &key, 0).await?;
                    key_event(s, "keyUp", &key, 0).await?;
                }
            }
        } else {
            s.send("Input.insertText", json!({"text": p.text})).await?;
        }
        run_script(s, js::DISPATCH_CHANGE, &[]).await?;
    }
    if p.submit {
        press_chord(s, &keys::parse_chord("Enter")?).await?;
    }
    settle(s, before).await
}

/// Choose options of a `<select>` by value or label.
pub async fn select_option<S: CdpSession>(s: &S, p: &SelectOption) -> Result<Selected, WireError> {
    if p.values.is_empty() {
        return Err(WireError::new(
            ErrorCode::BadArgs,
            "values is empty: name at least one option",
        ));
    }
    let v = run_script(
        s,
        &js::with_find(js::SELECT_OPTIONS),
        &[
            json!(p.selector),
            json!(ACTIONABLE_WAIT_MS),
            json!(p.values),
        ],
    )
    .await?;
    let values = v
        .get("values")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default();
    Ok(Selected {
        tab_id: s.tab_id(),
        values,
    })
}

/// Does this source look like a function rather than an expression?
pub fn is_function_source(src: &str) -> bool {
    let t = src.trim_start();
    t.starts_with("function")
        || t.starts_with("async ")
        || t.starts_with("async(")
        || (t.starts_with('(') && arrow_after_params(t))
        || t.split_once("=>").is_some_and(|(head, _)| {
            let head = head.trim();
            !head.is_empty()
                && head
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
        })
}

fn arrow_after_params(t: &str) -> bool {
    let mut depth = 0usize;
    for (i, c) in t.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return t[i + 1..].trim_start().starts_with("=>");
                }
            }
            _ => {}
        }
    }
    false
}

/// Run an agent's expression or function in the page; the result comes back as JSON.
pub async fn evaluate<S: CdpSession>(s: &S, p: &Evaluate) -> Result<Evaluated, WireError> {
    if p.function.trim().is_empty() {
        return Err(WireError::new(
            ErrorCode::BadArgs,
            "function is empty: pass an expression or a function such as () => document.title",
        ));
    }
    let source = if is_function_source(&p.function) {
        format!("({})()", p.function)
    } else {
        p.function.clone()
    };
    let value = eval(s, &source).await?;
    Ok(Evaluated {
        tab_id: s.tab_id(),
        value,
    })
}

/// Capture the viewport, the whole page, or one element.
pub async fn screenshot<S: CdpSession>(s: &S, p: &Screenshot) -> Result<Captured, WireError> {
    let (format, mime) = match p.image_type {
        ImageType::Png => ("png", "image/png"),
        ImageType::Jpeg => ("jpeg", "image/jpeg"),
    };
    let mut params = json!({"format": format});
    if p.image_type == ImageType::Jpeg {
        params["quality"] = json!(80);
    }
    // A clip is in page CSS pixels; a full page or an element may extend past the viewport.
    let clip_of = |x: f64, y: f64, w: f64, h: f64| json!({"x": x, "y": y, "width": w, "height": h, "scale": 1});
    let (clip, width, height) = if let Some(selector) = &p.selector {
        let wait = json!(ACTIONABLE_WAIT_MS);
        let r = run_script(
            s,
            &js::with_find(js::ELEMENT_CLIP),
            &[json!(selector), wait],
        )
        .await?;
        let (w, h) = (
            num(&r, "/width"),
            num(&r, "/height").min(MAX_CAPTURE_HEIGHT),
        );
        (Some(clip_of(num(&r, "/x"), num(&r, "/y"), w, h)), w, h)
    } else {
        let m = s.send("Page.getLayoutMetrics", json!({})).await?;
        if p.full_page {
            let w = num(&m, "/cssContentSize/width");
            let h = num(&m, "/cssContentSize/height").min(MAX_CAPTURE_HEIGHT);
            (Some(clip_of(0.0, 0.0, w, h)), w, h)
        } else {
            let (w, h) = (
                num(&m, "/cssVisualViewport/clientWidth"),
                num(&m, "/cssVisualViewport/clientHeight"),
            );
            (None, w, h)
        }
    };
    if let Some(clip) = clip {
        params["clip"] = clip;
        params["captureBeyondViewport"] = json!(true);
    }
    let res = s.send("Page.captureScreenshot", params).await?;
    let data = res
        .get("data")
        .and_then(Value::as_str)
        .ok_or_else(|| WireError::new(ErrorCode::Internal, "the browser returned no image"))?;
    Ok(Captured {
        tab_id: s.tab_id(),
        data: data.to_string(),
        mime_type: mime.to_string(),
        width: width.round() as u32,
        height: height.round() as u32,
    })
}

/// The tab's collected console messages, newest first.
pub fn console_messages<S: CdpSession>(s: &S, p: &ConsoleMessages) -> ConsoleLog {
    let max = p.max.unwrap_or(100).min(events::CONSOLE_CAPACITY as u32) as usize;
    let (messages, total) = s.events().borrow().console(p.level, max);
    ConsoleLog {
        tab_id: s.tab_id(),
        messages,
        total: total as u32,
    }
}

#[cfg(test)]
mod tests;
