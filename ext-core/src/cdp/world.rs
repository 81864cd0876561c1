//! Kapture's isolated world in each frame: where its page scripts run, out of reach of the
//! page's own scripts, and where the element registry behind refs lives. Element targets
//! (`ref` or `selector`) resolve here to a frame plus a page-side target object.

use serde_json::{json, Value};

use super::{context_gone, CdpSession};
use crate::methods::ElementTarget;
use crate::protocol::{ErrorCode, WireError};

/// The page-side helpers every world script can use (`resolve`, `idOf`, `describe`, `K`).
pub const PRELUDE: &str = include_str!("page/prelude.js");

/// The prelude's top-level names, as world scripts see them. The prelude is installed once
/// per world (`globalThis.__kp`) and each script takes these from it: sending its 10 kB
/// with every script cost more than most scripts themselves (a test keeps the list whole).
const PRELUDE_NAMES: &str = "K, idOf, describe, topAt, pathTo, INTERACTIVE, holderOf, drawnElsewhere, holderPoint, CONTROL, ownPoint, aimAt, isXPath, queryAll, queryOne, resolve";

/// What a world script answers where the prelude is not installed (a world made by a
/// command that did not install it, or a first script that failed to compile): the script
/// is sent again with the prelude.
const NO_PRELUDE: &str = "\u{1}kapture: no prelude in this world";

/// Name of the isolated world (visible in DevTools' context picker).
pub(crate) const WORLD_NAME: &str = "kapture";

/// An element target, resolved to the frame it lives in.
#[derive(Debug, Clone, PartialEq)]
pub struct Located {
    pub frame: String,
    /// `{sel}` or `{id, ref}`, the argument of the prelude's `resolve`.
    pub js: Value,
    /// How to name the element in answers.
    pub label: String,
}

/// One frame of a tab.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameInfo {
    pub id: String,
    pub loader: String,
    pub parent: Option<String>,
    pub url: String,
    /// The security origin Chrome reports for the frame's document.
    pub origin: Option<String>,
}

/// Record the current document of every frame; answers the frames, the main frame first.
pub async fn refresh_frames<S: CdpSession>(s: &S) -> Result<Vec<FrameInfo>, WireError> {
    let tree = s.send("Page.getFrameTree", json!({})).await?;
    fn walk(node: &Value, parent: Option<&str>, out: &mut Vec<FrameInfo>) {
        let frame = node.get("frame");
        let id = frame.and_then(|f| f.get("id")).and_then(Value::as_str);
        let loader = frame
            .and_then(|f| f.get("loaderId"))
            .and_then(Value::as_str);
        let (Some(id), Some(loader)) = (id, loader) else {
            return;
        };
        out.push(FrameInfo {
            id: id.to_string(),
            loader: loader.to_string(),
            parent: parent.map(str::to_string),
            url: frame
                .and_then(|f| f.get("url"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            origin: frame
                .and_then(|f| f.get("securityOrigin"))
                .and_then(Value::as_str)
                .map(str::to_string),
        });
        for child in node
            .get("childFrames")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            walk(child, Some(id), out);
        }
    }
    let mut frames = Vec::new();
    walk(
        tree.get("frameTree").unwrap_or(&Value::Null),
        None,
        &mut frames,
    );
    // Out-of-process iframes are not in the tab's tree: each has a tree of its own in its
    // child session, hung under the frame holding its iframe element.
    let remote = s.events().borrow().remote_frames();
    let mut sessions = Vec::new();
    for (id, r) in remote {
        let Some(session) = r.session else { continue };
        if frames.iter().any(|f| f.id == id) {
            continue;
        }
        let Ok(child) = s
            .send_in(Some(&session), "Page.getFrameTree", json!({}))
            .await
        else {
            continue;
        };
        // Cross-site frames inside it are targets of their own again: have Chrome report
        // them too (once per session; best effort).
        if s.events().borrow_mut().first_sight_of_session(&session) {
            let _ = s
                .send_in(
                    Some(&session),
                    "Target.setAutoAttach",
                    json!({"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true}),
                )
                .await;
        }
        let from = frames.len();
        walk(
            child.get("frameTree").unwrap_or(&Value::Null),
            r.parent.as_deref(),
            &mut frames,
        );
        sessions.extend(
            frames[from..]
                .iter()
                .map(|f| (f.id.clone(), session.clone())),
        );
    }
    let mut state = s.events().borrow_mut();
    for (frame, session) in &sessions {
        state.set_frame_session(frame, session);
    }
    if let Some(url) = tree.pointer("/frameTree/frame/url").and_then(Value::as_str) {
        state.main_url = Some(url.to_string());
    }
    for f in &frames {
        state.frame_seen(
            &f.id,
            &f.loader,
            &f.url,
            f.origin.as_deref(),
            f.parent.as_deref(),
        );
    }
    let main = frames
        .first()
        .ok_or_else(|| WireError::new(ErrorCode::TabClosed, "the tab has no document"))?;
    state.set_main_frame(main.id.clone());
    drop(state);
    Ok(frames)
}

/// The main frame's id.
pub async fn main_frame<S: CdpSession>(s: &S) -> Result<String, WireError> {
    let known = s.events().borrow().main_frame().map(str::to_string);
    match known {
        Some(id) => Ok(id),
        None => Ok(refresh_frames(s).await?.remove(0).id),
    }
}

/// Resolve `ref` or `selector` (exactly one) to a frame and a page-side target.
pub async fn locate_target<S: CdpSession>(s: &S, t: &ElementTarget) -> Result<Located, WireError> {
    match (&t.element_ref, &t.selector) {
        (Some(_), Some(_)) | (None, None) => Err(WireError::new(
            ErrorCode::BadArgs,
            "name the element with exactly one of `ref` (from browser_snapshot) or `selector`",
        )),
        (Some(r), None) => {
            let state = s.events().borrow();
            let target = state.refs.resolve(r, |frame| state.frame_loader(frame))?;
            Ok(Located {
                frame: target.frame.frame_id,
                js: json!({"id": target.local, "ref": r.trim()}),
                label: t.describe(),
            })
        }
        (None, Some(sel)) => {
            if sel.trim().is_empty() {
                return Err(WireError::new(ErrorCode::BadArgs, "selector is empty"));
            }
            Ok(Located {
                frame: main_frame(s).await?,
                js: json!({"sel": sel}),
                label: t.describe(),
            })
        }
    }
}

/// The running command may act in `frame`'s current document (its category, judged on the
/// origin Chrome reports for that document), or the coded refusal.
pub fn judge_frame<S: CdpSession>(s: &S, frame: &str) -> Result<(), WireError> {
    let state = s.events().borrow();
    let Some(category) = state.judge.as_ref().map(|j| j.category()) else {
        return Ok(());
    };
    match state.frame_refusal(frame, category) {
        Some(r) => Err(r.error()),
        None => Ok(()),
    }
}

/// The running command may act in `frame`'s current document as `events` know it and, when
/// its input lands on an iframe element, in that frame's document (`inner`: its URL): the
/// judge of a transport without CDP (reduced mode), on the same rules and state.
pub fn judge_landing(
    events: &std::cell::RefCell<super::TabEvents>,
    frame: &str,
    inner: Option<&str>,
) -> Result<(), WireError> {
    let state = events.borrow();
    let Some(judge) = state.judge.as_ref() else {
        return Ok(());
    };
    let category = judge.category();
    if let Some(r) = state.frame_refusal(frame, category) {
        return Err(r.error());
    }
    match inner {
        Some(url) => judge
            .check(category, &[url.to_string()])
            .map_err(|r| r.error()),
        None => Ok(()),
    }
}

/// The running command may act in `frame` (its category), learning the frame first when
/// it was never seen.
async fn judge_frame_fresh<S: CdpSession>(s: &S, frame: &str) -> Result<(), WireError> {
    if s.events().borrow().judged(frame).is_empty() {
        refresh_frames(s).await?;
    }
    judge_frame(s, frame)
}

/// A viewport point (top-level CSS pixels) the running command may send pointer input
/// to: made only by [`judge_point`], and the only kind of point the pointer events take,
/// so input at a point nobody judged does not compile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JudgedPoint {
    x: f64,
    y: f64,
}

impl JudgedPoint {
    pub fn xy(self) -> (f64, f64) {
        (self.x, self.y)
    }
}

/// Leave to send keys and text where the focus is now: made only by [`judge_focus`], and
/// taken by every key and text input, so keys sent without judging the focus do not
/// compile.
#[derive(Debug)]
pub struct JudgedFocus(());

/// The running command may act where a pointer event at `(x, y)` (top-level viewport CSS
/// pixels) lands: in every frame on the way to the element under that point, and in the
/// document of an iframe element there (a click on an iframe lands in its document). Costs
/// nothing while no frame of the tab is refused; where the browser cannot say what is
/// under the point, refused while any frame is.
pub async fn judge_point<S: CdpSession>(s: &S, at: (f64, f64)) -> Result<JudgedPoint, WireError> {
    let judged = JudgedPoint { x: at.0, y: at.1 };
    let Some(category) = s.events().borrow().judge.as_ref().map(|j| j.category()) else {
        return Ok(judged);
    };
    if !s.events().borrow().any_frame_refused(category) {
        return Ok(judged);
    }
    match frames_at(s, at).await? {
        Landing::Frames(frames) => {
            for frame in frames {
                judge_frame_fresh(s, &frame).await?;
            }
            Ok(judged)
        }
        Landing::Unknown(why) => Err(WireError::new(
            ErrorCode::PolicyDenied,
            format!(
                "input at {:.0},{:.0} is refused: {why}, and this page shows a frame the policy refuses",
                at.0, at.1
            ),
        )),
    }
}

/// Where a pointer event lands, as [`frames_at`] finds it.
#[derive(Debug, Clone, PartialEq)]
pub enum Landing {
    /// The frames it goes through, outermost first, to the one whose element it lands on
    /// (and an iframe element's own document when it lands on one). Empty off the page.
    Frames(Vec<String>),
    /// The browser could not say (why, for a message).
    Unknown(&'static str),
}

/// Where a pointer event at `(x, y)` (top-level viewport CSS pixels) lands. The browser's
/// own hit test of each process answers, as a real event would be routed: elements with
/// `pointer-events: none` are seen through, stacking and covering count. It takes a
/// point in the document (the viewport's scroll added). Over a frame of another process it
/// ends at the iframe element: the point goes on into that frame, moved by the iframe's
/// content box, and is hit-tested again in the frame's own session. A frame the page
/// scales or turns is not followed (`Unknown`): its points are not its parent's.
pub async fn frames_at<S: CdpSession>(s: &S, at: (f64, f64)) -> Result<Landing, WireError> {
    Ok(follow_point(s, at, true).await?.0)
}

/// Where a node a point hit lives: the session of its process (`None`: the tab's), its
/// frame, and its backend node id.
type Hit = (Option<String>, String, Value);

/// The element a pointer event at `(x, y)` lands on, followed as [`frames_at`] follows it
/// (author shadow roots included, the browser's own inside controls not: the control
/// itself), as an object of Kapture's world in its frame: `(frame, object id)`. `None` off
/// the page or where the browser cannot say.
pub async fn element_at<S: CdpSession>(
    s: &S,
    at: (f64, f64),
) -> Result<Option<(String, String)>, WireError> {
    let Some((session, frame, backend)) = follow_point(s, at, false).await?.1 else {
        return Ok(None);
    };
    let ctx = world(s, &frame).await?;
    let node = s
        .send_in(
            session.as_deref(),
            "DOM.resolveNode",
            json!({"backendNodeId": backend, "executionContextId": ctx}),
        )
        .await?;
    Ok(node
        .pointer("/object/objectId")
        .and_then(Value::as_str)
        .map(|o| (frame, o.to_string())))
}

/// [`frames_at`], and the node the point ends on (`ua_shadow`: a node inside a control's
/// own shadow tree may be it).
async fn follow_point<S: CdpSession>(
    s: &S,
    (mut x, mut y): (f64, f64),
    ua_shadow: bool,
) -> Result<(Landing, Option<Hit>), WireError> {
    let mut frames = Vec::new();
    let mut session: Option<String> = None;
    let mut root = main_frame(s).await?;
    for _ in 0..crate::policy::frames::MAX_FRAME_DEPTH {
        let view = run_unjudged(
            s,
            &root,
            "() => [scrollX, scrollY, innerWidth, innerHeight]",
            &[],
        )
        .await?;
        let at = |i: usize| view.get(i).and_then(Value::as_f64).unwrap_or(0.0);
        let (sx, sy) = (at(0), at(1));
        let hit = s
            .send_in(
                session.as_deref(),
                "DOM.getNodeForLocation",
                json!({"x": (x + sx).floor() as i64, "y": (y + sy).floor() as i64, "includeUserAgentShadowDOM": ua_shadow}),
            )
            .await;
        let Ok(hit) = hit else {
            // Nothing there: off the page (inside the viewport, only a document shorter
            // than it; anything else the browser would not say).
            let inside = x >= 0.0 && y >= 0.0 && x < at(2) && y < at(3);
            return Ok(if inside {
                (
                    Landing::Unknown("the browser finds nothing under that point"),
                    None,
                )
            } else {
                (Landing::Frames(frames), None)
            });
        };
        let hit_frame = hit
            .get("frameId")
            .and_then(Value::as_str)
            .map(str::to_string);
        if let Some(frame) = &hit_frame {
            frames.push(frame.clone());
        }
        let Some(backend) = hit.get("backendNodeId") else {
            return Ok((Landing::Frames(frames), None));
        };
        let here = (
            session.clone(),
            hit_frame.unwrap_or_else(|| root.clone()),
            backend.clone(),
        );
        let node = s
            .send_in(
                session.as_deref(),
                "DOM.describeNode",
                json!({"backendNodeId": backend}),
            )
            .await?;
        let Some(inner) = node.pointer("/node/frameId").and_then(Value::as_str) else {
            return Ok((Landing::Frames(frames), Some(here)));
        };
        frames.push(inner.to_string());
        // An iframe element: its document is in this process (the hit test went on into
        // it by itself, so this is its border or padding) or in another one.
        let remote = s
            .events()
            .borrow()
            .remote_frames()
            .into_iter()
            .find(|(id, r)| id == inner && r.session.is_some());
        let Some((_, r)) = remote else {
            return Ok((Landing::Frames(frames), Some(here)));
        };
        let (ox, oy, w, h) = match owner_box(s, session.as_deref(), inner).await? {
            None => return Ok((Landing::Frames(frames), Some(here))),
            Some(Err(Turned)) => {
                return Ok((
                    Landing::Unknown("the page scales or turns the frame there"),
                    None,
                ))
            }
            Some(Ok(b)) => b,
        };
        if !((ox..ox + w).contains(&x) && (oy..oy + h).contains(&y)) {
            return Ok((Landing::Frames(frames), Some(here)));
        }
        let inner_view = run_unjudged(s, inner, "() => [innerWidth, innerHeight]", &[]).await?;
        let size = |i: usize| inner_view.get(i).and_then(Value::as_f64).unwrap_or(0.0);
        if (size(0) - w).abs() > 1.5 || (size(1) - h).abs() > 1.5 {
            return Ok((
                Landing::Unknown("the page scales or turns the frame there"),
                None,
            ));
        }
        (x, y) = (x - ox, y - oy);
        session = r.session;
        root = inner.to_string();
    }
    // Frames nested deeper than any judge follows: where the input ends is not known.
    Ok((Landing::Unknown("frames nest too deep there"), None))
}

/// The content box `(x, y, width, height)` of the iframe element showing frame `root`, in
/// the viewport of the process that holds that element (`session`); `None` when it has no
/// box (not rendered) or is gone, `Turned` when it is not an upright rectangle.
async fn owner_box<S: CdpSession>(
    s: &S,
    session: Option<&str>,
    root: &str,
) -> Result<Option<Result<(f64, f64, f64, f64), Turned>>, WireError> {
    let Ok(owner) = s
        .send_in(session, "DOM.getFrameOwner", json!({"frameId": root}))
        .await
    else {
        return Ok(None);
    };
    let Ok(model) = s
        .send_in(
            session,
            "DOM.getBoxModel",
            json!({"backendNodeId": owner.get("backendNodeId")}),
        )
        .await
    else {
        return Ok(None);
    };
    let Some(quad) = model.pointer("/model/content").and_then(Value::as_array) else {
        return Ok(None);
    };
    let quad: Vec<f64> = quad.iter().filter_map(Value::as_f64).collect();
    Ok(Some(upright_box(&quad).ok_or(Turned)))
}

/// An iframe the page mirrors, turns or skews: where input lands in it is not followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Turned;

/// The box `(x, y, width, height)` of a DOM quad (top-left, top-right, bottom-right,
/// bottom-left) when it is an upright rectangle in that order; `None` for anything else — a
/// mirrored or turned box has the same bounds but its points in another order.
pub(crate) fn upright_box(quad: &[f64]) -> Option<(f64, f64, f64, f64)> {
    let [x0, y0, x1, y1, x2, y2, x3, y3] = <[f64; 8]>::try_from(quad).ok()?;
    let near = |a: f64, b: f64| (a - b).abs() < 0.5;
    let upright = near(y0, y1) && near(x1, x2) && near(y2, y3) && near(x3, x0);
    (upright && x1 > x0 && y3 > y0).then_some((x0, y0, x1 - x0, y3 - y0))
}

/// The running command may act where keys land: the frame whose element has focus,
/// followed from the main document through focused iframe elements.
pub async fn judge_focus<S: CdpSession>(s: &S) -> Result<JudgedFocus, WireError> {
    let Some(category) = s.events().borrow().judge.as_ref().map(|j| j.category()) else {
        return Ok(JudgedFocus(()));
    };
    if !s.events().borrow().any_frame_refused(category) {
        return Ok(JudgedFocus(()));
    }
    let mut frame = main_frame(s).await?;
    for _ in 0..crate::policy::frames::MAX_FRAME_DEPTH {
        judge_frame_fresh(s, &frame).await?;
        let ctx = world(s, &frame).await?;
        let session = s.events().borrow().session_of(&frame);
        let focused = s
            .send_in(
                session.as_deref(),
                "Runtime.evaluate",
                json!({"expression": "document.activeElement", "contextId": ctx}),
            )
            .await?;
        let Some(object) = focused.pointer("/result/objectId").and_then(Value::as_str) else {
            return Ok(JudgedFocus(()));
        };
        let node = s
            .send_in(
                session.as_deref(),
                "DOM.describeNode",
                json!({"objectId": object}),
            )
            .await?;
        match node.pointer("/node/frameId").and_then(Value::as_str) {
            Some(inner) => frame = inner.to_string(),
            None => return Ok(JudgedFocus(())),
        }
    }
    Err(WireError::new(
        ErrorCode::PolicyDenied,
        "focus is too deep in nested frames to judge",
    ))
}

/// The element that has focus, as an object of Kapture's world in its frame: `(frame,
/// object id)`. Followed from the main document through focused iframe elements and open
/// shadow roots; the document's body when nothing has focus.
pub async fn focused<S: CdpSession>(s: &S) -> Result<(String, String), WireError> {
    const ACTIVE: &str = "(() => { let a = document.activeElement || document.body; \
        while (a && a.shadowRoot && a.shadowRoot.activeElement) a = a.shadowRoot.activeElement; return a; })()";
    let mut frame = main_frame(s).await?;
    for _ in 0..crate::policy::frames::MAX_FRAME_DEPTH {
        let ctx = world(s, &frame).await?;
        let session = s.events().borrow().session_of(&frame);
        let found = s
            .send_in(
                session.as_deref(),
                "Runtime.evaluate",
                json!({"expression": ACTIVE, "contextId": ctx}),
            )
            .await?;
        let Some(object) = found.pointer("/result/objectId").and_then(Value::as_str) else {
            return Err(WireError::new(
                ErrorCode::NotInteractable,
                "the document has no element that could have focus",
            ));
        };
        let node = s
            .send_in(
                session.as_deref(),
                "DOM.describeNode",
                json!({"objectId": object}),
            )
            .await?;
        match node.pointer("/node/frameId").and_then(Value::as_str) {
            Some(inner) => frame = inner.to_string(),
            None => return Ok((frame, object.to_string())),
        }
    }
    Err(WireError::new(
        ErrorCode::NotInteractable,
        "focus is too deep in nested frames to follow",
    ))
}

/// Kapture's world in `frame`'s current document, made on first use. Every page-side script
/// runs through here, so the document is judged here, each time: a command whose page
/// navigated to a denied origin while it waited (for an element, for text) stops instead
/// of acting in or reading the new document.
pub async fn world<S: CdpSession>(s: &S, frame: &str) -> Result<i64, WireError> {
    world_of(s, frame, true).await
}

/// [`world`], judging the frame's document only when `judged`.
async fn world_of<S: CdpSession>(s: &S, frame: &str, judged: bool) -> Result<i64, WireError> {
    Ok(world_made(s, frame, judged).await?.0)
}

/// [`world_of`], and whether the world was made just now (its prelude not installed yet).
async fn world_made<S: CdpSession>(
    s: &S,
    frame: &str,
    judged: bool,
) -> Result<(i64, bool), WireError> {
    let judge = |s: &S| {
        if judged {
            judge_frame(s, frame)
        } else {
            Ok(())
        }
    };
    let cached = s.events().borrow().world(frame);
    if let Some(ctx) = cached {
        judge(s)?;
        return Ok((ctx, false));
    }
    // Bounded: a page that keeps navigating while the world is made is given up on.
    for _ in 0..3 {
        let mut loader = s.events().borrow().frame_loader(frame);
        if loader.is_none() {
            refresh_frames(s).await?;
            loader = s.events().borrow().frame_loader(frame);
        }
        let loader = loader.ok_or_else(|| {
            WireError::new(ErrorCode::RefStale, "the frame of that element is gone")
        })?;
        judge(s)?;
        let session = s.events().borrow().session_of(frame);
        let res = s
            .send_in(
                session.as_deref(),
                "Page.createIsolatedWorld",
                json!({"frameId": frame, "worldName": WORLD_NAME, "grantUniveralAccess": false}),
            )
            .await?;
        let ctx = res
            .get("executionContextId")
            .and_then(Value::as_i64)
            .ok_or_else(|| {
                WireError::new(
                    ErrorCode::Internal,
                    "no execution context for Kapture's world",
                )
            })?;
        // Another document committed meanwhile (its events came before this answer): the
        // world is in a document not judged yet.
        if s.events().borrow().frame_loader(frame).as_deref() != Some(loader.as_str()) {
            continue;
        }
        s.events().borrow_mut().set_world(frame, &loader, ctx);
        return Ok((ctx, true));
    }
    Err(WireError::new(
        ErrorCode::Timeout,
        "the frame kept loading new documents; try again once it settles",
    ))
}

/// The script that installs the prelude in a world where it is not yet (`globalThis.__kp`).
pub fn prelude_install() -> String {
    format!("globalThis.__kp ??= (() => {{\n{PRELUDE}\nreturn {{ {PRELUDE_NAMES} }};\n}})();\n")
}

/// A world script with the prelude's names in scope, called with JSON `args`. With
/// `install`, it installs the prelude in the world first (where it is not yet); without,
/// it answers [`NO_PRELUDE`] where the prelude is missing.
pub fn script(function: &str, args: &[Value], install: bool) -> String {
    let args: Vec<String> = args.iter().map(Value::to_string).collect();
    let prelude = if install {
        prelude_install()
    } else {
        format!("if (!globalThis.__kp) return () => {NO_PRELUDE:?};\n")
    };
    format!(
        "(() => {{\n{prelude}const {{ {PRELUDE_NAMES} }} = globalThis.__kp;\nreturn ({function});\n}})()({})",
        args.join(", ")
    )
}

/// Whether a world script's answer says the prelude was missing (see [`script`]).
fn no_prelude(value: Option<&Value>) -> bool {
    value.and_then(Value::as_str) == Some(NO_PRELUDE)
}

/// Run a world script in `frame`; an `{error, message}` answer becomes a wire error.
/// A world lost to a navigation is made afresh once.
pub async fn run<S: CdpSession>(
    s: &S,
    frame: &str,
    function: &str,
    args: &[Value],
) -> Result<Value, WireError> {
    run_in(s, frame, function, args, true).await
}

/// [`run`] without judging the document: only for what an answer says of any page it
/// ends on (URL, title, status), which the caller withholds itself where the page may not
/// be read (`cdp::page_info`).
pub async fn run_unjudged<S: CdpSession>(
    s: &S,
    frame: &str,
    function: &str,
    args: &[Value],
) -> Result<Value, WireError> {
    run_in(s, frame, function, args, false).await
}

async fn run_in<S: CdpSession>(
    s: &S,
    frame: &str,
    function: &str,
    args: &[Value],
    judged: bool,
) -> Result<Value, WireError> {
    let mut retried = false;
    loop {
        let read = evaluate_script(s, frame, judged, function, args, true)
            .await
            .and_then(super::remote_value);
        match read {
            Err(e) if context_gone(&e) && !retried => {
                // The document was replaced: learn the new one (and its origin) before a
                // world is made in it and it is judged.
                refresh_frames(s).await?;
                retried = true;
            }
            Err(e) if e.code == ErrorCode::EvalFailed => {
                return Err(WireError::new(ErrorCode::Internal, e.message))
            }
            Err(e) => return Err(e),
            Ok(value) => return coded(value.unwrap_or(Value::Null)),
        }
    }
}

/// Evaluate a world script in `frame` (see [`script`]), sending it again with the prelude
/// where the world lacks it; answers the raw `Runtime.evaluate` result. A world the
/// browser says is gone is forgotten.
async fn evaluate_script<S: CdpSession>(
    s: &S,
    frame: &str,
    judged: bool,
    function: &str,
    args: &[Value],
    by_value: bool,
) -> Result<Value, WireError> {
    let mut install = false;
    loop {
        let (ctx, made) = world_made(s, frame, judged).await?;
        let session = s.events().borrow().session_of(frame);
        // A new world of the tab's own process has the prelude from its document's start
        // (see `cdp::prepare`); where it still lacks it, the script says so and is sent again.
        let preinstalled = session.is_none() && s.events().borrow().prelude_preinstalled;
        let expression = script(function, args, install || (made && !preinstalled));
        let params = json!({"expression": expression, "contextId": ctx, "awaitPromise": true, "returnByValue": by_value});
        let res = match s
            .send_in(session.as_deref(), "Runtime.evaluate", params)
            .await
        {
            Err(e) if context_gone(&e) => {
                s.events().borrow_mut().drop_world(ctx);
                return Err(e);
            }
            other => other?,
        };
        if install || !no_prelude(res.pointer("/result/value")) {
            return Ok(res);
        }
        install = true;
    }
}

/// Turn a page-side `{error, message}` into a wire error.
pub fn coded(value: Value) -> Result<Value, WireError> {
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

/// The element of `target` as a remote object id (for DOM.* commands), in Kapture's world.
pub async fn element_object<S: CdpSession>(s: &S, target: &Located) -> Result<String, WireError> {
    object_by(
        s,
        target,
        "async (t) => { const f = await resolve(t, 0); return f.error ? JSON.stringify(f) : f.el; }",
    )
    .await
}

/// The element `js::LOCATE` aimed at for `target` in its frame just before (not whatever
/// the target names by now), as an object of Kapture's world: where input aims is measured
/// on it. `REF_STALE` when it is gone.
pub async fn aimed_object<S: CdpSession>(s: &S, target: &Located) -> Result<String, WireError> {
    object_by(
        s,
        target,
        "async (t) => { const el = K.aimed && K.aimed.key === JSON.stringify(t) ? K.aimed.el.deref() : undefined; return el && el.isConnected ? el : JSON.stringify({ error: 'REF_STALE', message: 'the element aimed at was removed from the page' }); }",
    )
    .await
}

/// The element `function` (`async (t) => element or JSON of {error, message}`) answers for
/// `target`, as an object of Kapture's world.
async fn object_by<S: CdpSession>(
    s: &S,
    target: &Located,
    function: &str,
) -> Result<String, WireError> {
    let res = evaluate_script(
        s,
        &target.frame,
        true,
        function,
        std::slice::from_ref(&target.js),
        false,
    )
    .await?;
    if let Some(id) = res.pointer("/result/objectId").and_then(Value::as_str) {
        return Ok(id.to_string());
    }
    let err = res
        .pointer("/result/value")
        .and_then(Value::as_str)
        .unwrap_or("{}");
    coded(
        serde_json::from_str(err)
            .unwrap_or(json!({"error": "INTERNAL", "message": "element lookup failed"})),
    )
    .and_then(|_| {
        Err(WireError::new(
            ErrorCode::Internal,
            "element lookup gave no element",
        ))
    })
}

/// Centre of an element's first content quad, in top-level viewport CSS pixels.
pub async fn element_center<S: CdpSession>(
    s: &S,
    object_id: &str,
) -> Result<(f64, f64), WireError> {
    let (x, y, w, h) = element_box(s, object_id).await?;
    Ok((x + w / 2.0, y + h / 2.0))
}

/// Centre of the element `js::LOCATE` aimed at for `target`, in top-level viewport CSS
/// pixels, when its frame runs in another process (`None` when it does not): its box in
/// that process's viewport, moved by where the out-of-process iframe's content box sits in
/// the tab (the browser routes input at that point into the frame).
pub async fn remote_center<S: CdpSession>(
    s: &S,
    target: &Located,
) -> Result<Option<(f64, f64)>, WireError> {
    let Some(session) = s.events().borrow().session_of(&target.frame) else {
        return Ok(None);
    };
    let object = aimed_object(s, target).await?;
    let (x, y, w, h) = element_box_in(s, Some(&session), &object).await?;
    let (mut cx, mut cy) = (x + w / 2.0, y + h / 2.0);
    // Out through each process's root frame to the tab: each root's iframe content box,
    // in its parent's viewport, moves the point (nested out-of-process frames too).
    let mut session = Some(session);
    for _ in 0..crate::policy::frames::MAX_FRAME_DEPTH {
        let Some(current) = session else {
            return Ok(Some((cx, cy)));
        };
        let root = s
            .events()
            .borrow()
            .remote_frames()
            .into_iter()
            .find(|(_, r)| r.session.as_deref() == Some(current.as_str()));
        let Some((root, r)) = root else {
            return Err(WireError::new(
                ErrorCode::RefStale,
                "the frame of that element is gone",
            ));
        };
        let parent_session = r
            .parent
            .as_deref()
            .and_then(|p| s.events().borrow().session_of(p));
        let owner = s
            .send_in(
                parent_session.as_deref(),
                "DOM.getFrameOwner",
                json!({"frameId": root}),
            )
            .await?;
        let model = s
            .send_in(
                parent_session.as_deref(),
                "DOM.getBoxModel",
                json!({"backendNodeId": owner.get("backendNodeId")}),
            )
            .await?;
        let ox = model.pointer("/model/content/0").and_then(Value::as_f64);
        let oy = model.pointer("/model/content/1").and_then(Value::as_f64);
        let (Some(ox), Some(oy)) = (ox, oy) else {
            return Err(WireError::new(
                ErrorCode::NotInteractable,
                "the frame holding the element has no box on screen",
            ));
        };
        (cx, cy) = (cx + ox, cy + oy);
        session = parent_session;
    }
    Err(WireError::new(
        ErrorCode::NotInteractable,
        "the element is too deep in nested frames to reach",
    ))
}

/// Bounding box `(x, y, width, height)` of an element's content quads, in top-level
/// viewport CSS pixels (frames' offsets included).
pub async fn element_box<S: CdpSession>(
    s: &S,
    object_id: &str,
) -> Result<(f64, f64, f64, f64), WireError> {
    element_box_in(s, None, object_id).await
}

/// [`element_box`] of an element reached through a child session: in that session's own
/// viewport (an out-of-process frame's), not the tab's.
async fn element_box_in<S: CdpSession>(
    s: &S,
    session: Option<&str>,
    object_id: &str,
) -> Result<(f64, f64, f64, f64), WireError> {
    let res = s
        .send_in(
            session,
            "DOM.getContentQuads",
            json!({"objectId": object_id}),
        )
        .await?;
    let quad = res
        .pointer("/quads/0")
        .and_then(Value::as_array)
        .ok_or_else(|| {
            WireError::new(
                ErrorCode::NotInteractable,
                "the element has no box on screen",
            )
        })?;
    let pts: Vec<f64> = quad.iter().filter_map(Value::as_f64).collect();
    let xs = pts.iter().step_by(2);
    let ys = pts.iter().skip(1).step_by(2);
    let (x0, x1) = xs.fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
    let (y0, y1) = ys.fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
    Ok((x0, y0, x1 - x0, y1 - y0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_upright_frame_box_is_followed() {
        let upright = [10.0, 20.0, 110.0, 20.0, 110.0, 70.0, 10.0, 70.0];
        assert_eq!(upright_box(&upright), Some((10.0, 20.0, 100.0, 50.0)));
        // Mirrored (scaleX(-1)) and turned half round: the same bounds, points in another
        // order.
        let mirrored = [110.0, 20.0, 10.0, 20.0, 10.0, 70.0, 110.0, 70.0];
        let turned = [110.0, 70.0, 10.0, 70.0, 10.0, 20.0, 110.0, 20.0];
        let skewed = [10.0, 20.0, 110.0, 25.0, 110.0, 75.0, 10.0, 70.0];
        for quad in [mirrored, turned, skewed] {
            assert_eq!(upright_box(&quad), None, "{quad:?}");
        }
        assert_eq!(upright_box(&[1.0, 2.0]), None);
    }

    #[test]
    fn world_scripts_install_the_prelude_once_and_take_json_arguments() {
        let first = script("(t) => t", &[json!({"sel": "a\"b"})], true);
        assert!(first.contains("globalThis.__kp ??= (() => {\n// Kapture's page-side helpers"));
        assert!(first.contains("const resolve = async (target, waitMs, check)"));
        assert!(first.ends_with(r#"})()({"sel":"a\"b"})"#), "{first}");
        let next = script("(t) => t", &[json!(1)], false);
        assert!(!next.contains("const resolve = async"), "{next}");
        assert!(
            next.contains(&format!("return () => {NO_PRELUDE:?}")),
            "{next}"
        );
        assert!(no_prelude(Some(&json!(NO_PRELUDE))));
    }

    #[test]
    fn every_top_level_name_of_the_prelude_reaches_world_scripts() {
        let declared: std::collections::BTreeSet<&str> = PRELUDE
            .lines()
            .filter_map(|l| l.strip_prefix("const "))
            .filter_map(|l| l.split([' ', '=']).next())
            .collect();
        let exported: std::collections::BTreeSet<&str> = PRELUDE_NAMES.split(", ").collect();
        assert_eq!(declared, exported);
        // Nothing else at the top level that a script could need by name.
        for line in PRELUDE.lines() {
            assert!(
                !line.starts_with("function ")
                    && !line.starts_with("let ")
                    && !line.starts_with("var ")
                    && !line.starts_with("class "),
                "{line}"
            );
        }
    }

    #[test]
    fn page_errors_keep_their_code() {
        let err = coded(json!({"error": "REF_STALE", "message": "gone"})).unwrap_err();
        assert_eq!(
            (err.code, err.message.as_str()),
            (ErrorCode::RefStale, "gone")
        );
        assert_eq!(
            coded(json!({"error": "WHAT"})).unwrap_err().code,
            ErrorCode::Internal
        );
        assert_eq!(coded(json!({"x": 1})).unwrap(), json!({"x": 1}));
    }
}
