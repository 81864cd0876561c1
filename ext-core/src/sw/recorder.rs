//! The recorder widget's requests, and the recordings it saves: handed to a connected
//! kapture, and kept in `chrome.storage.local` until one confirms the save — so a recording
//! made while no kapture runs, or across a worker restart, is never lost.

use std::rc::Rc;

use serde_json::{json, Value};
use wasm_bindgen_futures::spawn_local;

use super::App;
use crate::cdp::WidgetOutcome;
use crate::chrome;
use crate::platform;
use crate::protocol::{BrowserEvent, ExtensionFrame, TabId};
use crate::recorder::draft::SaveRequest;

/// Where recordings wait for a kapture: `[{id, tabId, request}]`.
const PENDING_KEY: &str = "kapture.pendingRecordings";
/// Recordings kept at most; the oldest goes first (a person would have noticed by then).
const MAX_PENDING: usize = 20;

async fn pending() -> Vec<Value> {
    chrome::storage::local_get(PENDING_KEY)
        .await
        .ok()
        .flatten()
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
}

async fn set_pending(list: &[Value]) {
    let _ = chrome::storage::local_set(PENDING_KEY, &json!(list)).await;
}

/// Handle what a tab's widget asked for, in order.
pub fn on_widget_requests(app: &Rc<App>, tab_id: TabId, requests: Vec<Value>) {
    if requests.is_empty() {
        return;
    }
    let app = app.clone();
    spawn_local(async move {
        for request in requests {
            let known = app.scenarios.borrow().clone();
            match app.tabs.widget_request(tab_id, &request, &known).await {
                Ok(WidgetOutcome::Save(save)) => keep_and_send(&app, tab_id, *save).await,
                Ok(WidgetOutcome::Done) => {}
                Err(e) => {
                    let view = json!({"mode": "message", "error": true, "text": e.message});
                    app.tabs.widget_show(tab_id, &view).await;
                }
            }
        }
    });
}

/// Keep a saved recording, then hand it to kapture if one is connected.
async fn keep_and_send(app: &Rc<App>, tab_id: TabId, request: SaveRequest) {
    let id = format!("{}-{tab_id}", platform::now_ms() as u64);
    let name = request.choices.name.clone();
    {
        let _guard = app.recordings_lock.lock().await;
        let mut list = pending().await;
        list.push(json!({"id": id, "tabId": tab_id, "request": request}));
        let excess = list.len().saturating_sub(MAX_PENDING);
        list.drain(..excess);
        set_pending(&list).await;
    }
    let frame = ExtensionFrame::Event {
        event: BrowserEvent::RecordingSave {
            id,
            request: Box::new(request),
        },
    };
    let view = if app.bridge.send_to_one(&frame) {
        json!({"mode": "message", "text": format!("Saving {name}…")})
    } else {
        json!({"mode": "kept", "text": format!("{name} is kept in this browser until kapture connects; it is saved then.")})
    };
    app.tabs.widget_show(tab_id, &view).await;
}

/// A kapture just welcomed us: ask for its scenarios and hand it what waits.
pub async fn on_connected(app: &Rc<App>, send: impl Fn(&ExtensionFrame)) {
    send(&ExtensionFrame::Event {
        event: BrowserEvent::ScenariosWanted,
    });
    let list = {
        let _guard = app.recordings_lock.lock().await;
        pending().await
    };
    for item in list {
        let (Some(id), Ok(request)) = (
            item["id"].as_str(),
            serde_json::from_value::<SaveRequest>(item["request"].clone()),
        ) else {
            continue;
        };
        send(&ExtensionFrame::Event {
            event: BrowserEvent::RecordingSave {
                id: id.to_string(),
                request: Box::new(request),
            },
        });
    }
}

/// kapture answered a save: drop it from the waiting list when saved, and tell the widget.
pub async fn on_saved(app: &Rc<App>, id: &str, ok: bool, message: &str) {
    let tab_id = {
        let _guard = app.recordings_lock.lock().await;
        let mut list = pending().await;
        let tab = list
            .iter()
            .find(|i| i["id"].as_str() == Some(id))
            .and_then(|i| i["tabId"].as_i64());
        // A refused save (a bad name, say) is not kept either: the widget says why.
        list.retain(|i| i["id"].as_str() != Some(id));
        set_pending(&list).await;
        tab
    };
    if let Some(tab_id) = tab_id {
        let view = if ok {
            json!({"mode": "saved", "text": message})
        } else {
            json!({"mode": "message", "error": true, "text": message})
        };
        app.tabs.widget_show(tab_id as TabId, &view).await;
    }
}
