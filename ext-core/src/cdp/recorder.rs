//! The recorder in a tab: its isolated world and binding in every document, capture started
//! and stopped (the raw events become steps), and the widget a person records with.

use serde_json::{json, Value};

use super::CdpSession;
use crate::protocol::{ErrorCode, WireError};

/// Install the recorder in the tab: the binding its world reports through and the capture
/// script (plus the widget when `widget`), in every new document and the current one.
async fn install_recorder<S: CdpSession>(s: &S, widget: bool) -> Result<Vec<String>, WireError> {
    use super::events::{RECORDER_BINDING, RECORDER_WORLD};
    s.send(
        "Runtime.addBinding",
        json!({"name": RECORDER_BINDING, "executionContextName": RECORDER_WORLD}),
    )
    .await?;
    let mut sources = vec![super::js::RECORDER];
    if widget {
        sources.push(super::js::RECORDER_WIDGET);
    }
    let mut ids = Vec::new();
    for source in sources {
        ids.push(add_recorder_script(s, source).await?);
    }
    Ok(ids)
}

/// Run `source` in the recorder's world of this document and of every new one; answers the
/// script's id, to remove it later.
async fn add_recorder_script<S: CdpSession>(s: &S, source: &str) -> Result<String, WireError> {
    let added = s
        .send(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({"source": source, "worldName": super::events::RECORDER_WORLD, "runImmediately": true}),
        )
        .await?;
    Ok(added
        .get("identifier")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string())
}

/// Take the recorder out of the tab (documents already open keep listeners whose binding
/// is gone, and the widget is told to leave).
async fn uninstall_recorder<S: CdpSession>(s: &S, scripts: &[String], widget: bool) {
    use super::events::RECORDER_BINDING;
    if widget {
        let _ = widget_show(s, &json!({"mode": "gone"})).await;
    }
    for id in scripts {
        let _ = s
            .send(
                "Page.removeScriptToEvaluateOnNewDocument",
                json!({"identifier": id}),
            )
            .await;
    }
    let _ = s
        .send("Runtime.removeBinding", json!({"name": RECORDER_BINDING}))
        .await;
}

/// Evaluate `expression` in the recorder's world of the tab's main frame.
async fn in_recorder_world<S: CdpSession>(s: &S, expression: &str) -> Result<(), WireError> {
    use super::events::RECORDER_WORLD;
    let frame = s.events().borrow().main_frame().map(str::to_string);
    let Some(frame) = frame else {
        return Ok(());
    };
    // The world of that name, the one the recorder's scripts run in.
    let world = s
        .send(
            "Page.createIsolatedWorld",
            json!({"frameId": frame, "worldName": RECORDER_WORLD}),
        )
        .await?;
    let context = world.get("executionContextId").cloned().unwrap_or_default();
    s.send(
        "Runtime.evaluate",
        json!({"expression": expression, "contextId": context}),
    )
    .await?;
    Ok(())
}

/// Tell the widget in the tab's main frame what to show (`{mode, ...}`).
pub async fn widget_show<S: CdpSession>(s: &S, view: &Value) -> Result<(), WireError> {
    in_recorder_world(
        s,
        &format!("globalThis.__kaptureWidget && globalThis.__kaptureWidget.show({view})"),
    )
    .await
}

/// Have the capture script report what the page showed after the last action (its hint
/// would otherwise come up to 400 ms later, after the stop).
async fn flush_hint<S: CdpSession>(s: &S) {
    let _ = in_recorder_world(
        s,
        "globalThis.__kaptureFlushHint && globalThis.__kaptureFlushHint()",
    )
    .await;
}

/// The recorder's state as the tool answers it.
fn recorder_state<S: CdpSession>(
    s: &S,
    steps: Vec<crate::recorder::RecordedStep>,
) -> crate::methods::RecorderState {
    let events = s.events().borrow();
    let rec = events.recording.as_ref();
    crate::methods::RecorderState {
        tab_id: s.tab_id(),
        recording: rec.is_some_and(|r| r.capturing),
        captured: rec.map_or(0, |r| r.events.len()),
        start_url: rec.and_then(|r| r.start_url.clone()),
        steps,
    }
}

/// Start capturing (installing the recorder first if need be).
async fn start_capture<S: CdpSession>(s: &S, widget: bool) -> Result<(), WireError> {
    use super::events::Recording;
    let installed = s.events().borrow().recording.is_some();
    if !installed {
        let scripts = install_recorder(s, widget).await?;
        s.events().borrow_mut().recording = Some(Recording {
            scripts,
            widget,
            ..Default::default()
        });
    }
    let mut events = s.events().borrow_mut();
    let start_url = events.main_url.clone();
    if let Some(rec) = events.recording.as_mut() {
        if !rec.capturing {
            rec.capturing = true;
            rec.events.clear();
            rec.stopped = None;
            rec.start_url = start_url;
        }
    }
    Ok(())
}

/// Stop capturing: the steps the raw events mean. The widget stays installed.
fn stop_capture<S: CdpSession>(s: &S) -> Option<crate::methods::RecorderState> {
    let mut events = s.events().borrow_mut();
    let rec = events.recording.as_mut()?;
    let was = std::mem::replace(&mut rec.capturing, false);
    if !was {
        return None;
    }
    let raw = std::mem::take(&mut rec.events);
    Some(crate::methods::RecorderState {
        tab_id: s.tab_id(),
        recording: false,
        captured: raw.len(),
        start_url: rec.start_url.clone(),
        steps: crate::recorder::optimize(&raw),
    })
}

/// Install the recorder with its widget, or add the widget to a recorder without one (in
/// this document and the next ones).
async fn with_widget<S: CdpSession>(s: &S) -> Result<(), WireError> {
    use super::events::Recording;
    let shown = s.events().borrow().recording.as_ref().map(|r| r.widget);
    match shown {
        Some(true) => {}
        Some(false) => {
            let script = add_recorder_script(s, super::js::RECORDER_WIDGET).await?;
            let mut events = s.events().borrow_mut();
            if let Some(rec) = events.recording.as_mut() {
                rec.widget = true;
                rec.scripts.push(script);
            }
        }
        None => {
            let scripts = install_recorder(s, true).await?;
            s.events().borrow_mut().recording = Some(Recording {
                scripts,
                widget: true,
                ..Default::default()
            });
        }
    }
    Ok(())
}

/// Start, stop or look at the tab's recorder, or show its widget. Capture runs in its own
/// isolated world, installed in every new document, and reports through a binding only
/// that world sees; `stop` answers the steps the raw events mean.
pub async fn recorder<S: CdpSession>(
    s: &S,
    p: &crate::methods::Recorder,
) -> Result<crate::methods::RecorderState, WireError> {
    use crate::methods::RecorderAction;
    match p.action {
        RecorderAction::Status => Ok(recorder_state(s, Vec::new())),
        RecorderAction::Enable => {
            with_widget(s).await?;
            let state = recorder_state(s, Vec::new());
            widget_show(
                s,
                &json!({"mode": if state.recording { "recording" } else { "ready" }}),
            )
            .await?;
            Ok(state)
        }
        // Never a hidden keylogger: the widget shows the recording on every page of it, and
        // the person can stop it there.
        RecorderAction::Start => {
            with_widget(s).await?;
            start_capture(s, true).await?;
            widget_show(s, &json!({"mode": "recording"})).await?;
            Ok(recorder_state(s, Vec::new()))
        }
        RecorderAction::Stop => {
            flush_hint(s).await;
            let Some(state) = stop_capture(s) else {
                return Err(WireError::new(
                    ErrorCode::BadArgs,
                    "the recorder is not recording this tab; start it first",
                ));
            };
            // The agent saves what it stopped: the recorder leaves the tab.
            let rec = s.events().borrow_mut().recording.take();
            if let Some(rec) = rec {
                uninstall_recorder(s, &rec.scripts, rec.widget).await;
            }
            Ok(state)
        }
    }
}

/// What a widget request leads to.
pub enum WidgetOutcome {
    /// Nothing more to do.
    Done,
    /// The person confirmed a save: hand it to kapture.
    Save(Box<crate::recorder::draft::SaveRequest>),
}

/// The steps of a recording under way, as the widget's live list shows them (secrets
/// marked): the events so far, optimised and drafted as a save would.
fn live_steps(r: &super::events::Recording) -> Vec<String> {
    let so_far = crate::methods::RecorderState {
        start_url: r.start_url.clone(),
        steps: crate::recorder::optimize(&r.events),
        ..Default::default()
    };
    crate::recorder::draft::draft(&so_far, &[]).steps
}

/// One request of the recorder widget (`{kind: "widget", action, choices?}`); `known` are
/// the saved scenarios, for suggestions.
pub async fn widget_request<S: CdpSession>(
    s: &S,
    request: &Value,
    known: &[crate::scenario::ScenarioSummary],
) -> Result<WidgetOutcome, WireError> {
    match request
        .get("action")
        .and_then(Value::as_str)
        .unwrap_or_default()
    {
        // The widget's live list, as Rust reads the events so far (secrets marked 🔒): the
        // widget asks after each event it shows, its own line being only a first guess.
        "live" => {
            let steps = {
                let events = s.events().borrow();
                match events.recording.as_ref() {
                    Some(r) if r.capturing => Some(live_steps(r)),
                    _ => None,
                }
            };
            if let Some(steps) = steps {
                widget_show(s, &json!({"live": steps})).await?;
            }
        }
        // A new document's widget asks what to show.
        "hello" => {
            let view = {
                let events = s.events().borrow();
                match events.recording.as_ref() {
                    Some(r) if r.capturing => {
                        json!({"mode": "recording", "steps": live_steps(r)})
                    }
                    Some(r) if r.stopped.is_some() => {
                        let draft = r
                            .stopped
                            .as_ref()
                            .map(|st| crate::recorder::draft::draft(st, known));
                        json!({"mode": "confirm", "draft": draft})
                    }
                    _ => json!({"mode": "ready"}),
                }
            };
            widget_show(s, &view).await?;
        }
        "start" => {
            start_capture(s, true).await?;
            widget_show(s, &json!({"mode": "recording"})).await?;
        }
        "stop" => {
            flush_hint(s).await;
            let Some(state) = stop_capture(s) else {
                return Ok(WidgetOutcome::Done);
            };
            let draft = crate::recorder::draft::draft(&state, known);
            if let Some(rec) = s.events().borrow_mut().recording.as_mut() {
                rec.stopped = Some(state);
            }
            widget_show(s, &json!({"mode": "confirm", "draft": draft})).await?;
        }
        "save" => {
            let choices: crate::recorder::draft::SaveChoices =
                serde_json::from_value(request.get("choices").cloned().unwrap_or_default())
                    .unwrap_or_default();
            if !crate::scenario::is_valid_name(&choices.name) {
                widget_show(s, &json!({"mode": "message", "error": true, "text": "Name it with letters, digits, - and _"})).await?;
                return Ok(WidgetOutcome::Done);
            }
            let stopped = s
                .events()
                .borrow_mut()
                .recording
                .as_mut()
                .and_then(|r| r.stopped.take());
            if let Some(recording) = stopped {
                return Ok(WidgetOutcome::Save(Box::new(
                    crate::recorder::draft::SaveRequest { choices, recording },
                )));
            }
        }
        // kapture refused the save (a name already in use, say): the recording waits in
        // the widget again for another name, with the reason.
        "refused" => {
            let recording: Option<crate::methods::RecorderState> =
                serde_json::from_value(request.get("recording").cloned().unwrap_or_default()).ok();
            let text = request
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let restored = {
                let mut events = s.events().borrow_mut();
                match (events.recording.as_mut(), recording) {
                    (Some(rec), Some(recording)) if rec.stopped.is_none() => {
                        let draft = crate::recorder::draft::draft(&recording, known);
                        rec.stopped = Some(recording);
                        Some(draft)
                    }
                    _ => None,
                }
            };
            let view = match restored {
                Some(draft) => {
                    json!({"mode": "confirm", "draft": draft, "error": true, "text": text})
                }
                None => json!({"mode": "message", "error": true, "text": text}),
            };
            widget_show(s, &view).await?;
        }
        "discard" => {
            if let Some(rec) = s.events().borrow_mut().recording.as_mut() {
                rec.stopped = None;
            }
            widget_show(s, &json!({"mode": "ready"})).await?;
        }
        "close" => {
            let rec = s.events().borrow_mut().recording.take();
            if let Some(rec) = rec {
                uninstall_recorder(s, &rec.scripts, rec.widget).await;
            }
        }
        _ => {}
    }
    Ok(WidgetOutcome::Done)
}
