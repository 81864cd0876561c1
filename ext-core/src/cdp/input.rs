//! Input as a user gives it: trusted mouse and keyboard events through `Input.*` at the
//! element's place on screen (frames included), form filling, option selection.

use serde_json::{json, Value};

use super::events::RichSync;
use super::world::{self, JudgedFocus, JudgedPoint, Located};
use super::{js, keys, settle, CdpSession, ACTIONABLE_WAIT_MS};
use crate::methods::{
    ActionOutcome, Click, ElementTarget, FillForm, Hover, MouseButton, PressKey, SelectOption,
    Selected, Type,
};
use crate::protocol::{ErrorCode, WireError};

/// Wait for the target to be actionable and answer its centre in top-level viewport pixels.
pub(crate) async fn point<S: CdpSession>(s: &S, target: &Located) -> Result<(f64, f64), WireError> {
    Ok(aim(s, target).await?.at)
}

/// Where input aims at an element: its centre in top-level viewport pixels, and in its own
/// frame's (what a check in the frame's document compares with).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Aim {
    pub at: (f64, f64),
    pub local: (f64, f64),
    /// The point's offset from the centre of the aimed element's first box (in a frame,
    /// the tab's measure of that box plus this is the point).
    pub offset: (f64, f64),
    /// Aimed at the element itself; else at its label or a part drawn for it, whose point
    /// must land in the element's own frame.
    pub own: bool,
}

/// Wait for the target to be actionable and answer where input aims at it.
pub(crate) async fn aim<S: CdpSession>(s: &S, target: &Located) -> Result<Aim, WireError> {
    let found = world::run(
        s,
        &target.frame,
        js::LOCATE,
        &[target.js.clone(), json!(ACTIONABLE_WAIT_MS)],
    )
    .await?;
    let num = |k: &str| found.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let local = (num("x"), num("y"));
    let offset = (num("dx"), num("dy"));
    let own = found.get("own").and_then(Value::as_bool).unwrap_or(true);
    let main = world::main_frame(s).await?;
    if target.frame == main {
        return Ok(Aim {
            at: local,
            local,
            offset,
            own,
        });
    }
    if let Some(at) = settled_remote_point(s, target, &main, offset).await? {
        return Ok(Aim {
            at,
            local,
            offset,
            own,
        });
    }
    // Inside a frame the page's coordinates are the frame's; the browser knows the offset.
    let object = world::aimed_object(s, target).await?;
    let c = world::element_center(s, &object).await?;
    Ok(Aim {
        at: (c.0 + offset.0, c.1 + offset.1),
        local,
        offset,
        own,
    })
}

/// Whether the pointer at `at` lands in `frame` itself (not a frame inside it): a click
/// relayed through a label or a part drawn for the control must reach the control's frame.
async fn lands_in<S: CdpSession>(s: &S, at: (f64, f64), frame: &str) -> Result<bool, WireError> {
    Ok(match world::frames_at(s, at).await? {
        world::Landing::Frames(frames) => frames.last().map(String::as_str) == Some(frame),
        world::Landing::Unknown(_) => false,
    })
}

/// Refuse when `target` is no longer what the pointer is over at its aim (see `STILL_HIT`).
/// `pressed`: how many presses were given already (a double-click's second).
async fn still_hit<S: CdpSession>(
    s: &S,
    target: &Located,
    aim: &Aim,
    pressed: u32,
) -> Result<(), WireError> {
    // In a frame, the element must still be where the pointer is in the tab (its page may
    // have moved the frame, which leaves the element in place inside it: another element of
    // the frame is under the pointer then), and the frame, or a frame inside it for an iframe
    // element, what the tab's hit test reaches there (its page may cover it).
    // What was pressed before a refusal, for its message.
    let refused = |why: String| {
        let done = match pressed {
            0 => "nothing was pressed".to_string(),
            n => format!("it was pressed {n} time(s), the rest was not"),
        };
        WireError::new(ErrorCode::NotInteractable, format!("{why}: {done}"))
    };
    if !aim.own && !lands_in(s, aim.at, &target.frame).await? {
        return Err(refused(format!(
            "the point that reaches {} through its label lands in another frame",
            target.label
        )));
    }
    if target.frame != world::main_frame(s).await? {
        let c = match world::remote_center(s, target).await? {
            Some(at) => at,
            None => world::element_center(s, &world::aimed_object(s, target).await?).await?,
        };
        let now = (c.0 + aim.offset.0, c.1 + aim.offset.1);
        let stayed = (now.0 - aim.at.0).abs() < 0.5 && (now.1 - aim.at.1).abs() < 0.5;
        let reached = stayed
            && match world::frames_at(s, aim.at).await? {
                world::Landing::Frames(frames) => {
                    let events = s.events().borrow();
                    frames.iter().any(|f| events.is_within(f, &target.frame))
                }
                world::Landing::Unknown(_) => false,
            };
        if !reached {
            return Err(refused(format!(
                "the frame holding {} moved or was covered where the pointer is",
                target.label
            )));
        }
    }
    world::run(
        s,
        &target.frame,
        js::STILL_HIT,
        &[
            target.js.clone(),
            json!(aim.local.0),
            json!(aim.local.1),
            json!(pressed),
        ],
    )
    .await
    .map(drop)
}

/// How many paints an out-of-process frame's element may take to settle on screen.
const SETTLE_PAINTS: usize = 10;

/// The centre of an element in an out-of-process frame, once it stays put and the tab's hit
/// test at that point finds the frame. The element's scroll into view reaches the tab's
/// process on its own time, so a point measured at once can be where the frame was: a
/// click there would land on the page, or nowhere. `None` when the frame is in the tab's
/// process.
async fn settled_remote_point<S: CdpSession>(
    s: &S,
    target: &Located,
    main: &str,
    offset: (f64, f64),
) -> Result<Option<(f64, f64)>, WireError> {
    let mut last: Option<(f64, f64)> = None;
    for _ in 0..SETTLE_PAINTS {
        let Some(c) = world::remote_center(s, target).await? else {
            return Ok(None);
        };
        let here = (c.0 + offset.0, c.1 + offset.1);
        let still = last.is_some_and(|(x, y)| (x - here.0).abs() < 0.5 && (y - here.1).abs() < 0.5);
        let reached = match world::frames_at(s, here).await? {
            world::Landing::Frames(frames) => frames.contains(&target.frame),
            world::Landing::Unknown(_) => false,
        };
        if still && reached {
            return Ok(Some(here));
        }
        last = Some(here);
        world::run(s, main, js::NEXT_PAINT, &[]).await?;
    }
    Err(WireError::new(
        ErrorCode::NotInteractable,
        "the frame holding the element kept moving, or something covers it where it shows \
         (wait for the page to settle, or close what covers it, then try again)",
    ))
}

/// One pointer event, at a point the judge let through.
pub(crate) async fn mouse<S: CdpSession>(
    s: &S,
    kind: &str,
    at: JudgedPoint,
    extra: Value,
) -> Result<(), WireError> {
    let (x, y) = at.xy();
    let mut params = json!({"type": kind, "x": x, "y": y});
    if let (Some(obj), Value::Object(more)) = (params.as_object_mut(), extra) {
        obj.extend(more);
    }
    let sent = send_input(s, "Input.dispatchMouseEvent", params).await;
    s.events().borrow_mut().pointer = sent.is_ok().then_some((x, y));
    sent
}

/// How long the page may take to accept one input event before we look for a dialog.
const INPUT_ACK: std::time::Duration = std::time::Duration::from_secs(10);

/// Send one input event. The browser answers once the page handled it, and holds back the
/// session's other messages meanwhile; a dialog opened by the handler holds both until it
/// is answered. So a slow answer ends the command with `DIALOG_OPEN` instead of a hang.
async fn send_input<S: CdpSession>(s: &S, method: &str, params: Value) -> Result<(), WireError> {
    match crate::platform::timeout(INPUT_ACK, s.send(method, params)).await {
        Some(res) => res.map(drop),
        None => Err(super::dialog::blocked_by_dialog(s)),
    }
}

/// Click at `at`; with `aimed`, only while that element is still what the pointer is over.
pub(crate) async fn click_at<S: CdpSession>(
    s: &S,
    at: (f64, f64),
    aimed: Option<(&Located, &Aim)>,
    button: MouseButton,
    double: bool,
    modifiers: u32,
) -> Result<(), WireError> {
    let button = match button {
        MouseButton::Left => "left",
        MouseButton::Right => "right",
        MouseButton::Middle => "middle",
    };
    rich_form_synced(s).await;
    // Judged where it lands: a click on an iframe element lands in the frame's document.
    // And judged again once the pointer is there and before a second click, since the
    // page's own handlers of those events may move a refused frame under it.
    let judged = world::judge_point(s, at).await?;
    // The pointer goes there first, as a person's does. Where the last event left it
    // already (a second click on the same spot) it stays: the browser hands a move to the
    // page with its next frame, so a move there would only wait for one.
    if s.events().borrow().pointer != Some(judged.xy()) {
        mouse(s, "mouseMoved", judged, json!({"modifiers": modifiers})).await?;
    }
    let clicks: &[u32] = if double { &[1, 2] } else { &[1] };
    for &count in clicks {
        let judged = world::judge_point(s, at).await?;
        if let Some((target, aim)) = aimed {
            still_hit(s, target, aim, count - 1).await?;
        }
        let extra = json!({"button": button, "clickCount": count, "modifiers": modifiers});
        // A press and its release are sent together: the session runs them in order.
        futures::future::try_join(
            mouse(s, "mousePressed", judged, extra.clone()),
            mouse(s, "mouseReleased", judged, extra),
        )
        .await?;
    }
    Ok(())
}

/// Press at `a`, move to `b` in steps, release. An HTML drag (draggable elements) is handed
/// to us by the browser instead of its own drag loop, and dropped with drag events.
pub(crate) async fn drag_between<S: CdpSession>(
    s: &S,
    a: (f64, f64),
    b: (f64, f64),
) -> Result<(), WireError> {
    s.send("Input.setInterceptDrags", json!({"enabled": true}))
        .await?;
    let intercepted = s
        .events()
        .borrow_mut()
        .wait_for(|m, _| m == "Input.dragIntercepted");
    let left = json!({"button": "left", "buttons": 1, "clickCount": 1});
    let start = world::judge_point(s, a).await?;
    world::judge_point(s, b).await?;
    mouse(s, "mouseMoved", start, json!({})).await?;
    mouse(s, "mousePressed", start, left.clone()).await?;
    const STEPS: u32 = 5;
    for i in 1..=STEPS {
        let t = f64::from(i) / f64::from(STEPS);
        let p = (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
        // Each step lands somewhere too: a drag over a refused frame is refused.
        let p = world::judge_point(s, p).await?;
        mouse(s, "mouseMoved", p, json!({"button": "left", "buttons": 1})).await?;
    }
    // The moves above are round trips: a drag that started has been reported by now.
    let drop_data =
        match crate::platform::timeout(std::time::Duration::from_millis(50), intercepted).await {
            Some(Ok((_, params))) => params.get("data").cloned(),
            _ => None,
        };
    // Where it is dropped is judged again: the page's handlers of the moves may have moved
    // a refused frame there.
    let end = world::judge_point(s, b).await?;
    if let Some(data) = drop_data {
        let (x, y) = end.xy();
        for kind in ["dragEnter", "dragOver", "drop"] {
            s.send(
                "Input.dispatchDragEvent",
                json!({"type": kind, "x": x, "y": y, "data": data, "modifiers": 0}),
            )
            .await?;
        }
    }
    mouse(s, "mouseReleased", end, left).await?;
    s.send("Input.setInterceptDrags", json!({"enabled": false}))
        .await
        .map(drop)
}

/// A trusted click at the element's centre after scrolling it into view.
pub async fn click<S: CdpSession>(s: &S, p: &Click) -> Result<ActionOutcome, WireError> {
    let target = world::locate_target(s, &p.target).await?;
    let before = s.events().borrow().nav.mark();
    let aim = aim(s, &target).await?;
    let modifiers = keys::modifier_mask(&p.modifiers);
    // The browser routes a click into an out-of-process frame by that frame's hit-test
    // data, which can lag behind its layout on a busy machine: the click then lands on the
    // parent's iframe element and is lost. Such a click is checked for having arrived, and
    // sent again after the frame painted, so "Clicked" is only said of a click that landed.
    let remote = s.events().borrow().session_of(&target.frame).is_some();
    for attempt in 0..=CLICK_RESENDS {
        let presses = if remote {
            Some(world::run(s, &target.frame, js::PRESSES, &[]).await?)
        } else {
            None
        };
        click_at(
            s,
            aim.at,
            Some((&target, &aim)),
            p.button,
            p.double_click,
            modifiers,
        )
        .await?;
        let Some(presses) = presses else { break };
        if world::run(s, &target.frame, js::PRESSES, &[]).await? != presses {
            break;
        }
        if attempt == CLICK_RESENDS {
            return Err(WireError::new(
                ErrorCode::NotInteractable,
                "the click did not reach the element's frame (the browser routed it elsewhere)",
            ));
        }
        world::run(s, &target.frame, js::NEXT_PAINT, &[]).await?;
    }
    settle(s, before, super::navigation::GRACE_MS).await
}

/// How often a click into an out-of-process frame that did not arrive is sent again.
const CLICK_RESENDS: usize = 3;

/// Move the mouse over the element's centre.
pub async fn hover<S: CdpSession>(s: &S, p: &Hover) -> Result<ActionOutcome, WireError> {
    let target = world::locate_target(s, &p.target).await?;
    let before = s.events().borrow().nav.mark();
    let at = world::judge_point(s, point(s, &target).await?).await?;
    mouse(s, "mouseMoved", at, json!({})).await?;
    settle(s, before, 0.0).await
}

/// Text into the focused field at once (as a paste or an IME's commit), to a focus the
/// judge let through.
async fn insert_text<S: CdpSession>(s: &S, _: &JudgedFocus, text: &str) -> Result<(), WireError> {
    s.send("Input.insertText", json!({"text": text}))
        .await
        .map(drop)
}

/// One key event, to a focus the judge let through.
async fn key_event<S: CdpSession>(
    s: &S,
    _: &JudgedFocus,
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
    send_input(s, "Input.dispatchKeyEvent", params).await
}

async fn press_chord<S: CdpSession>(
    s: &S,
    focus: &JudgedFocus,
    chord: &keys::Chord,
) -> Result<(), WireError> {
    rich_form_synced(s).await;
    let mut held = 0;
    for m in &chord.modifiers {
        held |= keys::modifier_bit(*m);
        key_event(s, focus, "keyDown", &keys::modifier_key(*m), held).await?;
    }
    key_event(s, focus, "keyDown", &chord.key, held).await?;
    key_event(s, focus, "keyUp", &chord.key, held).await?;
    for m in chord.modifiers.iter().rev() {
        held &= !keys::modifier_bit(*m);
        key_event(s, focus, "keyUp", &keys::modifier_key(*m), held).await?;
    }
    Ok(())
}

/// Press a key or a combination on whatever has focus.
pub async fn press_key<S: CdpSession>(s: &S, p: &PressKey) -> Result<ActionOutcome, WireError> {
    let chord = keys::parse_chord(&p.key)?;
    let before = s.events().borrow().nav.mark();
    // Keys land in the focused document, which may be a frame's.
    let focus = world::judge_focus(s).await?;
    press_chord(s, &focus, &chord).await?;
    settle(s, before, super::navigation::GRACE_MS).await
}

/// The grace window for a navigation after typing: a submit (Enter, the form's button) may
/// start one a little later; typing alone starts one only in the handlers it runs, which
/// have reported it by the time the typing is answered.
fn grace(submit: bool) -> f64 {
    if submit {
        super::navigation::GRACE_MS
    } else {
        0.0
    }
}

/// Whether the field `PREPARE_TYPE` described is confidential (password, one-time code,
/// card), by the recorder's rules: decided on the element typed into, however the agent
/// named it.
fn confidential(prep: &Value) -> bool {
    prep.get("field")
        .and_then(crate::recorder::confidential_field)
        .is_some()
}

/// Replace a field's content as a user would; no settle (callers do). Answers whether the
/// field is confidential.
async fn fill<S: CdpSession>(
    s: &S,
    target: &Located,
    text: &str,
    slowly: bool,
    only_on: Option<&str>,
) -> Result<bool, WireError> {
    let prep = world::run(
        s,
        &target.frame,
        js::PREPARE_TYPE,
        &[
            target.js.clone(),
            json!(ACTIONABLE_WAIT_MS),
            json!(text),
            json!(only_on),
        ],
    )
    .await?;
    let secret = confidential(&prep);
    if prep.get("mode").and_then(Value::as_str) != Some("insert") {
        return Ok(secret);
    }
    // Keys land where the focus is, and the page's own focus handlers may have moved it to
    // another frame: judged there before any key or text goes in.
    let focus = world::judge_focus(s).await?;
    let focus = &focus;
    let was_empty = prep.get("empty").and_then(Value::as_bool).unwrap_or(false);
    let rich = prep.get("rich").and_then(Value::as_bool).unwrap_or(false);
    if prep.get("proxy").and_then(Value::as_bool).unwrap_or(false) {
        // A code editor's hidden input: the editor's text is selected by its own keys.
        press_chord(s, focus, &keys::parse_chord("Control+a")?).await?;
    }
    // A rich-text editor (contenteditable) also hears the typing's last key as a person's
    // typing ends: editors and apps that note a change on key events (CKEditor 4's
    // `change`, autosave and "unsaved" flags on keyup) miss text that arrives as input
    // alone. The rest arrives at once, as a paste or an IME's commit does.
    let last_key = text
        .chars()
        .last()
        .filter(|c| rich && (c.is_alphanumeric() || c.is_ascii_punctuation() || *c == ' '));
    if text.is_empty() || slowly {
        if !was_empty {
            press_chord(s, focus, &keys::parse_chord("Backspace")?).await?;
        }
        if slowly {
            for c in text.chars() {
                let key = keys::char_key(c);
                key_event(s, focus, "keyDown", &key, 0).await?;
                key_event(s, focus, "keyUp", &key, 0).await?;
            }
        }
    } else {
        // Awaited before the change event: the text travels the input pipeline and a
        // script the DevTools path, so a change sent alongside can overtake it (seen under
        // load: the page's change handler read an empty field).
        let head = match last_key {
            Some(c) => &text[..text.len() - c.len_utf8()],
            None => text,
        };
        if !head.is_empty() {
            insert_text(s, focus, head).await?;
        }
        if let Some(c) = last_key {
            let key = keys::char_key(c);
            key_event(s, focus, "keyDown", &key, 0).await?;
            key_event(s, focus, "keyUp", &key, 0).await?;
        }
    }
    world::run(s, &target.frame, js::DISPATCH_CHANGE, &[]).await?;
    if rich {
        // The editor's model has the text now, but the form it is in may get it only when
        // the editor copies it there (Draftail: 250 ms after the last change, and the blur
        // of a click on "Publish" starts that wait afresh): a submit right after the
        // typing would send the old value. The next click or key in this tab first waits
        // until a field of the form took the text (`rich_form_synced`); an agent whose next
        // call comes later waits for nothing.
        s.events().borrow_mut().rich_sync = Some(RichSync {
            frame: target.frame.clone(),
            at: crate::platform::now_ms(),
            mark: sync_mark(text).map(str::to_string),
        });
    }
    Ok(secret)
}

/// Before a click or a key: wait (bounded by [`RICH_FORM_SYNC_MS`] from the typing) until
/// the form around a rich-text editor typed into just before holds the text, so a submit
/// sends it. Best effort: a frame gone or a page that cannot be asked is not waited on.
async fn rich_form_synced<S: CdpSession>(s: &S) {
    let Some(pending) = s.events().borrow_mut().rich_sync.take() else {
        return;
    };
    let left = RICH_FORM_SYNC_MS as f64 - (crate::platform::now_ms() - pending.at);
    if left <= 0.0 {
        return;
    }
    let _ = world::run(
        s,
        &pending.frame,
        RICH_FORM_SYNCED,
        &[json!(left.ceil()), json!(pending.mark)],
    )
    .await;
}

/// How long after typing into a rich-text editor inside a form the next click or key waits,
/// at most, for the form's fields to take the text (editors copy it there after a pause of their own: Draftail's is
/// 250 ms; common debounces are 300 to 500 ms).
const RICH_FORM_SYNC_MS: u64 = 750;

/// What a form field that took typed text holds, whatever markup or JSON the editor wraps
/// it in: the text's longest ASCII word (escaped the same in HTML and JSON), else the text
/// itself; `None` for no text (a field that changed at all took it).
fn sync_mark(text: &str) -> Option<&str> {
    let word = text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .max_by_key(|w| w.len())
        .filter(|w| w.len() >= 3);
    word.or(Some(text.trim()).filter(|t| !t.is_empty()))
}

/// Wait until a field of the form `PREPARE_TYPE` noted around a rich-text editor changed
/// and holds `mark` (any change when `mark` is null), up to `maxMs`: other fields change
/// on their own meanwhile (Wagtail fills the slug in when the title loses focus). Answers
/// `{synced: true|false|null}` (`null`: the editor is in no form).
const RICH_FORM_SYNCED: &str = r#"async (maxMs, mark) => {
  const noted = K.richForm; K.richForm = null;
  const form = noted && noted.form.deref();
  if (!form || !form.isConnected) return { synced: null };
  const took = () => [...form.elements].some((e, i) => {
    const v = e.type === 'file' ? '' : String(e.value);
    return v !== noted.before[i] && (mark === null || v.includes(mark));
  });
  const start = performance.now();
  while (!took()) {
    if (performance.now() - start >= maxMs) return { synced: false };
    await new Promise((res) => setTimeout(res, 10));
  }
  return { synced: true, ms: Math.round(performance.now() - start) };
}"#;

/// Fill a field as a user would: focus, replace the content, fire input and change events.
pub async fn type_text<S: CdpSession>(s: &S, p: &Type) -> Result<ActionOutcome, WireError> {
    let target = world::locate_target(s, &p.target).await?;
    let before = s.events().borrow().nav.mark();
    let secret = fill(s, &target, &p.text, p.slowly, p.only_on.as_deref()).await?;
    if p.submit {
        // The field's handlers may have moved the focus since the typing: judged again.
        let focus = world::judge_focus(s).await?;
        press_chord(s, &focus, &keys::parse_chord("Enter")?).await?;
    }
    let mut outcome = settle(s, before, grace(p.submit)).await?;
    if secret {
        outcome.confidential.push(0);
    }
    Ok(outcome)
}

async fn select_in<S: CdpSession>(
    s: &S,
    target: &Located,
    values: &[String],
) -> Result<Vec<String>, WireError> {
    if values.is_empty() {
        return Err(WireError::new(
            ErrorCode::BadArgs,
            "values is empty: name at least one option",
        ));
    }
    let v = world::run(
        s,
        &target.frame,
        js::SELECT_OPTIONS,
        &[target.js.clone(), json!(ACTIONABLE_WAIT_MS), json!(values)],
    )
    .await?;
    Ok(v.get("values")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default())
}

/// Choose options of a `<select>` by value or label.
pub async fn select_option<S: CdpSession>(s: &S, p: &SelectOption) -> Result<Selected, WireError> {
    let target = world::locate_target(s, &p.target).await?;
    let values = select_in(s, &target, &p.values).await?;
    Ok(Selected {
        tab_id: s.tab_id(),
        values,
    })
}

fn truthy(value: &str) -> Result<bool, WireError> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" | "on" | "yes" | "checked" | "1" => Ok(true),
        "false" | "off" | "no" | "unchecked" | "0" | "" => Ok(false),
        other => Err(WireError::new(
            ErrorCode::BadArgs,
            format!("{other:?} is not a checkbox value; use \"true\" or \"false\""),
        )),
    }
}

/// Fill several fields of any kind in one call, then optionally submit.
pub async fn fill_form<S: CdpSession>(s: &S, p: &FillForm) -> Result<ActionOutcome, WireError> {
    if p.fields.is_empty() {
        return Err(WireError::new(ErrorCode::BadArgs, "fields is empty"));
    }
    let before = s.events().borrow().nav.mark();
    let mut last = None;
    let mut confidential = Vec::new();
    for (i, field) in p.fields.iter().enumerate() {
        let target = world::locate_target(s, &field.target)
            .await
            .map_err(|e| at_field(e, i, &field.target))?;
        let kind = world::run(
            s,
            &target.frame,
            js::FIELD_KIND,
            &[target.js.clone(), json!(ACTIONABLE_WAIT_MS)],
        )
        .await
        .map_err(|e| at_field(e, i, &field.target))?;
        let done = match kind.get("kind").and_then(Value::as_str) {
            Some("select") => select_in(s, &target, std::slice::from_ref(&field.value))
                .await
                .map(drop),
            Some("check") => {
                let want = truthy(&field.value)?;
                if kind.get("checked").and_then(Value::as_bool) != Some(want) {
                    let aim = aim(s, &target).await?;
                    click_at(
                        s,
                        aim.at,
                        Some((&target, &aim)),
                        MouseButton::Left,
                        false,
                        0,
                    )
                    .await
                } else {
                    Ok(())
                }
            }
            _ => fill(s, &target, &field.value, false, None)
                .await
                .map(|secret| {
                    if secret {
                        confidential.push(i);
                    }
                }),
        };
        done.map_err(|e| at_field(e, i, &field.target))?;
        last = Some(target);
    }
    if let (true, Some(target)) = (p.submit, last) {
        let res = world::run(
            s,
            &target.frame,
            js::SUBMIT_FORM,
            std::slice::from_ref(&target.js),
        )
        .await?;
        if let Some(button) = res.get("button").and_then(Value::as_u64) {
            let located = Located {
                frame: target.frame.clone(),
                js: json!({"id": button, "ref": "the submit button"}),
                label: "submit".into(),
            };
            let aim = aim(s, &located).await?;
            click_at(
                s,
                aim.at,
                Some((&located, &aim)),
                MouseButton::Left,
                false,
                0,
            )
            .await?;
        }
    }
    let mut outcome = settle(s, before, grace(p.submit)).await?;
    outcome.confidential = confidential;
    Ok(outcome)
}

fn at_field(mut e: WireError, index: usize, target: &ElementTarget) -> WireError {
    e.message = format!("field {} ({}): {}", index + 1, target.describe(), e.message);
    e
}
