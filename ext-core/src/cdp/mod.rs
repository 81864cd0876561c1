//! How Kapture drives a page, written once against the small [`CdpSession`] trait: the
//! extension implements it with `chrome.debugger`, anything else may with a CDP socket.

mod dialog;
pub mod events;
mod goto;
mod hide;
mod input;
pub mod js;
pub mod keys;
mod login;
mod more;
pub mod navigation;
pub mod pick;
mod read;
mod recorder;
pub mod world;

use std::cell::RefCell;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{json, Value};

pub use dialog::{blocked_by_dialog, dialog_error, handle_dialog};
pub use events::TabEvents;
pub use goto::{history, navigate, reload};
pub use hide::{print_pdf, screenshot};
pub use input::{click, fill_form, hover, press_key, select_option, type_text};
pub use login::{login_read, login_write};
pub use more::{
    cookies, drag, emulate, file_upload, highlight, mouse_click_xy, mouse_move_xy, network_request,
    network_requests, resize, scroll, storage,
};
pub(crate) use read::{budget, walk_of};
pub use read::{
    evaluate, extract_links, find, get_html, get_text, is_function_source, read_markdown, snapshot,
    wait_for, SNAPSHOT_MIN_CHARS,
};
pub use recorder::{recorder, widget_request, widget_show, WidgetOutcome};

use crate::methods::{ActionOutcome, ConsoleLog, ConsoleMessages, PageInfo, Text};
use crate::platform;
use crate::protocol::{ErrorCode, TabId, WireError};

/// How long element tools wait for their element to exist and become actionable.
pub const ACTIONABLE_WAIT_MS: u64 = 1500;
/// Full-page screenshots are cut at this height (CSS pixels) to bound their size.
pub const MAX_CAPTURE_HEIGHT: f64 = 16_384.0;
/// Longest wait for a navigation an action started (the action itself already happened).
const SETTLE_LIMIT_MS: f64 = 10_000.0;
/// Longest wait of a read (snapshot, find) for a page that is being replaced.
pub const READ_WAIT_MS: f64 = 5_000.0;
/// How often one wait may wake for navigation news before it decides with what it has.
const MAX_WAKES: usize = 1_000;
/// How often a load wait is retried when the document is replaced under it (redirects).
const LOAD_RETRIES: usize = 5;

/// One attached tab: send CDP commands, and see its events through [`TabEvents`].
#[allow(async_fn_in_trait)] // single-threaded on wasm32; no Send bound wanted
pub trait CdpSession {
    fn tab_id(&self) -> TabId;
    /// Send one CDP command to the tab (`None`), or to a child session of it (a flat session
    /// Chrome opened on an out-of-process iframe under auto-attach); failures are already
    /// classified into wire errors.
    async fn send_in(
        &self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, WireError>;
    /// Send one CDP command to the tab itself.
    async fn send(&self, method: &str, params: Value) -> Result<Value, WireError> {
        self.send_in(None, method, params).await
    }
    /// The tab's event bookkeeping, fed by the session's event source.
    fn events(&self) -> &RefCell<TabEvents>;
}

/// The number at `pointer` in `v`, or 0.
fn num(v: &Value, pointer: &str) -> f64 {
    v.pointer(pointer).and_then(Value::as_f64).unwrap_or(0.0)
}

/// CDP and browser failures that mean what a command referred to is gone or cannot take
/// input, matched (lowercase) anywhere in the message, with the code that fits and what to
/// tell the agent. The first match wins; anything not here stays `INTERNAL`.
pub const FAILURES: &[(&str, ErrorCode, &str)] = &[
    ("no tab with", ErrorCode::TabNotFound, "the tab is gone"),
    (
        "no target with given id",
        ErrorCode::TabNotFound,
        "the tab is gone",
    ),
    (
        "another debugger is already attached",
        ErrorCode::DebuggerConflict,
        "another debugger holds the tab",
    ),
    (
        "cannot access",
        ErrorCode::UnsupportedPage,
        "the page cannot be controlled",
    ),
    (
        "cannot attach to this target",
        ErrorCode::UnsupportedPage,
        "the page cannot be controlled",
    ),
    (
        "cannot be scripted",
        ErrorCode::UnsupportedPage,
        "the page cannot be controlled",
    ),
    (
        "chrome-extension://",
        ErrorCode::UnsupportedPage,
        "the page cannot be controlled",
    ),
    (
        "detached while handling",
        ErrorCode::TabClosed,
        "the tab closed while the command ran",
    ),
    (
        "target closed",
        ErrorCode::TabClosed,
        "the tab closed while the command ran",
    ),
    (
        "debugger is not attached",
        ErrorCode::TabClosed,
        "the tab closed while the command ran",
    ),
    (
        "tab was closed",
        ErrorCode::TabClosed,
        "the tab closed while the command ran",
    ),
    ("target crashed", ErrorCode::PageCrashed, "the page crashed"),
    // The frame, document or element of a ref (or of a world Kapture made) went away: the
    // page navigated or changed under the command.
    (
        "no frame for given id",
        ErrorCode::RefStale,
        "the element's frame is gone: the page changed",
    ),
    (
        // A child session (an out-of-process frame's) Chrome closed before we heard of it.
        "session with given id not found",
        ErrorCode::RefStale,
        "the element's frame is gone: the page changed",
    ),
    (
        "frame with the given id was not found",
        ErrorCode::RefStale,
        "the element's frame is gone: the page changed",
    ),
    (
        "cannot find context with specified id",
        ErrorCode::RefStale,
        "the element's document is gone: the page navigated",
    ),
    (
        "execution context was destroyed",
        ErrorCode::RefStale,
        "the element's document is gone: the page navigated",
    ),
    (
        "inspected target navigated or closed",
        ErrorCode::RefStale,
        "the element's document is gone: the page navigated",
    ),
    (
        "no node with given id",
        ErrorCode::RefStale,
        "the element is no longer in the page",
    ),
    (
        "could not find node with given id",
        ErrorCode::RefStale,
        "the element is no longer in the page",
    ),
    (
        "no node found for given backend id",
        ErrorCode::RefStale,
        "the element is no longer in the page",
    ),
    (
        "node with given id does not belong to the document",
        ErrorCode::RefStale,
        "the element is no longer in the page",
    ),
    (
        "node is detached from document",
        ErrorCode::RefStale,
        "the element is no longer in the page",
    ),
    (
        "could not find object with given id",
        ErrorCode::RefStale,
        "the element is no longer in the page",
    ),
    (
        "could not compute box model",
        ErrorCode::NotInteractable,
        "the element has no box on screen",
    ),
    (
        "could not compute content quads",
        ErrorCode::NotInteractable,
        "the element has no box on screen",
    ),
    (
        "node does not have a layout object",
        ErrorCode::NotInteractable,
        "the element has no box on screen",
    ),
];

/// Map a browser or CDP failure message to its error code.
pub fn classify_failure(message: &str) -> ErrorCode {
    let m = message.to_ascii_lowercase();
    // Chrome rejects a pending API call this way while it stops the service worker.
    if m == "no sw" {
        return ErrorCode::ExtensionDisconnected;
    }
    FAILURES
        .iter()
        .find(|(pattern, ..)| m.contains(pattern))
        .map_or(ErrorCode::Internal, |(_, code, _)| *code)
}

/// A rejected browser or CDP call as a coded wire error: the one place such failures get
/// their code. CDP's own JSON (`{"code":-32602,"message":"No frame for given id found"}`)
/// becomes its message; a known failure says what it means, with CDP's words kept in
/// parentheses (callers recognise a replaced document by them).
pub fn failure(raw: &str) -> WireError {
    #[derive(Deserialize)]
    struct Cdp {
        message: String,
    }
    let text = serde_json::from_str::<Cdp>(raw)
        .map(|c| c.message)
        .unwrap_or_else(|_| raw.to_string());
    let m = text.to_ascii_lowercase();
    match FAILURES.iter().find(|(pattern, ..)| m.contains(pattern)) {
        Some((_, code, meaning)) => WireError::new(*code, format!("{meaning} ({text})")),
        None => WireError::new(classify_failure(&text), text),
    }
}

/// A document was replaced while we spoke to it (navigation or redirect).
pub(crate) fn context_gone(err: &WireError) -> bool {
    let m = err.message.to_ascii_lowercase();
    m.contains("execution context was destroyed")
        || m.contains("cannot find context")
        || m.contains("inspected target navigated")
}

/// Turn on the event domains the tools rely on; called once after attaching. `viewport`:
/// the page size of a headless browser kapture launched (a person's own windows keep theirs).
pub async fn prepare<S: CdpSession>(
    s: &S,
    viewport: Option<crate::protocol::Viewport>,
) -> Result<(), WireError> {
    s.send("Page.enable", json!({})).await?;
    s.send("Runtime.enable", json!({})).await?;
    s.send("Log.enable", json!({})).await?;
    s.send(
        "Network.enable",
        json!({"maxTotalBufferSize": 10_000_000, "maxResourceBufferSize": 2_000_000}),
    )
    .await?;
    s.send("Inspector.enable", json!({})).await?;
    // Out-of-process iframes are other targets: auto-attach makes Chrome report them (and
    // open a flat session on each), so reads can tell they are there. Best effort: a
    // transport that refuses it still drives the tab.
    let _ = s
        .send(
            "Target.setAutoAttach",
            json!({"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}),
        )
        .await;
    // The page is focused as a person's foreground tab is, whatever window has the system's
    // focus (a headless browser's has none): apps that wait for focus or visibility (a
    // notebook's kernel status, autofocus, :focus styles) behave as for a person. Best
    // effort: a transport without Emulation still drives the tab.
    let _ = s
        .send(
            "Emulation.setFocusEmulationEnabled",
            json!({"enabled": true}),
        )
        .await;
    // A headless window's size includes browser UI and info bars that vary: the page is
    // given the stated viewport itself. Best effort, as above.
    if let Some(v) = viewport {
        let _ = s
            .send(
                "Emulation.setDeviceMetricsOverride",
                json!({"width": v.width, "height": v.height, "deviceScaleFactor": 0, "mobile": false}),
            )
            .await;
    }
    // The password watch in Kapture's world of every document (the current one included):
    // a page that never held a password field is not asked for values to mask in each
    // answer. Best effort: without it, every answer asks.
    let watch = s
        .send(
            "Runtime.addBinding",
            json!({"name": js::PASSWORD_BINDING, "executionContextName": world::WORLD_NAME}),
        )
        .await;
    if watch.is_ok() {
        let _ = s
            .send(
                "Page.addScriptToEvaluateOnNewDocument",
                json!({"source": js::PASSWORD_WATCH, "worldName": world::WORLD_NAME, "runImmediately": true}),
            )
            .await;
    }
    // The prelude in Kapture's world of every document from its start (the current ones
    // included): a command's first script in a new document is not sent its 11 kB. Best
    // effort: without it, a new world is sent the prelude with its first script.
    let preinstalled = s
        .send(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({"source": world::prelude_install(), "worldName": world::WORLD_NAME, "runImmediately": true}),
        )
        .await
        .is_ok();
    s.events().borrow_mut().prelude_preinstalled = preinstalled;
    // File choosers opened by the page are reported to the agent instead of a native dialog.
    s.send(
        "Page.setInterceptFileChooserDialog",
        json!({"enabled": true}),
    )
    .await?;
    world::refresh_frames(s).await.map(drop)
}

/// Evaluate `expression` in the page and return its JSON value (`None` for `undefined`).
/// A page exception becomes `EVAL_FAILED` carrying the page's message.
pub async fn eval<S: CdpSession>(s: &S, expression: &str) -> Result<Option<Value>, WireError> {
    eval_in(s, None, expression).await
}

/// [`eval`] in a given execution context (Kapture's world), or the page's main world.
pub async fn eval_in<S: CdpSession>(
    s: &S,
    context: Option<i64>,
    expression: &str,
) -> Result<Option<Value>, WireError> {
    eval_in_session(s, None, context, expression).await
}

/// [`eval_in`] on a child session (an out-of-process frame's), or the tab's for `None`.
pub async fn eval_in_session<S: CdpSession>(
    s: &S,
    session: Option<&str>,
    context: Option<i64>,
    expression: &str,
) -> Result<Option<Value>, WireError> {
    let mut params = json!({"expression": expression, "returnByValue": true, "awaitPromise": true});
    if let Some(ctx) = context {
        params["contextId"] = json!(ctx);
    }
    let res = s.send_in(session, "Runtime.evaluate", params).await?;
    remote_value(res)
}

/// The JSON value of a `Runtime.evaluate`/`callFunctionOn` answer (exceptions → EVAL_FAILED).
pub(crate) fn remote_value(mut res: Value) -> Result<Option<Value>, WireError> {
    if let Some(details) = res.get("exceptionDetails") {
        let text = events::exception_text(details);
        return Err(WireError::new(
            ErrorCode::EvalFailed,
            format!("page script threw: {text}"),
        ));
    }
    // Taken, not copied: a walk's answer is large.
    let mut result = res
        .get_mut("result")
        .map(Value::take)
        .unwrap_or(Value::Null);
    if let Some(unser) = result.get("unserializableValue").and_then(Value::as_str) {
        return Ok(Some(Value::String(unser.to_string())));
    }
    match result.get("type").and_then(Value::as_str) {
        Some("undefined") => Ok(None),
        _ => Ok(Some(
            result
                .get_mut("value")
                .map(Value::take)
                .unwrap_or(Value::Null),
        )),
    }
}

/// Refuse destinations that are not web pages (or cannot be driven) with `BAD_ARGS`.
pub fn check_url(url: &str) -> Result<(), WireError> {
    let lower = url.trim().to_ascii_lowercase();
    let allowed = ["http://", "https://", "about:blank", "data:"];
    if allowed.iter().any(|p| lower.starts_with(p)) && !lower.contains("chromewebstore.google.com")
    {
        Ok(())
    } else if crate::policy::gate::is_browser_page(&lower)
        || lower.contains("chromewebstore.google.com")
    {
        Err(WireError::new(
            ErrorCode::UnsupportedPage,
            format!("{url} is a browser-internal page that extensions may not control"),
        ))
    } else {
        Err(WireError::new(
            ErrorCode::BadArgs,
            format!("cannot navigate to {url:?}: only http(s) URLs (and about:blank, data:) are allowed; write the full URL, e.g. https://example.com/"),
        ))
    }
}

/// Await a commit (or its cancellation), bounded so a missing event cannot hang a command.
pub(crate) async fn await_commit(
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

/// URL, title and HTTP status of the page as it is now, read in Kapture's isolated world:
/// the page's own scripts can redefine `document.title` or `location` for themselves, not
/// for that world. Waits for a document that replaced the page meanwhile to load.
pub async fn page_info<S: CdpSession>(s: &S) -> Result<PageInfo, WireError> {
    read_page_info(s, js::PAGE_INFO).await
}

/// [`page_info`] once the current document has loaded, following documents that replace
/// it: one script in Kapture's world, answered by the page's `load` event.
pub async fn loaded_page_info<S: CdpSession>(s: &S) -> Result<PageInfo, WireError> {
    read_page_info(s, js::LOADED_PAGE_INFO).await
}

/// What a page-info script answered, as the running command may tell it ([`shown_page`]).
fn page_info_of<S: CdpSession>(s: &S, answer: Value) -> Result<PageInfo, WireError> {
    #[derive(Deserialize)]
    struct Raw {
        url: String,
        title: String,
        status: Option<u16>,
    }
    let raw: Raw = serde_json::from_value(answer)
        .map_err(|e| WireError::new(ErrorCode::Internal, format!("page info: {e}")))?;
    let (url, title) = shown_page(s, raw.url, raw.title);
    Ok(PageInfo {
        tab_id: s.tab_id(),
        url,
        title,
        status: raw.status,
        notes: Vec::new(),
    })
}

pub(crate) async fn read_page_info<S: CdpSession>(
    s: &S,
    script: &str,
) -> Result<PageInfo, WireError> {
    let mut script = script;
    let mut last = None;
    for _ in 0..LOAD_RETRIES {
        let read = match world::main_frame(s).await {
            // Judged below (`shown_page`): a page an action ended on is named, by its
            // origin only when it may not be read.
            Ok(main) => world::run_unjudged(s, &main, script, &[]).await,
            Err(e) => Err(e),
        };
        match read {
            Ok(v) => return page_info_of(s, v),
            Err(e) if context_gone(&e) || e.code == ErrorCode::RefStale => {
                last = Some(e);
                // Another document replaced the page: it needs a moment to get an
                // execution context, and is read once it has loaded.
                let rx = s.events().borrow_mut().wait_for_commit();
                await_commit(rx, Duration::from_millis(500)).await?;
                // The main frame may be a new one (a cross-process navigation).
                world::refresh_frames(s).await?;
                // A plain read waits for the new document's load; a read that waits for
                // something of its own (load, DOMContentLoaded) keeps waiting for it.
                if script == js::PAGE_INFO {
                    script = js::LOADED_PAGE_INFO;
                }
            }
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| WireError::new(ErrorCode::Internal, "no page info")))
}

/// A page's URL and title as the running command may tell them: a page it may not read
/// (an action took it there) is named by its origin only, its title withheld.
fn shown_page<S: CdpSession>(s: &S, url: String, title: String) -> (String, String) {
    let state = s.events().borrow();
    let Some(judge) = state.judge.as_ref() else {
        return (url, title);
    };
    let mut judged = vec![url.clone()];
    if let Some(main) = state.main_frame() {
        judged.extend(state.judged(main));
    }
    match judge.check(crate::policy::Category::Read, &judged) {
        Ok(()) => (url, title),
        Err(r) => (
            crate::policy::origin_of(&url)
                .map(|o| o.to_string())
                .unwrap_or_else(|| r.origin.clone()),
            format!("(title withheld: {})", r.reason()),
        ),
    }
}

/// Wait (bounded by `limits`) until the main frame's navigation since `mark` is decided:
/// none came within the grace window, or it loaded, or it is still loading at the limit.
/// Event-driven: it wakes on navigation news, never polls the page (whose commands Chrome
/// holds back while a navigation is pending). A dialog that opens meanwhile stops it.
pub(crate) async fn await_navigation<S: CdpSession>(
    s: &S,
    mark: navigation::Mark,
    limits: navigation::Limits,
) -> Result<navigation::Verdict, WireError> {
    use navigation::Verdict;
    let began = platform::now_ms();
    for _ in 0..MAX_WAKES {
        let news = s.events().borrow_mut().wait_for_navigation_news();
        let verdict = s
            .events()
            .borrow()
            .nav
            .decide(mark, began, platform::now_ms(), limits);
        let Verdict::Wait(ms) = verdict else {
            return Ok(verdict);
        };
        if s.events().borrow().dialog.is_some() {
            return Err(blocked_by_dialog(s));
        }
        let ms = Duration::from_millis(ms.ceil().max(1.0) as u64);
        if let Some(Err(_)) = platform::timeout(ms, news).await {
            return Err(WireError::new(
                ErrorCode::TabClosed,
                "the tab went away during navigation",
            ));
        }
    }
    // Woken too often to keep waiting: say what it is now, a wait counting as loading.
    let now = platform::now_ms();
    Ok(
        match s.events().borrow().nav.decide(mark, began, now, limits) {
            Verdict::Wait(_) => Verdict::Loading {
                committed: false,
                url: None,
            },
            v => v,
        },
    )
}

/// After an input action: wait for a navigation it started until the new document has
/// loaded, bounded, then report where the page is. Actions that may start one a little
/// late (clicks, keys, submits: `grace_ms` > 0) first let the page handle their input and
/// render a frame (`js::NEXT_PAINT`), cut short by navigation news: a link or a submit has
/// asked for its navigation by then (evidence, not a fixed wait). What starts later still
/// (a page timer, a render after a fetch) is the next read's to wait for and to name
/// ([`TabEvents::acted`](events::TabEvents)).
pub(crate) async fn settle<S: CdpSession>(
    s: &S,
    mark: navigation::Mark,
    grace_ms: f64,
) -> Result<ActionOutcome, WireError> {
    use navigation::{Limits, Verdict};
    let began = platform::now_ms();
    // Where the page is once it rendered the action's frame: the answer's, unless a
    // navigation is news by then.
    let mut painted = match grace_ms > 0.0 {
        true => render_tick(s, mark).await,
        false => None,
    };
    let mut limits = Limits {
        grace_ms: 0.0,
        limit_ms: SETTLE_LIMIT_MS,
    };
    let mut last = None;
    // Bounded: each round only repeats for a navigation that began while the page was read.
    for _ in 0..3 {
        let verdict = await_navigation(s, mark, limits).await?;
        let decided = s.events().borrow().nav.current().map(|n| n.id);
        let navigated = !matches!(verdict, Verdict::Quiet);
        let outcome = |url: String, title: String, loading: bool| ActionOutcome {
            tab_id: s.tab_id(),
            navigated,
            url,
            title,
            loading,
            file_chooser: s.events().borrow().file_chooser.is_some(),
            confidential: Vec::new(),
        };
        if let Verdict::Loading {
            committed: false,
            url,
        } = &verdict
        {
            // The new document is not there yet and the old one is being replaced: the
            // page cannot be asked, the answer says where it is going.
            let (url, title) = shown_page(s, url.clone().unwrap_or_default(), String::new());
            acted(s);
            return Ok(outcome(url, title, true));
        }
        let same_document = s
            .events()
            .borrow()
            .nav
            .current()
            .is_some_and(|n| n.stage == navigation::Stage::SameDocument);
        if navigated && same_document {
            // The page answers a URL change within the document in a task of its own
            // (`hashchange`, `popstate`): let it render before saying where it is. Bounded:
            // a background tab's timers may be slowed.
            if let Ok(main) = world::main_frame(s).await {
                let tick = world::run_unjudged(s, &main, js::NEXT_TASK, &[]);
                let _ = platform::timeout(Duration::from_millis(100), tick).await;
            }
        }
        // A page that cannot answer is stopped by a dialog (beforeunload, or one a timer
        // opened).
        let info = match painted.take().filter(|_| !navigated) {
            Some(info) => info,
            None => match platform::timeout(Duration::from_secs(2), page_info(s)).await {
                Some(info) => info?,
                None => return Err(blocked_by_dialog(s)),
            },
        };
        let loading = matches!(verdict, Verdict::Loading { .. });
        let answer = outcome(info.url, info.title, loading);
        let now = s
            .events()
            .borrow()
            .nav
            .current()
            .map(|n| (n.id, n.in_flight()));
        match now {
            Some((id, in_flight)) if Some(id) != decided || in_flight => {
                // A navigation began after the decision: answer on its page instead.
                let spent = platform::now_ms() - began;
                limits = Limits {
                    grace_ms: 0.0,
                    limit_ms: (SETTLE_LIMIT_MS - spent).max(0.0),
                };
                last = Some(ActionOutcome {
                    navigated: true,
                    loading: true,
                    ..answer
                });
            }
            _ => {
                acted(s);
                return Ok(answer);
            }
        }
    }
    acted(s);
    last.ok_or_else(|| WireError::new(ErrorCode::Internal, "no outcome"))
}

/// Remember that an action answered now, for the next read (see [`settle`]).
fn acted<S: CdpSession>(s: &S) {
    let mut events = s.events().borrow_mut();
    let mark = events.nav.mark();
    events.acted = Some(navigation::Acted {
        at: platform::now_ms(),
        mark,
    });
}

/// Let the page handle the tasks its input queued and render a frame, unless a navigation
/// since `mark` is already news (Chrome holds a page's commands back while its replacement
/// is pending, so the page is not asked then). Bounded by `js::PAINTED_PAGE_INFO`'s own
/// 100 ms. Answers where the page was then, when it said.
async fn render_tick<S: CdpSession>(s: &S, mark: navigation::Mark) -> Option<PageInfo> {
    let news = s.events().borrow_mut().wait_for_navigation_news();
    if s.events().borrow().nav.since(mark).is_some() {
        return None;
    }
    let main = world::main_frame(s).await.ok()?;
    let tick = world::run_unjudged(s, &main, js::PAINTED_PAGE_INFO, &[]);
    let either = futures::future::select(Box::pin(tick), news);
    let answer = match platform::timeout(Duration::from_millis(250), either).await {
        Some(futures::future::Either::Left((Ok(answer), _))) => answer,
        _ => return None,
    };
    page_info_of(s, answer).ok()
}

/// Before a read of the page model: when an action answered less than
/// [`navigation::SETTLE_MAX_MS`] ago, wait until its page has been quiet
/// [`navigation::QUIET_MS`] (and [`navigation::GRACE_MS`] passed since it), bounded; then
/// answer the mark navigations are judged from (the action's, so one a page timer started
/// after it is waited for) and whether that action is now read past. Best effort: a page
/// that cannot be asked (a dialog, a document going away) is not waited on.
pub(crate) async fn after_action<S: CdpSession>(s: &S) -> Option<navigation::Mark> {
    let acted = s.events().borrow().acted?;
    let since = platform::now_ms() - acted.at;
    if since < navigation::SETTLE_MAX_MS && s.events().borrow().nav.since(acted.mark).is_none() {
        settle_dom(s, acted.at, navigation::GRACE_MS).await;
    }
    Some(acted.mark)
}

/// Wait (bounded by [`navigation::SETTLE_MAX_MS`] from `began`) until the main frame's DOM
/// has not changed for [`navigation::QUIET_MS`], and `grace_ms` passed since `began`. Best
/// effort: a page that cannot be asked (a dialog, a document going away) is not waited on.
async fn settle_dom<S: CdpSession>(s: &S, began: f64, grace_ms: f64) {
    let spent = platform::now_ms() - began;
    let min = (grace_ms - spent).max(0.0);
    let max = (navigation::SETTLE_MAX_MS - spent).max(min);
    let Ok(main) = world::main_frame(s).await else {
        return;
    };
    let args = [json!(min), json!(navigation::QUIET_MS), json!(max)];
    let quiet = world::run_unjudged(s, &main, js::SETTLE_DOM, &args);
    let _ = platform::timeout(Duration::from_millis(max as u64 + 250), quiet).await;
}

/// The tab's collected console messages, newest first, from `offset`.
pub fn console_messages<S: CdpSession>(s: &S, p: &ConsoleMessages) -> ConsoleLog {
    let max = p.max.unwrap_or(100).min(events::CONSOLE_CAPACITY as u32) as usize;
    let offset = p.budget.offset.unwrap_or(0) as usize;
    let (mut messages, total) = s.events().borrow().console(p.level, max + offset);
    messages.drain(..offset.min(messages.len()));
    ConsoleLog {
        tab_id: s.tab_id(),
        messages,
        total: total as u32,
    }
}

/// A plain text answer about the session's tab.
fn text<S: CdpSession>(s: &S, t: String) -> Text {
    Text {
        tab_id: s.tab_id(),
        text: t,
        cut: false,
        refs: Vec::new(),
    }
}

#[cfg(test)]
mod tests;
