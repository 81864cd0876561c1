//! Reading the page: the snapshot (page model) and `find`, text, HTML, Markdown, links,
//! waits, screenshots and the agent's own scripts. Every text answer keeps to its budget
//! and says what it cut and how to get the rest.

use std::time::Duration;

use serde_json::{json, Value};

use super::navigation::{Limits, Verdict};
use super::world::{self, Located};
use super::{eval, js, num, remote_value, CdpSession, ACTIONABLE_WAIT_MS, READ_WAIT_MS};
use crate::escape;
use crate::methods::{
    Budget, Captured, ElementTarget, Evaluate, Evaluated, ExtractLinks, Find, GetHtml, GetText,
    ImageType, ReadMarkdown, Screenshot, Snapshot, Text, WaitFor, Waited,
};
use crate::platform;
use crate::protocol::{ErrorCode, WireError};
use crate::snapshot::{self, FrameKey, Page, RenderOptions, Walk};

/// Default character budget of a text answer.
pub const DEFAULT_MAX_CHARS: u32 = 25_000;
/// Nodes one walk of one frame reads at most.
const WALK_MAX_NODES: u32 = 30_000;
/// Longer side of a default screenshot, in pixels (what vision models take without resizing).
const SCREENSHOT_MAX_SIDE: f64 = 1568.0;
/// The smallest budget of a snapshot: room for its header and cut markers.
pub const SNAPSHOT_MIN_CHARS: usize = 1_000;
/// A full-page screenshot is cut at this many viewport widths of height.
const FULL_PAGE_MAX_ASPECT: f64 = 4.0;
/// Largest result of an agent's script, as JSON: far above any text budget, far below the
/// bridge's frame cap (a bigger one is `ANSWER_TOO_LARGE`, not a dropped connection).
pub const EVALUATE_MAX_BYTES: usize = 1 << 20;
/// Longest URL shown on one line of a list answer.
pub const LIST_URL_MAX: usize = 300;
/// Pause between two checks of a wait condition.
const WAIT_POLL: Duration = Duration::from_millis(100);

pub(crate) fn budget(b: &Budget) -> (usize, usize) {
    let max = b
        .max_chars
        .unwrap_or(DEFAULT_MAX_CHARS)
        .clamp(200, 1_000_000) as usize;
    (max, b.offset.unwrap_or(0) as usize)
}

async fn located<S: CdpSession>(s: &S, t: &ElementTarget) -> Result<Option<Located>, WireError> {
    match t.get() {
        Some(t) => Ok(Some(world::locate_target(s, &t).await?)),
        None => Ok(None),
    }
}

fn text(s: &impl CdpSession, text: String, cut: bool) -> Text {
    Text {
        tab_id: s.tab_id(),
        text,
        cut,
        refs: Vec::new(),
    }
}

/// One frame's walk from `root` (or the whole document); `text_refs`: each text names the
/// element holding it when that element is not in the model (browser_find's walk).
async fn walk<S: CdpSession>(
    s: &S,
    frame: &str,
    root: Value,
    mode: WalkMode,
) -> Result<Walk, WireError> {
    let args = [
        root,
        json!(WALK_MAX_NODES),
        json!(mode.text_refs),
        json!(mode.viewport),
    ];
    let raw = world::run(s, frame, js::WALKER_TEXT, &args).await?;
    walk_of(&raw)
}

/// The walker's answer ([`js::WALKER_TEXT`]): its JSON text read into a [`Walk`].
pub(crate) fn walk_of(raw: &Value) -> Result<Walk, WireError> {
    let text = raw.as_str().ok_or_else(|| {
        WireError::new(
            ErrorCode::Internal,
            "page walk: the walker answered no text",
        )
    })?;
    serde_json::from_str(text)
        .map_err(|e| WireError::new(ErrorCode::Internal, format!("page walk: {e}")))
}

/// What a walk tells besides the model.
#[derive(Debug, Clone, Copy, Default)]
struct WalkMode {
    /// A text inside an element that is not a node names that element (browser_find).
    text_refs: bool,
    /// Elements whose box meets the viewport say so (a viewport-only snapshot).
    viewport: bool,
}

/// Observe the page (or the subtree of `root`), child frames included under their iframes.
/// Answers the page and the node index of `root`.
async fn observe<S: CdpSession>(
    s: &S,
    root: Option<&Located>,
    mode: WalkMode,
) -> Result<(Page, Option<usize>), WireError> {
    let tree = world::refresh_frames(s).await?;
    let main = tree[0].id.clone();
    let frame = root
        .map(|r| r.frame.clone())
        .unwrap_or_else(|| main.clone());
    let key = |frame: &str| FrameKey {
        frame_id: frame.to_string(),
        loader_id: s.events().borrow().frame_loader(frame).unwrap_or_default(),
    };
    let first = walk(
        s,
        &frame,
        root.map(|r| r.js.clone()).unwrap_or(Value::Null),
        mode,
    )
    .await?;
    let mut page = Page::from_walk(first, key(&frame));
    let root_idx = root.and(page.roots.first().copied());
    // Child frames, breadth first, each under the iframe element that holds it.
    let mut pending = vec![0usize];
    while let Some(parent) = pending.pop() {
        let parent_id = page.frames[parent].frame_id.clone();
        let iframes = page.iframes(parent);
        if iframes.is_empty() {
            continue;
        }
        for child in tree
            .iter()
            .filter(|f| f.parent.as_deref() == Some(parent_id.as_str()))
        {
            let Some(local) = owner_id(s, &parent_id, &child.id).await else {
                continue;
            };
            let Some(&(node, _)) = iframes.iter().find(|(_, l)| *l == local) else {
                continue;
            };
            // A frame whose origin may not be read is one line naming the origin and the
            // rule: its document is never walked, and nothing inside it gets a ref.
            let refused = s
                .events()
                .borrow()
                .frame_refusal(&child.id, crate::policy::Category::Read);
            if let Some(r) = refused {
                page.attach_frame(node, withheld_walk(&r), key(&child.id));
                continue;
            }
            let child_walk = match walk(s, &child.id, Value::Null, mode).await {
                Ok(w) => w,
                Err(e) => Walk {
                    nodes: vec![serde_json::from_value(json!({"d": 0, "t": format!("(frame content not available: {})", e.message)}))
                        .unwrap_or_default()],
                    ..Walk::default()
                },
            };
            page.attach_frame(node, child_walk, key(&child.id));
            pending.push(page.frames.len() - 1);
        }
        // Frames Chrome runs in another process are not in this session's frame tree:
        // each is one line saying so and naming its origin (or withheld), never an empty
        // iframe that looks like the whole truth.
        let remote = s.events().borrow().remote_frames();
        for (id, r) in remote {
            if r.parent.as_deref().unwrap_or(main.as_str()) != parent_id
                || page.frames.iter().any(|f| f.frame_id == id)
            {
                continue;
            }
            let Some(local) = owner_id(s, &parent_id, &id).await else {
                continue;
            };
            let Some(&(node, _)) = iframes.iter().find(|(_, l)| *l == local) else {
                continue;
            };
            let refused = s
                .events()
                .borrow()
                .frame_refusal(&id, crate::policy::Category::Read);
            let walk = match refused {
                Some(r) => withheld_walk(&r),
                None => remote_walk(r.origin.as_deref().unwrap_or(r.url.as_str())),
            };
            page.attach_frame(node, walk, key(&id));
        }
    }
    Ok((page, root_idx))
}

/// What stands for a frame whose content is withheld: one node of Kapture's own (not page
/// text) that renders `content withheld: read on <origin> denied by <rule>`.
fn withheld_walk(r: &crate::policy::Refusal) -> Walk {
    Walk {
        nodes: vec![crate::snapshot::RawNode {
            // Role and value keep the node from being folded away; its line is `withheld`'s.
            r: Some("content withheld".into()),
            v: Some(r.reason()),
            withheld: Some(r.reason()),
            ..Default::default()
        }],
        ..Walk::default()
    }
}

/// What stands for a frame Chrome runs in another process, whose content was not read:
/// one node of Kapture's own naming the frame's origin.
fn remote_walk(origin: &str) -> Walk {
    Walk {
        nodes: vec![crate::snapshot::RawNode {
            // Role and value keep the node from being folded away; its line is `remote`'s.
            r: Some("frame content".into()),
            v: Some(origin.to_string()),
            remote: Some(origin.to_string()),
            ..Default::default()
        }],
        ..Walk::default()
    }
}

/// The registry id, in the parent frame's world, of the iframe element holding `child`.
async fn owner_id<S: CdpSession>(s: &S, parent: &str, child: &str) -> Option<u32> {
    // The iframe element lives in the parent's document, reached through its session.
    let session = s.events().borrow().session_of(parent);
    let session = session.as_deref();
    let owner = s
        .send_in(session, "DOM.getFrameOwner", json!({"frameId": child}))
        .await
        .ok()?;
    let backend = owner.get("backendNodeId")?.as_i64()?;
    let ctx = world::world(s, parent).await.ok()?;
    let node = s
        .send_in(
            session,
            "DOM.resolveNode",
            json!({"backendNodeId": backend, "executionContextId": ctx}),
        )
        .await
        .ok()?;
    let object = node.pointer("/object/objectId")?.as_str()?;
    let res = s
        .send_in(session, "Runtime.callFunctionOn", json!({"objectId": object, "functionDeclaration": js::ID_OF_THIS, "returnByValue": true}))
        .await
        .ok()?;
    res.pointer("/result/value")?
        .as_u64()
        .map(|v| v as u32)
        .filter(|v| *v > 0)
}

/// What a read of the page model finds about a navigation of the tab.
enum Readiness {
    /// No navigation under way (or it finished): read the page.
    Ready,
    /// The new document is there but has not loaded within the wait.
    StillLoading,
    /// The page is being replaced and its successor has not arrived within the wait.
    Replaced,
}

/// Told instead of a page that is being replaced; `again` is the call to repeat.
fn page_loading(again: &str) -> String {
    format!(
        "(page is loading: a navigation of this tab has not finished after {} s; nothing to show yet, call {again} again in a moment)",
        READ_WAIT_MS / 1000.0
    )
}
/// Told above a page whose document is there but still loading.
const STILL_LOADING: &str =
    "(page is still loading: what follows may be incomplete; take the snapshot again in a moment)";
/// Told for a document with nothing in it.
const EMPTY_PAGE: &str = "(empty page: the document has no content)";

/// Before reading the page model: let the page go quiet after an action that just answered
/// (see [`super::after_action`]), then wait (bounded) for a navigation in flight or one
/// that began since that action's answer, so a read never shows a page that is being
/// replaced. Answers also the note naming a navigation that began after the action
/// answered (a page timer's), said once.
async fn readiness<S: CdpSession>(s: &S) -> Result<(Readiness, Option<String>), WireError> {
    let acted = super::after_action(s).await;
    let mark = acted.unwrap_or_else(|| s.events().borrow().nav.mark());
    let limits = Limits {
        grace_ms: 0.0,
        limit_ms: READ_WAIT_MS,
    };
    let verdict = super::await_navigation(s, mark, limits).await?;
    let since = acted.and_then(|m| {
        let events = s.events().borrow();
        events.nav.since(m).map(|n| {
            let url = n.url.clone().unwrap_or_default();
            (url, n.stage == super::navigation::Stage::SameDocument)
        })
    });
    if acted.is_some() {
        // Said once: the next read judges from here.
        let mut events = s.events().borrow_mut();
        events.acted = None;
    }
    let note = since.map(|(url, same_document)| {
        let url = crate::escape::quoted_cut(&url, 300);
        if same_document {
            // A route change within the document keeps its elements and their refs.
            format!("(the page's address changed after the last action answered, to {url})")
        } else {
            format!(
                "(the page navigated after the last action answered, to {url}; refs of the page before are stale)"
            )
        }
    });
    Ok((
        match verdict {
            Verdict::Loading {
                committed: false, ..
            } => Readiness::Replaced,
            Verdict::Loading {
                committed: true, ..
            } => Readiness::StillLoading,
            _ => Readiness::Ready,
        },
        note,
    ))
}

/// `note` on its own line under the answer's first (header) line.
pub(super) fn with_note(text: String, note: &str) -> String {
    match text.split_once('\n') {
        Some((head, rest)) if head.starts_with("# ") => format!("{head}\n{note}\n{rest}"),
        None if text.starts_with("# ") => format!("{text}\n{note}"),
        _ => format!("{note}\n{text}"),
    }
}

/// The page model as text (or only what changed since the last one).
pub async fn snapshot<S: CdpSession>(s: &S, p: &Snapshot) -> Result<Text, WireError> {
    let (ready, navigated) = readiness(s).await?;
    if let Readiness::Replaced = ready {
        let loading = page_loading("browser_snapshot");
        let said = navigated.map_or(loading.clone(), |n| format!("{n}\n{loading}"));
        return Ok(text(s, said, false));
    }
    let root = located(s, &p.target).await?;
    let mode = WalkMode {
        viewport: p.viewport_only,
        ..WalkMode::default()
    };
    let (page, root_idx) = observe(s, root.as_ref(), mode).await?;
    let (max_chars, offset) = budget(&p.budget);
    // The header and the cut markers alone take a few hundred characters.
    let max_chars = max_chars.max(SNAPSHOT_MIN_CHARS);
    let opts = RenderOptions {
        max_chars,
        depth: p.depth,
        interactive_only: p.interactive_only,
        viewport_only: p.viewport_only,
        max_items: p.max.map(|m| m.max(1) as usize),
        offset,
        ..RenderOptions::default()
    };
    let mut state = s.events().borrow_mut();
    let out = snapshot::render(&page, root_idx, &mut state.refs, &opts);
    let whole_page = root.is_none()
        && offset == 0
        && !p.interactive_only
        && !p.viewport_only
        && p.depth.is_none();
    // Never an empty answer without saying why.
    let empty = whole_page && out.lines.is_empty();
    let mut answer = if p.diff {
        snapshot::diff_text(&snapshot::diff(&state.last_snapshot, &out.lines), max_chars)
    } else {
        out.text
    };
    match ready {
        Readiness::StillLoading => answer = with_note(answer, STILL_LOADING),
        _ if empty => answer = with_note(answer, EMPTY_PAGE),
        _ => {}
    }
    if let Some(n) = navigated {
        answer = with_note(answer, &n);
    }
    if whole_page {
        state.last_snapshot = out.lines;
    }
    Ok(Text {
        refs: out.refs,
        ..text(s, answer, out.cut)
    })
}

/// Matching lines of the page model, with refs.
pub async fn find<S: CdpSession>(s: &S, p: &Find) -> Result<Text, WireError> {
    if p.query.trim().is_empty() {
        return Err(WireError::new(ErrorCode::BadArgs, "query is empty"));
    }
    let (ready, navigated) = readiness(s).await?;
    if let Readiness::Replaced = ready {
        let loading = page_loading("browser_find");
        let said = navigated.map_or(loading.clone(), |n| format!("{n}\n{loading}"));
        return Ok(text(s, said, false));
    }
    // Texts name the element holding them: a match in a code editor's line is something
    // to act on.
    let mode = WalkMode {
        text_refs: true,
        ..WalkMode::default()
    };
    let (page, _) = observe(s, None, mode).await?;
    let max = p.max.unwrap_or(30).clamp(1, 500) as usize;
    let (max_chars, offset) = budget(&p.budget);
    let mut state = s.events().borrow_mut();
    let (lines, total, refs) =
        snapshot::find_shown(&page, &mut state.refs, p.query.trim(), offset + max, offset);
    let lines: Vec<String> = lines.into_iter().skip(offset).collect();
    // The query is the agent's, but it is echoed: escaped like page text.
    let query = escape::quoted_cut(&p.query, 200);
    let end = offset + lines.len();
    let head = match total {
        0 => format!("No match for {query} on the page."),
        t if end < t || offset > 0 => format!(
            "{t} matches for {query}, {} from {}; refine the query, or browser_find {{offset: {end}}} for more:",
            lines.len(),
            offset + 1
        ),
        t => format!("{t} matches for {query}:"),
    };
    let head = match navigated {
        Some(n) => format!("{n}\n{head}"),
        None => head,
    };
    // Within the character budget too: a marker names the match to go on from.
    let (answer, cut) = escape::fit_lines(&head, &lines, max_chars, |i| {
        format!(
            "… cut at the {max_chars}-character budget. More: browser_find {{offset: {}}} (same query)",
            offset + i
        )
    });
    Ok(Text {
        refs,
        ..text(s, answer, cut || end < total)
    })
}

/// A slice `[offset, offset+max)` of a long text with an honest marker when cut. The text
/// is page content by design: under a header, each of its lines quoted with
/// [`escape::BLOCK_PREFIX`], so none can pass for a line of Kapture's.
fn sliced(v: &Value, offset: usize, max: usize, what: &str) -> (String, bool) {
    let body = v
        .get("text")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let total = v.get("total").and_then(Value::as_u64).unwrap_or(0) as usize;
    // The quoted lines keep to the budget too (their prefixes count): what did not fit
    // is where the next call starts.
    let (quoted_body, used) = escape::block_within(&body, max);
    let end = offset + used;
    let quoted = format!(
        "The page's {what} (untrusted content; each of its lines starts with \"{}\"):\n{quoted_body}",
        escape::BLOCK_PREFIX.trim_end(),
    );
    if end < total {
        (format!("{quoted}\n… cut: characters {offset}–{end} of {total}. More: the same call with offset: {end}, or a narrower ref/selector"), true)
    } else if total == 0 {
        (format!("(no {what})"), false)
    } else {
        (quoted, false)
    }
}

/// Run a paged text script (`(target, …extra, offset, max) => {text, total}`) and cut its
/// answer with an honest marker.
async fn paged<S: CdpSession>(
    s: &S,
    t: &ElementTarget,
    b: &Budget,
    script: &str,
    extra: &[Value],
    what: &str,
) -> Result<Text, WireError> {
    // Right after an action: its effect rendered, as for a snapshot.
    super::after_action(s).await;
    let (max, offset) = budget(b);
    let (frame, target) = frame_and_target(s, t).await?;
    let mut args = vec![target];
    args.extend_from_slice(extra);
    args.extend([json!(offset), json!(max)]);
    let v = world::run(s, &frame, script, &args).await?;
    let (t, cut) = sliced(&v, offset, max, what);
    Ok(text(s, t, cut))
}

/// Visible text of the page or an element.
pub async fn get_text<S: CdpSession>(s: &S, p: &GetText) -> Result<Text, WireError> {
    paged(s, &p.target, &p.budget, js::GET_TEXT, &[], "text").await
}

/// HTML of the document or an element.
pub async fn get_html<S: CdpSession>(s: &S, p: &GetHtml) -> Result<Text, WireError> {
    let outer = json!(p.outer.unwrap_or(true));
    paged(s, &p.target, &p.budget, js::GET_HTML, &[outer], "HTML").await
}

/// The readable content as Markdown.
pub async fn read_markdown<S: CdpSession>(s: &S, p: &ReadMarkdown) -> Result<Text, WireError> {
    paged(
        s,
        &p.target,
        &p.budget,
        js::MARKDOWN,
        &[],
        "readable content",
    )
    .await
}

/// Links of the page, de-duplicated, absolute.
pub async fn extract_links<S: CdpSession>(s: &S, p: &ExtractLinks) -> Result<Text, WireError> {
    let (max, offset) = budget(&p.budget);
    let (frame, target) = frame_and_target(s, &p.target).await?;
    let v = world::run(
        s,
        &frame,
        js::LINKS,
        &[
            target,
            json!(p.same_origin_only),
            json!(p.include),
            json!(p.exclude),
        ],
    )
    .await?;
    let links: Vec<(String, String)> = v
        .get("links")
        .and_then(|l| serde_json::from_value(l.clone()).ok())
        .unwrap_or_default();
    let total = links.len();
    let lines: Vec<String> = links
        .iter()
        .skip(offset)
        .map(|(label, url)| {
            format!(
                "- [{}]({})",
                escape::inline_cut(&label.replace(']', "\\]"), 200),
                escape::inline_cut(url, LIST_URL_MAX)
            )
        })
        .collect();
    let head = if lines.is_empty() && total > 0 {
        format!("{total} links (none after offset {offset})")
    } else {
        format!("{total} links")
    };
    let (out, cut) = escape::fit_lines(&head, &lines, max, |i| {
        let next = offset + i;
        format!(
            "… cut after {next} of {total} links at the {max}-character budget. More: browser_extract_links {{offset: {next}}} (same filters)"
        )
    });
    Ok(text(s, out, cut))
}

async fn frame_and_target<S: CdpSession>(
    s: &S,
    t: &ElementTarget,
) -> Result<(String, Value), WireError> {
    match located(s, t).await? {
        Some(l) => Ok((l.frame, l.js)),
        None => Ok((world::main_frame(s).await?, Value::Null)),
    }
}

/// Wait for text or an element to appear or go, or for some time; polls with a deadline
/// (the command's timeout ends a wait that never comes true).
pub async fn wait_for<S: CdpSession>(s: &S, p: &WaitFor) -> Result<Waited, WireError> {
    let started = platform::now_ms();
    let done = |what: String| Waited {
        tab_id: s.tab_id(),
        waited_ms: (platform::now_ms() - started).max(0.0) as u64,
        what,
    };
    if let Some(secs) = p.time {
        if !(0.0..=30.0).contains(&secs) {
            return Err(WireError::new(
                ErrorCode::BadArgs,
                "time is in seconds, between 0 and 30",
            ));
        }
        if p.text.is_none() && p.text_gone.is_none() && p.selector.is_none() {
            platform::sleep(Duration::from_secs_f64(secs)).await;
            return Ok(done(format!("waited {secs} s")));
        }
    }
    if p.text.is_none() && p.text_gone.is_none() && p.selector.is_none() {
        return Err(WireError::new(
            ErrorCode::BadArgs,
            "say what to wait for: text, textGone, selector (with gone) or time",
        ));
    }
    let mut what = Vec::new();
    if let Some(t) = &p.text {
        what.push(format!("text {t:?} appeared"));
    }
    if let Some(t) = &p.text_gone {
        what.push(format!("text {t:?} is gone"));
    }
    if let Some(sel) = &p.selector {
        what.push(format!(
            "{sel} is {}",
            if p.gone { "gone" } else { "visible" }
        ));
    }
    let main = world::main_frame(s).await?;
    let args = [
        json!(p.text),
        json!(p.text_gone),
        json!(p.selector),
        json!(p.gone),
    ];
    loop {
        // A navigation may replace the document between checks; the next check follows it.
        match world::run(s, &main, js::WAIT_CHECK, &args).await {
            Ok(v) if v.get("met").and_then(Value::as_bool) == Some(true) => {
                return Ok(done(what.join(", ")))
            }
            Ok(_) => {}
            Err(e) if e.code == ErrorCode::RefStale || super::context_gone(&e) => {}
            Err(e) => return Err(e),
        }
        platform::sleep(WAIT_POLL).await;
    }
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

/// Run an agent's expression or function in the page (the page's own world); with a target
/// the function receives that element. The result comes back as JSON.
pub async fn evaluate<S: CdpSession>(s: &S, p: &Evaluate) -> Result<Evaluated, WireError> {
    if p.function.trim().is_empty() {
        return Err(WireError::new(
            ErrorCode::BadArgs,
            "function is empty: pass an expression or a function such as () => document.title",
        ));
    }
    let is_fn = is_function_source(&p.function);
    // A blank page the extension opened carries its origin: no agent script runs there.
    let refuse_in = |frame: &str| {
        if s.events().borrow().extension_document(frame) {
            return Err(WireError::new(
                ErrorCode::PolicyDenied,
                "this blank page was opened by the Kapture extension and carries its origin: scripts are not run in it; navigate the tab to a page first",
            ));
        }
        Ok(())
    };
    let main = s.events().borrow().main_frame().map(str::to_string);
    if let Some(main) = main {
        refuse_in(&main)?;
    }
    let Some(target) = p.target.get() else {
        let source = if is_fn {
            format!("({})()", p.function)
        } else {
            p.function.clone()
        };
        // No element here: a document replaced under the script is the page navigating.
        let value = eval(s, &source).await.map_err(|e| {
            if super::context_gone(&e) {
                WireError::new(
                    ErrorCode::EvalFailed,
                    "the page navigated while the script ran; check where it is now and run it again",
                )
            } else {
                e
            }
        })?;
        return Ok(Evaluated {
            tab_id: s.tab_id(),
            value: within_cap(value)?,
        });
    };
    if !is_fn {
        return Err(WireError::new(ErrorCode::BadArgs, "with ref or selector, pass a function that takes the element, e.g. (el) => el.textContent"));
    }
    let located = world::locate_target(s, &target).await?;
    refuse_in(&located.frame)?;
    world::run(
        s,
        &located.frame,
        js::SCROLL_INTO_VIEW,
        &[located.js.clone(), json!(ACTIONABLE_WAIT_MS)],
    )
    .await?;
    let ours = world::element_object(s, &located).await?;
    // Hand the element to the page's own world, where the agent's code belongs.
    let node = s
        .send("DOM.describeNode", json!({"objectId": ours}))
        .await?;
    let backend = node
        .pointer("/node/backendNodeId")
        .cloned()
        .unwrap_or(Value::Null);
    let theirs = s
        .send("DOM.resolveNode", json!({"backendNodeId": backend}))
        .await?;
    let object = theirs
        .pointer("/object/objectId")
        .and_then(Value::as_str)
        .ok_or_else(|| WireError::new(ErrorCode::RefStale, "the element is gone"))?;
    let res = s
        .send(
            "Runtime.callFunctionOn",
            json!({
                "objectId": object,
                "functionDeclaration": format!("function() {{ return ({})(this); }}", p.function),
                "returnByValue": true, "awaitPromise": true,
            }),
        )
        .await?;
    Ok(Evaluated {
        tab_id: s.tab_id(),
        value: within_cap(remote_value(res)?)?,
    })
}

/// An agent's script result, refused with `ANSWER_TOO_LARGE` above [`EVALUATE_MAX_BYTES`].
fn within_cap(value: Option<Value>) -> Result<Option<Value>, WireError> {
    let size = value.as_ref().map_or(0, |v| {
        let mut counter = crate::protocol::ByteCount::default();
        let _ = serde_json::to_writer(&mut counter, v);
        counter.0
    });
    if size > EVALUATE_MAX_BYTES {
        return Err(WireError::new(
            ErrorCode::AnswerTooLarge,
            format!(
                "the script's result is {size} bytes as JSON; at most {EVALUATE_MAX_BYTES} come back"
            ),
        ));
    }
    Ok(value)
}

/// Take the image as the page shows it now (see [`super::hide::screenshot`]).
pub(super) async fn capture<S: CdpSession>(s: &S, p: &Screenshot) -> Result<Captured, WireError> {
    let (format, mime) = match p.image_type {
        ImageType::Png => ("png", "image/png"),
        ImageType::Jpeg => ("jpeg", "image/jpeg"),
    };
    let mut truncated_from = None;
    let quality = (p.image_type == ImageType::Jpeg).then_some(75);
    // The common case — the viewport as it is — takes the browser's plain capture, asked
    // together with the viewport's size (a clip or a scale would take the slower path).
    let plain = p.target.get().is_none() && !p.full_page && p.scale.is_none();
    if plain {
        let mut params = json!({"format": format});
        if let Some(q) = quality {
            params["quality"] = json!(q);
        }
        let (metrics, shot) = futures::future::try_join(
            s.send("Page.getLayoutMetrics", json!({})),
            s.send("Page.captureScreenshot", params),
        )
        .await?;
        let (vw, vh) = (
            num(&metrics, "/cssVisualViewport/clientWidth"),
            num(&metrics, "/cssVisualViewport/clientHeight"),
        );
        let zoom = num(&metrics, "/cssVisualViewport/zoom");
        let ratio = num(&metrics, "/cssLayoutViewport/clientWidth")
            .max(1.0)
            .recip()
            * num(&metrics, "/layoutViewport/clientWidth");
        if vw.max(vh) * ratio.max(1.0) <= SCREENSHOT_MAX_SIDE && (zoom == 0.0 || zoom == 1.0) {
            let data = shot.get("data").and_then(Value::as_str).ok_or_else(|| {
                WireError::new(ErrorCode::Internal, "the browser returned no image")
            })?;
            return Ok(Captured {
                tab_id: s.tab_id(),
                data: data.to_string(),
                mime_type: mime.to_string(),
                width: (vw * ratio.max(1.0)).round() as u32,
                height: (vh * ratio.max(1.0)).round() as u32,
                truncated_from,
            });
        }
    }
    let metrics = s.send("Page.getLayoutMetrics", json!({})).await?;
    let (page_x, page_y) = (
        num(&metrics, "/cssVisualViewport/pageX"),
        num(&metrics, "/cssVisualViewport/pageY"),
    );
    let (x, y, w, h, beyond) = if let Some(target) = located(s, &p.target).await? {
        world::run(
            s,
            &target.frame,
            js::SCROLL_INTO_VIEW,
            &[target.js.clone(), json!(ACTIONABLE_WAIT_MS)],
        )
        .await?;
        let object = world::element_object(s, &target).await?;
        let (bx, by, bw, bh) = world::element_box(s, &object).await?;
        // Scrolling moved the viewport: read its offset again.
        let m = s.send("Page.getLayoutMetrics", json!({})).await?;
        (
            bx + num(&m, "/cssVisualViewport/pageX"),
            by + num(&m, "/cssVisualViewport/pageY"),
            bw,
            bh,
            true,
        )
    } else if p.full_page {
        let (cw, ch) = (
            num(&metrics, "/cssContentSize/width"),
            num(&metrics, "/cssContentSize/height"),
        );
        let cap = (cw * FULL_PAGE_MAX_ASPECT)
            .max(num(&metrics, "/cssVisualViewport/clientHeight"))
            .min(16_384.0);
        if ch > cap {
            truncated_from = Some(ch.round() as u32);
        }
        (0.0, 0.0, cw, ch.min(cap), true)
    } else {
        let (vw, vh) = (
            num(&metrics, "/cssVisualViewport/clientWidth"),
            num(&metrics, "/cssVisualViewport/clientHeight"),
        );
        (page_x, page_y, vw, vh, false)
    };
    if w <= 0.0 || h <= 0.0 {
        return Err(WireError::new(
            ErrorCode::NotInteractable,
            "nothing to capture: the area is empty",
        ));
    }
    let scale = match p.scale {
        Some(s) if !(0.1..=2.0).contains(&s) => {
            return Err(WireError::new(
                ErrorCode::BadArgs,
                "scale must be between 0.1 and 2",
            ))
        }
        Some(s) => s,
        None => (SCREENSHOT_MAX_SIDE / w.max(h)).min(1.0),
    };
    let mut params = json!({"format": format, "clip": {"x": x, "y": y, "width": w, "height": h, "scale": scale}, "captureBeyondViewport": beyond});
    if let Some(q) = quality {
        params["quality"] = json!(q);
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
        width: (w * scale).round() as u32,
        height: (h * scale).round() as u32,
        truncated_from,
    })
}
