//! The recorder widget's requests, and the recordings it saves: handed to a connected
//! kapture, and kept until one confirms the save — so a recording made while no kapture
//! runs, or across a worker restart, is never lost. What is kept on disk
//! (`chrome.storage.local`) holds no secret value: those wait in `chrome.storage.session`
//! (memory only), so a browser restart loses them and the save names the secrets each run
//! must be given instead.

use std::rc::Rc;

use serde_json::{json, Value};
use wasm_bindgen_futures::spawn_local;

use super::App;
use crate::cdp::WidgetOutcome;
use crate::chrome;
use crate::platform;
use crate::protocol::{BrowserEvent, ExtensionFrame, TabId};
use crate::recorder::draft::{put_secrets, take_secrets, SaveRequest};

/// Where recordings wait for a kapture: `[{id, tabId, request}]`, secret values taken out.
const PENDING_KEY: &str = "kapture.pendingRecordings";
/// Their secret values, in memory only: `{id: {step index: value}}`.
const SECRETS_KEY: &str = "kapture.pendingSecrets";
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

async fn pending_secrets() -> serde_json::Map<String, Value> {
    chrome::storage::session_get(SECRETS_KEY)
        .await
        .ok()
        .flatten()
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default()
}

async fn set_pending_secrets(map: serde_json::Map<String, Value>) {
    let _ = chrome::storage::session_set(SECRETS_KEY, &Value::Object(map)).await;
}

/// A kept recording with its secrets put back (those still in memory).
fn whole(item: &Value, secrets: &serde_json::Map<String, Value>) -> Option<(String, SaveRequest)> {
    let id = item["id"].as_str()?.to_string();
    let mut request = serde_json::from_value::<SaveRequest>(item["request"].clone()).ok()?;
    if let Some(kept) = secrets
        .get(&id)
        .and_then(|v| serde_json::from_value(v.clone()).ok())
    {
        put_secrets(&mut request.recording, &kept);
    }
    Some((id, request))
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
            match app.exec.tabs.widget_request(tab_id, &request, &known).await {
                Ok(WidgetOutcome::Save(save)) => keep_and_send(&app, tab_id, *save).await,
                Ok(WidgetOutcome::Done) => {}
                Err(e) => {
                    let view = json!({"mode": "message", "error": true, "text": e.message});
                    app.exec.tabs.widget_show(tab_id, &view).await;
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
        let mut kept = request.clone();
        let secrets = take_secrets(&mut kept.recording);
        let mut in_memory = pending_secrets().await;
        in_memory.insert(id.clone(), json!(secrets));
        let mut list = pending().await;
        list.push(json!({"id": id, "tabId": tab_id, "request": kept}));
        let excess = list.len().saturating_sub(MAX_PENDING);
        for gone in list.drain(..excess) {
            in_memory.remove(gone["id"].as_str().unwrap_or_default());
        }
        set_pending_secrets(in_memory).await;
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
    app.exec.tabs.widget_show(tab_id, &view).await;
}

/// A kapture just welcomed us: ask for its scenarios and hand it what waits.
pub async fn on_connected(app: &Rc<App>, send: impl Fn(&ExtensionFrame)) {
    send(&ExtensionFrame::Event {
        event: BrowserEvent::ScenariosWanted,
    });
    let (list, secrets) = {
        let _guard = app.recordings_lock.lock().await;
        (pending().await, pending_secrets().await)
    };
    for item in list {
        let Some((id, request)) = whole(&item, &secrets) else {
            continue;
        };
        send(&ExtensionFrame::Event {
            event: BrowserEvent::RecordingSave {
                id,
                request: Box::new(request),
            },
        });
    }
}

/// kapture answered a save: drop it from the waiting list when saved, and tell the widget.
pub async fn on_saved(app: &Rc<App>, id: &str, ok: bool, message: &str) {
    let (tab_id, refused) = {
        let _guard = app.recordings_lock.lock().await;
        let mut list = pending().await;
        let mut secrets = pending_secrets().await;
        let item = list.iter().find(|i| i["id"].as_str() == Some(id)).cloned();
        let tab = item.as_ref().and_then(|i| i["tabId"].as_i64());
        let refused = item
            .filter(|_| !ok)
            .and_then(|i| whole(&i, &secrets))
            .map(|(_, r)| r);
        // Answered: no longer waiting. A refused save goes back to the widget instead.
        list.retain(|i| i["id"].as_str() != Some(id));
        secrets.remove(id);
        set_pending(&list).await;
        set_pending_secrets(secrets).await;
        (tab, refused)
    };
    let Some(tab_id) = tab_id.map(|t| t as TabId) else {
        return;
    };
    match refused {
        // The recording waits in the widget for another name (it holds what the tab does).
        Some(request) => {
            let known = app.scenarios.borrow().clone();
            let again =
                json!({"action": "refused", "recording": request.recording, "text": message});
            if app
                .exec
                .tabs
                .widget_request(tab_id, &again, &known)
                .await
                .is_err()
            {
                let view = json!({"mode": "message", "error": true, "text": message});
                app.exec.tabs.widget_show(tab_id, &view).await;
            }
        }
        None => {
            let view = if ok {
                json!({"mode": "saved", "text": message})
            } else {
                json!({"mode": "message", "error": true, "text": message})
            };
            app.exec.tabs.widget_show(tab_id, &view).await;
        }
    }
}
