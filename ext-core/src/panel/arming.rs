//! Arming by position, the DOM half (the decisions are `ui::Arming`): every control that
//! loosens or grants — an approval's answers, Accept / Keep of a server's rules, safe mode
//! off, Resume, a site's modes, a rule's or budget's ✕, "+10 steps", Add rule, Set budget —
//! carries `data-arm` (what it does) and an id. After each redraw a page calls [`settle`]:
//! the boxes of those controls are measured, and one that appeared or moved is disabled
//! for `ui::ARMING_MS`. A click that still reaches a control whose box changed since (a
//! layout change no redraw announced) is ignored and arms it. Controls that stayed where
//! they were stay live, however busy the agents are.

use std::cell::{Cell, RefCell};
use std::time::Duration;

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;
use web_sys::{Document, Element, Event};

use crate::ui::{Arming, Spot};

thread_local! {
    /// One page, one set of boxes.
    static ARMING: RefCell<Arming> = RefCell::default();
    /// The page's scroll when the boxes were last measured.
    static SCROLLED: Cell<(f64, f64)> = const { Cell::new((0.0, 0.0)) };
    /// When a pointer was last pressed (ms since the epoch).
    static PRESSED: Cell<f64> = const { Cell::new(f64::NEG_INFINITY) };
}

/// How soon after a press a click counts as the pointer's.
const PRESS_TO_CLICK_MS: f64 = 1500.0;

/// The guarded control a click on `target` works: the control itself or what it is in, or
/// the control a `<label>` it is in forwards its click to.
fn guarded_of(doc: &Document, target: &Element) -> Option<Element> {
    if let Some(c) = target.closest("[data-arm]").ok().flatten() {
        return Some(c);
    }
    let label = target.closest("label").ok().flatten()?;
    let control = match label.get_attribute("for") {
        Some(id) => doc.get_element_by_id(&id),
        None => label
            .query_selector("input, button, select, textarea")
            .ok()
            .flatten(),
    }?;
    control.has_attribute("data-arm").then_some(control)
}

fn scroll_now() -> (f64, f64) {
    web_sys::window()
        .map(|w| (w.scroll_x().unwrap_or(0.0), w.scroll_y().unwrap_or(0.0)))
        .unwrap_or_default()
}

/// Mark `control` as one that loosens or grants: it takes clicks only once it stayed put.
/// `what` tells what it does now (a mode for one origin is not the mode for the next).
pub(crate) fn guard(control: &Element, what: &str) {
    let _ = control.set_attribute("data-arm", what);
}

/// `control` no longer loosens (Resume became Pause): live at once.
pub(crate) fn unguard(control: &Element) {
    let _ = control.remove_attribute("data-arm");
    if control.has_attribute("data-arming") {
        let _ = control.remove_attribute("data-arming");
        let _ = control.remove_attribute("disabled");
    }
}

/// A guarded control's key: its id and what it does.
fn key_of(control: &Element) -> Option<String> {
    let what = control.get_attribute("data-arm")?;
    Some(format!("{}\u{1f}{what}", control.id()))
}

fn spot_of(control: &Element) -> Spot {
    let r = control.get_bounding_client_rect();
    [
        r.left().round() as i32,
        r.top().round() as i32,
        r.width().round() as i32,
        r.height().round() as i32,
    ]
}

fn guarded(doc: &Document) -> Vec<(String, Element)> {
    let Ok(all) = doc.query_selector_all("[data-arm]") else {
        return Vec::new();
    };
    (0..all.length())
        .filter_map(|i| all.item(i))
        .filter_map(|n| n.dyn_into::<Element>().ok())
        .filter_map(|e| key_of(&e).map(|k| (k, e)))
        .collect()
}

/// After a redraw: measure every guarded control; those that appeared or moved (and those
/// still arming, redrawn as new elements) are disabled until they may take clicks.
pub(crate) fn settle(doc: &Document) {
    let shown = guarded(doc);
    let spots: Vec<(String, Spot)> = shown.iter().map(|(k, e)| (k.clone(), spot_of(e))).collect();
    let now = js_sys::Date::now();
    SCROLLED.with(|s| s.set(scroll_now()));
    let arming = ARMING.with(|a| a.borrow_mut().settle(&spots, now));
    for (key, at) in arming {
        if let Some((_, control)) = shown.iter().find(|(k, _)| *k == key) {
            disarm(doc, control, &key, at - now);
        }
    }
}

/// Take the boxes as they are now without arming anything (the person scrolled or resized).
fn follow(doc: &Document) {
    let spots: Vec<(String, Spot)> = guarded(doc)
        .iter()
        .map(|(k, e)| (k.clone(), spot_of(e)))
        .collect();
    SCROLLED.with(|s| s.set(scroll_now()));
    ARMING.with(|a| a.borrow_mut().follow(&spots));
}

/// Disable `control` for `wait_ms`; then whatever element has its key takes clicks again
/// (unless it moved meanwhile, which armed it anew).
fn disarm(doc: &Document, control: &Element, key: &str, wait_ms: f64) {
    let was = control.has_attribute("data-arming");
    let _ = control.set_attribute("disabled", "");
    let _ = control.set_attribute("data-arming", "");
    if was {
        // Already waiting: its own timer (or a later one) brings it back.
        return;
    }
    let (doc, key, id) = (doc.clone(), key.to_string(), control.id());
    spawn_local(async move {
        let mut wait = wait_ms;
        loop {
            crate::platform::sleep(Duration::from_millis(wait.max(0.0).ceil() as u64)).await;
            let Some(now_control) = doc.get_element_by_id(&id) else {
                return;
            };
            if key_of(&now_control).as_deref() != Some(key.as_str())
                || !now_control.has_attribute("data-arming")
            {
                return;
            }
            let left = ARMING
                .with(|a| a.borrow().live_at(&key))
                .map_or(0.0, |at| at - js_sys::Date::now());
            if left <= 0.0 {
                let _ = now_control.remove_attribute("data-arming");
                let _ = now_control.remove_attribute("disabled");
                return;
            }
            // Moved again meanwhile: wait out the new time.
            wait = left;
        }
    });
}

/// Watch the page: a click on a guarded control counts only if the control has sat where
/// it is for long enough; the person's own scrolls and resizes are followed, not armed.
pub(crate) fn install(doc: &Document) {
    let d = doc.clone();
    let click = Closure::<dyn FnMut(Event)>::new(move |e: Event| {
        let Some(control) = e
            .target()
            .and_then(|t| t.dyn_into::<Element>().ok())
            .and_then(|t| guarded_of(&d, &t))
        else {
            return;
        };
        // A click from the keyboard (Enter, Space, a form's Enter) is aimed by the focus,
        // which nothing on the page moves; one a pointer made (a label forwards it with no
        // click count) follows a press.
        let pointer = e
            .dyn_ref::<web_sys::MouseEvent>()
            .is_some_and(|m| m.detail() > 0)
            || js_sys::Date::now() - PRESSED.with(Cell::get) < PRESS_TO_CLICK_MS;
        let Some(key) = key_of(&control).filter(|_| pointer) else {
            return;
        };
        // A scroll since the boxes were measured is the person's own (what the layout
        // scrolls, it scrolls while a redraw is measured), even before its event came.
        if SCROLLED.with(|s| s.get()) != scroll_now() {
            follow(&d);
        }
        let spot = spot_of(&control);
        let now = js_sys::Date::now();
        if !ARMING.with(|a| a.borrow_mut().takes_click(&key, spot, now)) {
            e.prevent_default();
            e.stop_immediate_propagation();
            let at = ARMING.with(|a| a.borrow().live_at(&key)).unwrap_or(now);
            disarm(&d, &control, &key, at - now);
        }
    });
    let opts = web_sys::AddEventListenerOptions::new();
    opts.set_capture(true);
    let _ = doc.add_event_listener_with_callback_and_add_event_listener_options(
        "click",
        click.as_ref().unchecked_ref(),
        &opts,
    );
    click.forget();
    let pressed = Closure::<dyn FnMut(Event)>::new(move |_| {
        PRESSED.with(|p| p.set(js_sys::Date::now()));
    });
    let _ = doc.add_event_listener_with_callback_and_add_event_listener_options(
        "pointerdown",
        pressed.as_ref().unchecked_ref(),
        &opts,
    );
    pressed.forget();
    let d = doc.clone();
    let moved = Closure::<dyn FnMut(Event)>::new(move |_| follow(&d));
    let _ = doc.add_event_listener_with_callback_and_add_event_listener_options(
        "scroll",
        moved.as_ref().unchecked_ref(),
        &opts,
    );
    if let Some(w) = web_sys::window() {
        let _ = w.add_event_listener_with_callback("resize", moved.as_ref().unchecked_ref());
    }
    moved.forget();
}
