//! The service worker's side of the Kapture panel: one port per open panel, the commands a
//! person runs (through the same router and tab queues as an agent's), the per-tab history
//! kept in `chrome.storage.local`, and live state pushed to every panel.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use serde_json::Value;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;

use super::push::{
    broadcast_approvals, broadcast_state, history_key, load_history, record, send_audit,
    send_state, PanelConn,
};
use super::{bridge, control, App};
use crate::chrome::{self, port::Port};
use crate::platform;
use crate::ui::{self, HistoryEntry, PanelEvent, PanelRequest};

/// Register a port that a page opened; only the panel's name is served.
pub fn on_port(app: &Rc<App>, port: JsValue) {
    let port: Port = port.unchecked_into();
    let name = js_sys::Reflect::get(&port, &JsValue::from_str("name"))
        .ok()
        .and_then(|n| n.as_string());
    if name.as_deref() != Some(ui::PANEL_PORT) {
        return;
    }
    let conn = Rc::new(PanelConn {
        port: port.clone(),
        tab: Cell::new(None),
        watching: Cell::new(false),
        site_tab: Cell::new(None),
        last_site: RefCell::new(None),
        running: RefCell::default(),
    });
    app.panels.borrow_mut().push(conn.clone());
    let weak = Rc::downgrade(app);
    let for_messages = conn.clone();
    port.on_message(move |msg| {
        if let (Some(app), Ok(req)) = (weak.upgrade(), chrome::from_js::<PanelRequest>(msg)) {
            handle(&app, &for_messages, req);
        }
    });
    let weak = Rc::downgrade(app);
    let for_disconnect = conn.clone();
    port.on_disconnect(move |_| {
        // A closed panel's commands (a pick under way) end with it.
        for (_, stop) in for_disconnect.running.borrow_mut().drain() {
            stop.abort();
        }
        if let Some(app) = weak.upgrade() {
            app.panels
                .borrow_mut()
                .retain(|p| !Rc::ptr_eq(p, &for_disconnect));
        }
    });
    // The first word on a port: the worker listens now. A page's messages sent before this
    // (while a stopped worker was starting) may have been lost; the panel sends its `Watch`
    // or `Subscribe` again when it hears this.
    send_state(app, &conn);
}

fn handle(app: &Rc<App>, conn: &Rc<PanelConn>, req: PanelRequest) {
    match req {
        PanelRequest::Subscribe { tab_id } => {
            conn.tab.set(Some(tab_id));
            send_state(app, conn);
            send_audit(app, conn);
            conn.port.post(&PanelEvent::Approvals {
                tab_id,
                pending: app.approvals.views(tab_id),
            });
            let (app, conn) = (app.clone(), conn.clone());
            spawn_local(async move {
                let entries = load_history(&app, tab_id).await;
                conn.port.post(&PanelEvent::History { tab_id, entries });
            });
        }
        PanelRequest::Run {
            id,
            tab_id,
            method,
            params,
            quiet,
        } => {
            let (app, conn) = (app.clone(), conn.clone());
            let (stop, registration) = futures::future::AbortHandle::new_pair();
            conn.running.borrow_mut().insert(id, stop);
            spawn_local(async move {
                let started = platform::now_ms();
                let mut shown = ui::mask_params(&method, &params);
                let rules = bridge::panel_rules(&app);
                let timeout = ui::panel_timeout_ms(&method, &params);
                let run = app.run_command(None, Some(tab_id), &method, params, timeout, rules);
                let run = async {
                    if quiet {
                        control::quietly(&app, tab_id, &method, run).await
                    } else {
                        run.await
                    }
                };
                // Stopped: dropping the run dropped its job (the tab's queue cleans up after it).
                let result = futures::future::Abortable::new(run, registration)
                    .await
                    .unwrap_or_else(|_| {
                        Err(crate::protocol::WireError::new(
                            crate::protocol::ErrorCode::ApprovalDenied,
                            "stopped in the panel",
                        ))
                    });
                conn.running.borrow_mut().remove(&id);
                let ms = platform::now_ms() - started;
                // Values typed into confidential fields, as the answer names them.
                let confidential = result.as_ref().ok().and_then(ui::confidential_of);
                ui::mask_typed(&method, &mut shown, confidential.as_deref());
                let (ok, data, status) = match result {
                    Ok(data) => (true, data, "ok".to_string()),
                    Err(e) => (
                        false,
                        serde_json::to_value(&e).unwrap_or(Value::Null),
                        e.code.as_str().to_string(),
                    ),
                };
                conn.port.post(&PanelEvent::Result { id, ok, data, ms });
                if !quiet {
                    app.bridge
                        .broadcast(&crate::protocol::ExtensionFrame::Event {
                            event: crate::protocol::BrowserEvent::PanelRan {
                                tab_id,
                                method: method.clone(),
                                params: shown.clone(),
                                status: status.clone(),
                                ms: ms as u64,
                            },
                        });
                    let entry = HistoryEntry {
                        time: started,
                        by: "panel".into(),
                        method,
                        params: shown,
                        status,
                        ms,
                    };
                    record(&app, tab_id, entry).await;
                }
            });
        }
        PanelRequest::Stop { id } => {
            if let Some(stop) = conn.running.borrow_mut().remove(&id) {
                stop.abort();
            }
        }
        PanelRequest::Answer { id, answer } => {
            if let Some(tab) = app.approvals.answer(id, answer) {
                broadcast_approvals(app, tab);
            }
        }
        PanelRequest::SafeMode { on } => {
            let app = app.clone();
            spawn_local(async move {
                super::gate::set_safe_mode(&app, on).await;
                broadcast_state(&app);
            });
        }
        PanelRequest::Watch { tab_id } => {
            conn.watching.set(true);
            conn.site_tab.set(tab_id);
            send_state(app, conn);
            send_audit(app, conn);
            conn.port.post(&PanelEvent::Feed {
                entries: control::feed(app),
            });
            conn.port.post(&PanelEvent::AllApprovals {
                pending: app.approvals.all_views(),
            });
            control::broadcast(app);
        }
        PanelRequest::Pause { on } => {
            let app = app.clone();
            spawn_local(async move { control::set_paused(&app, on).await });
        }
        PanelRequest::SetRules { rules, budgets } => {
            let app = app.clone();
            spawn_local(async move {
                control::change_person(&app, |p| {
                    p.rules = rules;
                    p.budgets = budgets;
                    Ok(())
                })
                .await
            });
        }
        PanelRequest::SetMode { origin, mode } => {
            let app = app.clone();
            spawn_local(async move {
                control::change_person(&app, |p| p.set_mode(&origin, mode)).await
            });
        }
        PanelRequest::Revoke { origin, category } => {
            let app = app.clone();
            spawn_local(async move {
                control::change_person(&app, |p| {
                    p.revoke(&origin, category);
                    Ok(())
                })
                .await
            });
        }
        PanelRequest::Extend { budget, steps } => control::extend(app, budget, steps),
        PanelRequest::Connect => bridge::user_connect(app),
        PanelRequest::Pair { code } => {
            let (app, conn) = (app.clone(), conn.clone());
            super::pairing::pair(&code, move |ok, message| {
                conn.port.post(&PanelEvent::Paired { ok, message });
                if ok {
                    // Connect now with the token it brought (discovery reads the kept ones).
                    bridge::user_connect(&app);
                }
            });
        }
        PanelRequest::Mode => {
            let (full, message) = crate::ui::mode_said(super::host::transport());
            conn.port.post(&PanelEvent::Mode { full, message });
        }
        PanelRequest::Disconnect { port } => bridge::user_disconnect(app, port),
        PanelRequest::Agree {
            port,
            accept,
            fingerprint,
        } => bridge::user_agree(app, port, accept, &fingerprint),
        PanelRequest::ClearHistory { tab_id } => {
            let app = app.clone();
            spawn_local(async move {
                app.history.borrow_mut().insert(tab_id, Vec::new());
                app.history_dirty.borrow_mut().remove(&tab_id);
                let _ = chrome::storage::local_set(&history_key(tab_id), &Value::Array(Vec::new()))
                    .await;
                for p in app
                    .panels
                    .borrow()
                    .iter()
                    .filter(|p| p.tab.get() == Some(tab_id))
                {
                    p.port.post(&PanelEvent::History {
                        tab_id,
                        entries: Vec::new(),
                    });
                }
            });
        }
    }
}
