//! The element picker: a person points at an element (an outline follows the pointer in
//! Kapture's world of every frame it may read, frames added or reloaded meanwhile included; a
//! trusted click on the outlined element picks, Esc cancels) and the answer is the element's
//! page-model line with a real ref of the page model, and the recorder's ranked locators.
//! Page side in `page/pick.js`; the polling, the deadline, the clean-up and the answer here,
//! target-independent. A pick is one command: the frames it put a picker in are kept in
//! `TabEvents::picker` until it removed them, and the tab's queue ends whatever a stopped
//! command left ([`end_live`]) before anything else runs on the tab.

use std::collections::HashSet;

use serde_json::{json, Value};

use super::world::{self, FrameInfo};
use super::{js, CdpSession};
use crate::methods::{Pick, Picked, PickedLocator, PICK_DEFAULT_SECS, PICK_MAX_SECS};
use crate::platform;
use crate::protocol::{ErrorCode, WireError};
use crate::recorder::{self, ElementDescriptor, Locator};
use crate::snapshot::{self, FrameKey, Page, RawNode, RefTable, RenderOptions, ShownRef, Walk};

/// Longest one poll of a frame waits in the page for an outcome.
const POLL_WAIT_MS: f64 = 250.0;
/// How often the frame tree is read again for frames added or reloaded during the pick.
const REFRESH_MS: f64 = 1_000.0;
/// A picker no poll reached for this long removes itself (the last resort when the worker
/// went away: Kapture ends it with its command).
const IDLE_MS: u64 = 3_000;
/// Nodes the walk under the picked element reads: only its own line is answered.
const WALK_NODES: u32 = 200;
/// Longest prompt shown in the page.
const PROMPT_MAX: usize = 300;

/// A picker in the page: its token and every document (frame, loader) it was (or may have
/// been) put in.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LivePicker {
    pub token: String,
    pub frames: Vec<(String, String)>,
}

/// How a pick ended in one frame's poll.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Waiting,
    Picked {
        id: u32,
        descriptor: Box<ElementDescriptor>,
    },
    Cancelled,
    /// No picker of this pick in the frame: its document was replaced.
    Gone,
}

fn outcome(v: &Value) -> Outcome {
    if let Some(p) = v.get("picked") {
        let id = p.get("id").and_then(Value::as_u64).unwrap_or(0) as u32;
        let descriptor = p
            .get("descriptor")
            .cloned()
            .and_then(|d| serde_json::from_value(d).ok())
            .unwrap_or_default();
        return Outcome::Picked {
            id,
            descriptor: Box::new(descriptor),
        };
    }
    if v.get("cancelled").and_then(Value::as_bool) == Some(true) {
        return Outcome::Cancelled;
    }
    if v.get("gone").and_then(Value::as_bool) == Some(true) {
        return Outcome::Gone;
    }
    Outcome::Waiting
}

/// The person's wait in seconds, or `BAD_ARGS`.
fn wait_secs(p: &Pick) -> Result<f64, WireError> {
    let secs = p.timeout.unwrap_or(PICK_DEFAULT_SECS);
    if !(secs > 0.0 && secs <= PICK_MAX_SECS) {
        return Err(WireError::new(
            ErrorCode::BadArgs,
            format!("timeout is in seconds, more than 0 and at most {PICK_MAX_SECS}"),
        ));
    }
    Ok(secs)
}

fn navigated() -> WireError {
    WireError::new(
        ErrorCode::RefStale,
        "the page navigated during the pick: nothing was picked (the picker went with the old page); ask again on the new page",
    )
}

/// One call into a frame's picker, bounded: a frame stuck in a long task (or an
/// out-of-process one that stopped answering) is dropped, never the whole pick.
async fn in_frame<S: CdpSession>(
    s: &S,
    frame: &str,
    script: &str,
    args: &[serde_json::Value],
    judged: bool,
) -> Result<serde_json::Value, WireError> {
    let limit = std::time::Duration::from_millis(POLL_WAIT_MS as u64 + 1000);
    let run = async {
        if judged {
            world::run(s, frame, script, args).await
        } else {
            world::run_unjudged(s, frame, script, args).await
        }
    };
    platform::timeout(limit, run).await.unwrap_or_else(|| {
        Err(WireError::new(
            ErrorCode::Timeout,
            "a frame's picker did not answer in time",
        ))
    })
}

/// Remove the tab's picker, if one is in the page, from every document it was put in, all
/// at once (best effort: a frame stuck removes its own when no poll comes). A document
/// replaced since took its picker with it and is not touched. Removing Kapture's own overlay
/// from a document it was judged fit for reads nothing of the page: not judged again (the
/// rules may have changed; the overlay must still go).
pub async fn end_live<S: CdpSession>(s: &S) {
    let Some(live) = s.events().borrow_mut().picker.take() else {
        return;
    };
    let token = json!(live.token);
    let still: Vec<String> = {
        let events = s.events().borrow();
        live.frames
            .iter()
            .filter(|(f, loader)| events.frame_loader(f).as_deref() == Some(loader.as_str()))
            .map(|(f, _)| f.clone())
            .collect()
    };
    let ends = still
        .iter()
        .map(|f| in_frame(s, f, js::PICK_END, std::slice::from_ref(&token), false));
    futures::future::join_all(ends).await;
}

/// What the frames of a pick hold: the documents (frame, loader) a picker was tried in, and
/// the frames polled now.
struct Frames {
    tried: HashSet<(String, String)>,
    polled: Vec<String>,
}

/// Put the picker in every frame of `tree` whose current document has not had it tried
/// yet, all at once (a slow frame holds up neither the others nor the polls for long): the
/// main frame must take it; a child frame that cannot (the policy withholds it, it is
/// stuck) is left out until its document changes. Each document is noted in the tab's live
/// picker before the call, so a command stopped meanwhile still has it ended; one that
/// refused the picker (the policy) is forgotten again.
async fn install<S: CdpSession>(
    s: &S,
    tree: &[FrameInfo],
    frames: &mut Frames,
    token: &str,
    opts: &Value,
) -> Result<(), WireError> {
    let main = &tree[0].id;
    let new: Vec<&FrameInfo> = tree
        .iter()
        .filter(|f| frames.tried.insert((f.id.clone(), f.loader.clone())))
        .collect();
    if let Some(live) = s.events().borrow_mut().picker.as_mut() {
        live.frames
            .extend(new.iter().map(|f| (f.id.clone(), f.loader.clone())));
    }
    let starts = new.iter().map(|f| {
        let mut opts = opts.clone();
        opts["banner"] = json!(f.id == *main);
        async move { in_frame(s, &f.id, js::PICK_START, &[json!(token), opts], true).await }
    });
    let started = futures::future::join_all(starts).await;
    let mut main_failed = None;
    for (f, result) in new.into_iter().zip(started) {
        match result {
            Ok(_) => {
                if !frames.polled.contains(&f.id) {
                    frames.polled.push(f.id.clone());
                }
            }
            Err(e) => {
                // A frame that did not answer in time may yet have installed it (polled: a
                // poll that finds none drops it); one that refused it did not.
                if e.code == ErrorCode::Timeout && f.id != *main && !frames.polled.contains(&f.id) {
                    frames.polled.push(f.id.clone());
                }
                if e.code != ErrorCode::Timeout {
                    let doc = (f.id.clone(), f.loader.clone());
                    if let Some(live) = s.events().borrow_mut().picker.as_mut() {
                        live.frames.retain(|d| *d != doc);
                    }
                }
                if f.id == *main {
                    main_failed = Some(e);
                }
            }
        }
    }
    main_failed.map_or(Ok(()), Err)
}

/// Let the person pick an element of the tab's page.
pub async fn pick<S: CdpSession>(s: &S, p: &Pick) -> Result<Picked, WireError> {
    let secs = wait_secs(p)?;
    // One picker per tab at a time (the queue already ended any earlier one).
    end_live(s).await;
    let token = format!("pick-{}-{}", s.tab_id(), platform::now_ms() as u64);
    s.events().borrow_mut().picker = Some(LivePicker {
        token: token.clone(),
        frames: Vec::new(),
    });
    let picked = picking(s, secs, p, &token).await;
    // Whatever the outcome, the picker goes before the answer (and before the walk reads
    // the picked element's line).
    end_live(s).await;
    let (tree, frame, id, descriptor) = picked?;
    answer(s, &tree, &frame, id, &descriptor).await
}

/// A picked element: the frames as last read, its frame, its registry id and description.
type Found = (Vec<FrameInfo>, String, u32, Box<ElementDescriptor>);

/// The pick itself: install, poll until an outcome, the deadline or a navigation, and look
/// for new frames meanwhile. Leaves the pickers in the page (the caller ends them).
async fn picking<S: CdpSession>(
    s: &S,
    secs: f64,
    p: &Pick,
    token: &str,
) -> Result<Found, WireError> {
    let prompt = p
        .prompt
        .as_deref()
        .map(|t| t.chars().take(PROMPT_MAX).collect::<String>());
    let opts = json!({
        "ms": secs * 1000.0,
        "prompt": prompt,
        "idleMs": IDLE_MS,
    });
    let mut tree = world::refresh_frames(s).await?;
    let (main, main_loader) = (tree[0].id.clone(), tree[0].loader.clone());
    let mut frames = Frames {
        tried: HashSet::new(),
        polled: Vec::new(),
    };
    install(s, &tree, &mut frames, token, &opts).await?;
    let loader = s.events().borrow().frame_loader(&main);
    let started = platform::now_ms();
    let deadline = started + secs * 1000.0;
    let mut next_refresh = started + REFRESH_MS;
    // Bounded in time by the deadline, and in count: each round waits up to a poll's time.
    let rounds = (secs * 1000.0 / POLL_WAIT_MS) as usize * 4 + 100;
    for _ in 0..rounds {
        let left = deadline - platform::now_ms();
        if left <= 0.0 {
            break;
        }
        if s.events().borrow().frame_loader(&main) != loader {
            return Err(navigated());
        }
        let wait = left.clamp(1.0, POLL_WAIT_MS).round();
        let args = [json!(token), json!(wait)];
        let polls = frames
            .polled
            .iter()
            .map(|f| in_frame(s, f, js::PICK_POLL, &args, true));
        let answers = futures::future::join_all(polls).await;
        let mut still = Vec::new();
        let mut done = None;
        for (f, answer) in frames.polled.iter().zip(answers) {
            match answer.map(|v| outcome(&v)) {
                Ok(Outcome::Waiting) => still.push(f.clone()),
                Ok(Outcome::Picked { id, descriptor }) if done.is_none() => {
                    done = Some(Ok((f.clone(), id, descriptor)));
                }
                Ok(Outcome::Cancelled) if done.is_none() => {
                    done = Some(Err(WireError::new(
                        ErrorCode::ApprovalDenied,
                        "the person cancelled the pick (Esc): nothing was picked",
                    )));
                }
                Ok(Outcome::Gone) if *f == main => done = Some(Err(navigated())),
                // A frame busy past a poll's time (a long task) is asked again: its picker
                // keeps the outcome until it is read.
                Err(e) if e.code == ErrorCode::Timeout => still.push(f.clone()),
                // A document gone is the navigation; anything else (a closed tab) says itself.
                Err(e) if *f == main => {
                    let gone = e.code == ErrorCode::RefStale || super::context_gone(&e);
                    done = Some(Err(if gone { navigated() } else { e }));
                }
                // A child frame whose document was replaced gets the picker again once the
                // frames are read again; one that stopped answering is polled no more (it is
                // still ended with the rest).
                Ok(Outcome::Gone) | Err(_) => {}
                Ok(_) => still.push(f.clone()),
            }
        }
        frames.polled = still;
        match done {
            None => {}
            Some(Err(e)) => return Err(e),
            Some(Ok((frame, id, descriptor))) => return Ok((tree, frame, id, descriptor)),
        }
        // Frames added or reloaded since: a picker for each that may be read.
        if platform::now_ms() >= next_refresh {
            next_refresh = platform::now_ms() + REFRESH_MS;
            if let Ok(fresh) = world::refresh_frames(s).await {
                // A new main document is the navigation the next round reports.
                if fresh.first().map(|f| (&f.id, &f.loader)) == Some((&main, &main_loader)) {
                    tree = fresh;
                    install(s, &tree, &mut frames, token, &opts).await?;
                }
            }
        }
    }
    Err(WireError::new(
        ErrorCode::Timeout,
        format!("nobody picked an element within {secs} s; the picker is gone from the page"),
    ))
}

/// The answer for the element `id` (registry id in Kapture's world of `frame`).
async fn answer<S: CdpSession>(
    s: &S,
    tree: &[FrameInfo],
    frame: &str,
    id: u32,
    descriptor: &ElementDescriptor,
) -> Result<Picked, WireError> {
    let target = json!({"id": id, "ref": "the picked element"});
    let raw = world::run(s, frame, js::WALKER_TEXT, &[target, json!(WALK_NODES)]).await?;
    let walk = super::read::walk_of(&raw)?;
    let key = FrameKey {
        frame_id: frame.to_string(),
        loader_id: s.events().borrow().frame_loader(frame).unwrap_or_default(),
    };
    let (line, element_ref, shown) = {
        let mut state = s.events().borrow_mut();
        line_of(walk, &key, id, descriptor, &mut state.refs)
    };
    let frame_url = tree
        .iter()
        .find(|f| f.id == frame && f.parent.is_some())
        .map(|f| f.url.clone());
    Ok(Picked {
        tab_id: s.tab_id(),
        line,
        element_ref,
        shown,
        locators: ranked(descriptor),
        frame_url,
    })
}

/// The picked element's page-model line and its ref: the walk's line for the element when
/// the walk shows it, else a line made from what the recorder saw of it (an element the
/// model folds away, such as a plain wrapper). The ref is the page model's own, from the
/// same table, for the same registry id — never a second scheme.
pub fn line_of(
    walk: Walk,
    key: &FrameKey,
    id: u32,
    d: &ElementDescriptor,
    refs: &mut RefTable,
) -> (String, String, Option<ShownRef>) {
    let mut page = Page::from_walk(walk, key.clone());
    let root = match page.node_by_local(0, id) {
        Some(i) => i,
        None => {
            let role = if d.role.trim().is_empty() {
                d.tag.clone()
            } else {
                d.role.clone()
            };
            let own = RawNode {
                r: Some(role),
                n: Some(d.accessible_name.clone()).filter(|n| !n.trim().is_empty()),
                i: Some(id),
                ..RawNode::default()
            };
            page = Page::from_walk(
                Walk {
                    nodes: vec![own],
                    ..Walk::default()
                },
                key.clone(),
            );
            0
        }
    };
    let opts = RenderOptions {
        max_chars: 4_000,
        depth: Some(0),
        ..RenderOptions::default()
    };
    let out = snapshot::render(&page, Some(root), refs, &opts);
    let element_ref = refs.ref_for(key, id);
    let line = out
        .lines
        .first()
        .map(|l| l.trim().to_string())
        .unwrap_or_default();
    let shown = out.refs.into_iter().find(|r| r.element_ref == element_ref);
    (line, element_ref, shown)
}

/// The recorder's locators of the element, best first, each with its Playwright form.
pub fn ranked(d: &ElementDescriptor) -> Vec<PickedLocator> {
    recorder::locators(d)
        .into_iter()
        .map(|l| PickedLocator {
            code: playwright(&l),
            locator: l,
        })
        .collect()
}

/// A locator as a Playwright locator expression (`getByRole("button", { name: "Buy" })`).
pub fn playwright(l: &Locator) -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let plain_id = |id: &str| {
        id.starts_with(|c: char| c.is_ascii_alphabetic())
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    match l {
        Locator::TestId(v) => format!("getByTestId({})", q(v)),
        Locator::Role(role, name) => format!("getByRole({}, {{ name: {} }})", q(role), q(name)),
        Locator::Label(v) => format!("getByLabel({})", q(v)),
        Locator::Id(v) if plain_id(v) => format!("locator({})", q(&format!("#{v}"))),
        Locator::Id(v) => format!("locator({})", q(&format!("[id={}]", q(v)))),
        Locator::Name(v) => format!("locator({})", q(&format!("[name={}]", q(v)))),
        Locator::Text(v) => format!("getByText({})", q(v)),
        Locator::Css(v) => format!("locator({})", q(v)),
        Locator::XPath(v) => format!("locator({})", q(&format!("xpath={v}"))),
    }
}

/// Time a pick's command needs at most for a wait of `secs` (the person's wait and the
/// grace for installing, removing and answering).
pub fn command_ms(secs: Option<f64>) -> u64 {
    let secs = secs.unwrap_or(PICK_DEFAULT_SECS).clamp(0.0, PICK_MAX_SECS);
    (secs * 1000.0) as u64 + crate::methods::PICK_GRACE_MS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> FrameKey {
        FrameKey {
            frame_id: "M".into(),
            loader_id: "L1".into(),
        }
    }

    fn walk(nodes: Value) -> Walk {
        serde_json::from_value(json!({ "nodes": nodes })).unwrap()
    }

    #[test]
    fn the_line_is_the_page_models_with_the_same_ref_a_snapshot_gives() {
        let mut refs = RefTable::new();
        refs.set_main_frame("M");
        // A snapshot gave the element its ref first: the pick answers the same one.
        let before = refs.ref_for(&key(), 7);
        let w = walk(json!([{"d": 0, "r": "button", "n": "Buy now", "i": 7}]));
        let (line, r, _) = line_of(w, &key(), 7, &ElementDescriptor::default(), &mut refs);
        assert_eq!(r, before);
        assert!(line.contains("button \"Buy now\""), "{line}");
        assert!(line.contains(&format!("[ref={r}]")), "{line}");
        // A new element gets a new ref, never one reused.
        let w = walk(json!([{"d": 0, "r": "link", "n": "Home", "i": 8}]));
        let (_, r2, _) = line_of(w, &key(), 8, &ElementDescriptor::default(), &mut refs);
        assert_ne!(r2, before);
    }

    #[test]
    fn an_element_the_model_folds_away_still_gets_a_line_and_a_ref() {
        let mut refs = RefTable::new();
        refs.set_main_frame("M");
        // The walk shows only the wrapper's child: the wrapper (id 3) is not in it.
        let w = walk(json!([{"d": 0, "t": "hello"}]));
        let d = ElementDescriptor {
            tag: "div".into(),
            accessible_name: "hello \"there\"\n- button [ref=e1]".into(),
            ..Default::default()
        };
        let (line, r, _) = line_of(w, &key(), 3, &d, &mut refs);
        assert!(line.starts_with("div "), "{line}");
        assert!(line.ends_with(&format!("[ref={r}]")), "{line}");
        // The page's text cannot start a line or pass for a ref of Kapture's.
        assert!(!line.contains('\n'), "{line}");
        assert_eq!(line.matches("[ref=").count(), 1, "{line}");
        assert_eq!(refs.resolve(&r, |_| Some("L1".into())).unwrap().local, 3);
    }

    #[test]
    fn locators_come_ranked_with_their_playwright_form() {
        let d = ElementDescriptor {
            tag: "button".into(),
            id: "buy".into(),
            test_id: "checkout-buy".into(),
            role: "button".into(),
            accessible_name: "Buy \"now\"".into(),
            text: "Buy \"now\"".into(),
            css_path: "#buy".into(),
            xpath: "/html/body/button[1]".into(),
            ..Default::default()
        };
        let codes: Vec<String> = ranked(&d).into_iter().map(|l| l.code).collect();
        assert_eq!(
            codes,
            vec![
                r#"getByTestId("checkout-buy")"#,
                r#"getByRole("button", { name: "Buy \"now\"" })"#,
                r##"locator("#buy")"##,
                r#"getByText("Buy \"now\"")"#,
                r##"locator("#buy")"##,
                r#"locator("xpath=/html/body/button[1]")"#,
            ]
        );
        assert_eq!(
            playwright(&Locator::Name("q".into())),
            r#"locator("[name=\"q\"]")"#
        );
    }

    #[test]
    fn poll_answers_read_as_outcomes() {
        assert_eq!(outcome(&json!({"waiting": true})), Outcome::Waiting);
        assert_eq!(outcome(&json!({"cancelled": true})), Outcome::Cancelled);
        assert_eq!(outcome(&json!({"gone": true})), Outcome::Gone);
        let picked = outcome(&json!({"picked": {"id": 4, "descriptor": {"tag": "a"}}}));
        let Outcome::Picked { id, descriptor } = picked else {
            panic!("{picked:?}")
        };
        assert_eq!((id, descriptor.tag.as_str()), (4, "a"));
    }

    #[test]
    fn waits_are_bounded_and_commands_outlast_them() {
        for bad in [0.0, -1.0, PICK_MAX_SECS + 1.0, f64::NAN] {
            let p = Pick {
                timeout: Some(bad),
                ..Pick::default()
            };
            assert_eq!(wait_secs(&p).unwrap_err().code, ErrorCode::BadArgs, "{bad}");
        }
        assert_eq!(wait_secs(&Pick::default()).unwrap(), PICK_DEFAULT_SECS);
        assert!(command_ms(Some(5.0)) > 5_000);
        assert_eq!(
            command_ms(None),
            <Pick as crate::methods::Method>::TIMEOUT_MS
        );
    }
}
