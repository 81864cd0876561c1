//! The extension's side of the bridge: discover live kapture servers through native
//! messaging, keep one authenticated WebSocket to each, and reconnect with capped, jittered
//! backoff when a server goes away or the service worker wakes up.
//!
//! A socket is trusted only after the server proved it holds the token of its handshake
//! file (`challenge`, checked before we answer with our own `proof`); until its `welcome`
//! no frame of it runs anything. A server that did not launch this browser gets at most
//! this browser's default rules unless a person agreed to its looser ones in the panel.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::{Rc, Weak};

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;
use web_sys::{CloseEvent, MessageEvent, WebSocket};

use super::conns::{Conn, ConnState, Epoch, SocketHandler};
use super::App;
use crate::chrome;
use crate::platform;
use crate::policy::{bound, Policy};
use crate::protocol::{
    self, Discovered, ExtensionFrame, HostFrame, NativeRequest, Resume, ServerEntry,
    NATIVE_HOST_NAME,
};

/// Where a person's answers to servers' looser rule sets are kept (fingerprint → accepted).
const AGREEMENTS_KEY: &str = "kapture.policy_agreements";

/// Added to the source of a rule the browser's ceiling imposed (shown in denials).
const CEILING_NOTE: &str = "; this browser's limit for a kapture that did not launch it: accept its looser rules in the Kapture panel (Connection) to lift it";

/// Consecutive fruitless discoveries before fast retries stop and only the alarm wakes us,
/// so a browser with no kapture running is not kept busy forever.
const FAST_RETRY_BUDGET: u32 = 40;

/// Toolbar badge: green count when connected, amber while searching, red when refused.
pub fn update_badge(app: &App) {
    super::push::broadcast_state(app);
    let ports = app.bridge.connected_ports();
    let refused = app
        .bridge
        .conns
        .borrow()
        .values()
        .find_map(|c| match &*c.state.borrow() {
            ConnState::Rejected(why) => Some(why.clone()),
            _ => None,
        });
    if !ports.is_empty() {
        let list = ports
            .iter()
            .map(u16::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        chrome::action::show(
            &ports.len().to_string(),
            "#1a7f37",
            &format!("Kapture: connected to kapture on port {list}"),
        );
    } else if let Some(why) = refused {
        chrome::action::show(
            "!",
            "#cf222e",
            &format!("Kapture: refused by kapture: {why}"),
        );
    } else {
        let why = app
            .bridge
            .problem
            .borrow()
            .clone()
            .unwrap_or_else(|| "no kapture server running".into());
        chrome::action::show("…", "#9a6700", &format!("Kapture: not connected ({why})"));
    }
}

/// Ask the native host which servers run, and dial the ones we are not connected to.
pub fn discover(app: &Rc<App>) {
    if app.bridge.discovering.replace(true) {
        return;
    }
    let app = app.clone();
    spawn_local(async move {
        load_agreements(&app).await;
        let res: Result<Discovered, _> =
            chrome::runtime::send_native_message(NATIVE_HOST_NAME, &NativeRequest::Discover).await;
        // The servers a person paired by code (`kapture pair`), where native messaging is not
        // registered: dialled like the ones it reports; a port it reports wins.
        let manual = super::pairing::manual_servers().await;
        app.bridge.discovering.set(false);
        let res = match res {
            Ok(mut found) => {
                let reported: Vec<u16> = found.servers.iter().map(|s| s.port).collect();
                found
                    .servers
                    .extend(manual.into_iter().filter(|m| !reported.contains(&m.port)));
                Ok(found)
            }
            Err(e) if !manual.is_empty() => {
                *app.bridge.problem.borrow_mut() =
                    Some(format!("native host unavailable: {}", e.message));
                Ok(Discovered {
                    v: crate::protocol::PROTOCOL_VERSION,
                    servers: manual,
                    launched_by: None,
                    browser_run: None,
                })
            }
            Err(e) => Err(e),
        };
        match res {
            Ok(found) => {
                *app.bridge.problem.borrow_mut() = None;
                app.ext.borrow_mut().launched_by = found.launched_by;
                app.ext.borrow_mut().browser_run = found.browser_run;
                for server in found.servers {
                    let known = app
                        .bridge
                        .conns
                        .borrow()
                        .get(&server.port)
                        .map(|c| c.token == server.token);
                    let refused =
                        app.bridge.refused.borrow().get(&server.port) == Some(&server.token);
                    let refused =
                        refused || app.bridge.user_off.borrow().contains_key(&server.port);
                    if known != Some(true) && !refused {
                        connect(&app, server);
                    }
                }
            }
            Err(e) => {
                *app.bridge.problem.borrow_mut() =
                    Some(format!("native host unavailable: {}", e.message));
            }
        }
        if app.bridge.conns.borrow().is_empty() {
            retry_later(&app);
        }
        update_badge(&app);
    });
}

/// Schedule another discovery after a backoff delay (at most one pending).
fn retry_later(app: &Rc<App>) {
    let failures = app.bridge.failures.get() + 1;
    app.bridge.failures.set(failures);
    if failures > FAST_RETRY_BUDGET || app.bridge.retry_pending.replace(true) {
        return;
    }
    let delay = app
        .bridge
        .backoff
        .borrow_mut()
        .next_delay(js_sys::Math::random());
    let app = app.clone();
    spawn_local(async move {
        platform::sleep(delay).await;
        app.bridge.retry_pending.set(false);
        discover(&app);
    });
}

/// The alarm fired (or the worker woke): start fast retries afresh and look around.
pub fn wake(app: &Rc<App>) {
    if app.ext.borrow().instance.is_empty() {
        return; // `start` has not finished; it wakes us when it has.
    }
    app.bridge.reap_silent();
    app.bridge.failures.set(0);
    discover(app);
}

fn connect(app: &Rc<App>, server: ServerEntry) {
    let ws = match WebSocket::new(&format!("ws://127.0.0.1:{}/", server.port)) {
        Ok(ws) => ws,
        Err(e) => {
            *app.bridge.problem.borrow_mut() = Some(chrome::error_message(&e));
            return;
        }
    };
    let conn = Rc::new(Conn {
        port: server.port,
        token: server.token,
        pid: server.pid,
        nonce: RefCell::default(),
        proven: Cell::new(false),
        offered: RefCell::default(),
        looser: RefCell::default(),
        agreed: Cell::new(None),
        ws,
        state: RefCell::new(ConnState::Connecting),
        last_seen_ms: Cell::new(platform::now_ms()),
        heartbeat_ms: Cell::new(20_000.0),
        since: Cell::new(platform::now_ms()),
        policy: RefCell::new(Rc::new(crate::policy::Policy::connected_default())),
        approval_ms: Cell::new(60_000),
        last_command: Cell::new(0),
        handlers: RefCell::default(),
    });
    let replaced = app
        .bridge
        .conns
        .borrow_mut()
        .insert(conn.port, conn.clone());
    if let Some(old) = replaced {
        // Its commands end with it, now: what runs on the port from here is the new one's.
        stop_commands_of(app, old.port);
        let _ = old.ws.close();
    }

    let weak_app = Rc::downgrade(app);
    let weak_conn = Rc::downgrade(&conn);
    let on_open = handler(&weak_app, &weak_conn, |app, conn, _| {
        spawn_local(async move {
            // A restarted worker asks for the session it had with this server.
            let resume = chrome::storage::session_get(&resume_key(conn.port))
                .await
                .ok()
                .flatten()
                .and_then(|v| serde_json::from_value::<Resume>(v).ok());
            // Carried on if the session resumes (the welcome resets it otherwise), so what is
            // stored never claims less than the worker received.
            if let Some(r) = &resume {
                conn.last_command.set(r.last_command);
            }
            // A fresh nonce: the server's proof must cover it, so no recorded answer serves.
            let Ok(nonce) = crate::handshake::new_nonce() else {
                let _ = conn.ws.close_with_code_and_reason(4000, "no random source");
                return;
            };
            *conn.nonce.borrow_mut() = nonce.clone();
            conn.send(&ExtensionFrame::Hello {
                nonce,
                ext: app.ext.borrow().clone(),
                resume,
            });
        });
    });
    let on_message = handler(&weak_app, &weak_conn, |app, conn, event| {
        if let Some(text) = event
            .dyn_into::<MessageEvent>()
            .ok()
            .and_then(|m| m.data().as_string())
        {
            on_frame(&app, &conn, &text);
        }
    });
    let on_close = handler(&weak_app, &weak_conn, |app, conn, event| {
        let reason = event
            .dyn_into::<CloseEvent>()
            .map(|c| c.reason())
            .unwrap_or_default();
        let mut conns = app.bridge.conns.borrow_mut();
        let current = conns.get(&conn.port).is_some_and(|c| Rc::ptr_eq(c, &conn));
        if current {
            conns.remove(&conn.port);
        }
        drop(conns);
        // A connection replaced on its port had its commands stopped then; what runs on
        // the port now is its successor's, which this close must not touch.
        if !current {
            return;
        }
        // Nobody waits for this connection's commands any more: stop them (kapture answered
        // its callers when the socket dropped, and re-sends only what is safe to repeat).
        stop_commands_of(&app, conn.port);
        // The last kapture went away: nobody drives the tabs now.
        if app.bridge.connected_ports().is_empty() {
            app.exec.tabs.release_all();
        }
        if let ConnState::Rejected(_) = &*conn.state.borrow() {
            app.bridge
                .refused
                .borrow_mut()
                .insert(conn.port, conn.token.clone());
        } else if !reason.is_empty() {
            *app.bridge.problem.borrow_mut() = Some(reason);
        }
        update_badge(&app);
        retry_later(&app);
    });
    conn.ws.set_onopen(Some(on_open.as_ref().unchecked_ref()));
    conn.ws
        .set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    conn.ws.set_onclose(Some(on_close.as_ref().unchecked_ref()));
    conn.handlers
        .borrow_mut()
        .extend([on_open, on_message, on_close]);
}

/// Stop every command the server on `port` is running here.
fn stop_commands_of(app: &App, port: u16) {
    app.running.borrow_mut().retain(|(p, _), stop| {
        if *p == port {
            stop.abort();
        }
        *p != port
    });
}

/// Wrap a socket callback so it holds neither the app nor the connection alive.
fn handler(
    app: &Weak<App>,
    conn: &Weak<Conn>,
    f: impl Fn(Rc<App>, Rc<Conn>, JsValue) + 'static,
) -> SocketHandler {
    let (app, conn) = (app.clone(), conn.clone());
    Closure::new(move |event: JsValue| {
        if let (Some(app), Some(conn)) = (app.upgrade(), conn.upgrade()) {
            f(app, conn, event);
        }
    })
}

fn on_frame(app: &Rc<App>, conn: &Rc<Conn>, text: &str) {
    conn.last_seen_ms.set(platform::now_ms());
    let frame = match protocol::decode::<HostFrame>(text) {
        Ok(frame) => frame,
        Err(protocol::DecodeError::VersionMismatch { ours, theirs }) => {
            *conn.state.borrow_mut() =
                ConnState::Rejected(protocol::version_mismatch_message(ours, theirs));
            let _ = conn
                .ws
                .close_with_code_and_reason(4409, "protocol version mismatch");
            return;
        }
        // One malformed frame is dropped; the connection and the worker carry on.
        Err(_) => return,
    };
    let connected = matches!(*conn.state.borrow(), ConnState::Connected { .. });
    let connecting = matches!(*conn.state.borrow(), ConnState::Connecting);
    match &frame {
        HostFrame::Challenge { nonce, proof } => {
            if connecting && !conn.proven.get() {
                on_challenge(app, conn, nonce, proof);
            }
            return;
        }
        // A refusal can only make us stay away: heard from anyone.
        HostFrame::Unauthorized { .. } => {}
        // The welcome counts only after the server proved the token.
        HostFrame::Welcome { .. } if !(connecting && conn.proven.get()) => return,
        HostFrame::Welcome { .. } => {}
        // Nothing else runs before the welcome: a command of a server that has not proved
        // the token (or was refused) is dropped unanswered.
        _ if !connected => return,
        _ => {}
    }
    match frame {
        // Only a pairing connection (`pairing.rs`) hears these.
        HostFrame::Challenge { .. } | HostFrame::Paired { .. } => {}
        HostFrame::Welcome {
            session,
            resumed,
            heartbeat_ms,
            policy,
            approval_timeout_ms,
            viewport,
        } => {
            if viewport.is_some() {
                // Said only to the browser that server launched: its tabs' page size.
                app.viewport.set(viewport);
            }
            if !resumed {
                conn.last_command.set(0);
                super::control::forget_server(app, conn.port);
            }
            new_epoch(app, conn, &session, resumed);
            remember(conn, &session);
            *conn.offered.borrow_mut() = Some(Rc::new(policy));
            apply_policy(app, conn);
            conn.approval_ms.set(approval_timeout_ms);
            *conn.state.borrow_mut() = ConnState::Connected { session };
            conn.since.set(platform::now_ms());
            conn.heartbeat_ms.set(heartbeat_ms as f64);
            app.bridge.failures.set(0);
            app.bridge.backoff.borrow_mut().reset();
            app.bridge.refused.borrow_mut().remove(&conn.port);
            update_badge(app);
            let (app, conn) = (app.clone(), conn.clone());
            spawn_local(async move {
                super::recorder::on_connected(&app, |f| conn.send(f)).await;
            });
        }
        HostFrame::RecordingSaved { id, ok, message } => {
            let app = app.clone();
            spawn_local(async move { super::recorder::on_saved(&app, &id, ok, &message).await });
        }
        HostFrame::Scenarios { list } => *app.scenarios.borrow_mut() = list,
        HostFrame::Budget {
            session,
            label,
            used,
            max,
            ended,
        } => super::control::session_budget(
            app,
            conn.port,
            crate::ui::SessionBudget {
                port: conn.port,
                session,
                label,
                used,
                max,
            },
            ended,
        ),
        HostFrame::Unauthorized { reason, message } => {
            *conn.state.borrow_mut() = ConnState::Rejected(format!("{reason:?}: {message}"));
            update_badge(app);
        }
        HostFrame::Ping => conn.send(&ExtensionFrame::Pong),
        HostFrame::Cancel { id } => {
            if let Some(stop) = app.running.borrow_mut().remove(&(conn.port, id)) {
                stop.abort();
            }
        }
        HostFrame::Audit { mut entry } => {
            entry["server"] = serde_json::json!(conn.port);
            super::push::keep_audit(app, entry);
        }
        HostFrame::Command {
            id,
            tab_id,
            method,
            params,
            timeout_ms,
            session,
            label,
        } => {
            // Noted before the command starts, so that a worker killed meanwhile resumes
            // saying it had received it (and kapture never runs it twice).
            if id > conn.last_command.get() {
                conn.last_command.set(id);
                if let ConnState::Connected { session } = &*conn.state.borrow() {
                    remember(conn, session);
                }
            }
            // An id already running is refused: its stop handle must stay the one a cancel
            // or a pause reaches.
            if app.running.borrow().contains_key(&(conn.port, id)) {
                conn.send(&crate::protocol::answer_frame(
                    id,
                    Err(crate::protocol::WireError::new(
                        crate::protocol::ErrorCode::BadArgs,
                        format!("command id {id} is already running"),
                    )),
                ));
                return;
            }
            let (app, conn) = (app.clone(), conn.clone());
            let (stop, registration) = futures::future::AbortHandle::new_pair();
            app.running.borrow_mut().insert((conn.port, id), stop);
            spawn_local(async move {
                let started = platform::now_ms();
                let mut shown = crate::ui::mask_params(&method, &params);
                // Session numbers are one kapture's: grants are keyed by this worker's
                // number for that kapture's session too (another kapture, or a later one on
                // the same port, starts with none). A command naming no MCP session is the
                // server's own, never the panel's.
                let asker = Some(asker_key(&app, conn.port, session.as_deref()));
                // A command of no MCP session is kapture's own (a resource read, a session's
                // tabs closed at its end).
                let label = label.or_else(|| session.is_none().then(|| "kapture itself".into()));
                if let (Some(key), Some(label)) = (&asker, &label) {
                    super::control::label(&app, key, label, conn.port);
                }
                let run = async {
                    // The server's rules with the person's over them.
                    let policy = {
                        let server = conn.policy.borrow().clone();
                        super::control::rules_for(&app, &server).await
                    };
                    let rules = crate::exec::Rules {
                        policy,
                        approval_ms: conn.approval_ms.get(),
                    };
                    app.run_command(asker.as_deref(), tab_id, &method, params, timeout_ms, rules)
                        .await
                };
                let outcome = futures::future::Abortable::new(run, registration).await;
                app.running.borrow_mut().remove(&(conn.port, id));
                // Cancelled: the server no longer waits, and dropping the run dropped the job
                // (a queued one is skipped, a running one stopped). Stopped by a pause: the
                // server still waits, and hears why.
                let result = match outcome {
                    Ok(result) => result,
                    Err(_) => match super::control::stopped_answer(&app, conn.port, id) {
                        Some(e) => {
                            // Stopped mid-run: the feed says so (the executor never finished it).
                            super::control::on_step(
                                &app,
                                crate::ui::FeedEntry {
                                    time: started,
                                    tab_id,
                                    who: asker.clone().unwrap_or_else(|| "panel".into()),
                                    method: method.clone(),
                                    target: None,
                                    origin: String::new(),
                                    verdict: "stopped by the pause".into(),
                                    status: e.code.as_str().into(),
                                    ms: platform::now_ms() - started,
                                },
                            );
                            Err(e)
                        }
                        None => return,
                    },
                };
                // The worker is being stopped under the command: no answer from here. The socket
                // drops next, and kapture re-sends the command or answers it as lost.
                if matches!(&result, Err(e) if e.code == crate::protocol::ErrorCode::ExtensionDisconnected)
                {
                    return;
                }
                let ran_on = crate::exec::ran_on(&result, tab_id);
                let status = match &result {
                    Ok(_) => "ok".to_string(),
                    Err(e) => e.code.as_str().to_string(),
                };
                // The history keeps no value typed into a confidential field.
                let confidential = result.as_ref().ok().and_then(crate::ui::confidential_of);
                crate::ui::mask_typed(&method, &mut shown, confidential.as_deref());
                // Checked against the bridge's frame cap: too large is a coded error.
                let frame = crate::protocol::answer_frame(id, result);
                // Where the tab is now, ahead of the answer, so the server's journal has it.
                if let Some((tab_id, url)) =
                    ran_on.and_then(|t| Some((t, app.exec.tabs.main_url(t)?)))
                {
                    if let Some(origin) = crate::policy::origin_of(&url) {
                        conn.send(&ExtensionFrame::Event {
                            event: crate::protocol::BrowserEvent::PageAt {
                                tab_id,
                                origin: origin.to_string(),
                            },
                        });
                    }
                }
                conn.send(&frame);
                if let Some(tab) = ran_on {
                    let entry = crate::ui::HistoryEntry {
                        time: started,
                        by: "agent".into(),
                        method,
                        params: shown,
                        status,
                        ms: platform::now_ms() - started,
                    };
                    super::push::record(&app, tab, entry).await;
                }
            });
        }
    }
}

/// The server's challenge: answer with our proof only if its proof of the token verifies;
/// otherwise refuse it (remembered with its token, like a refusal) and tell nothing.
fn on_challenge(app: &Rc<App>, conn: &Rc<Conn>, nonce_s: &str, proof: &str) {
    let nonce_e = conn.nonce.borrow().clone();
    if nonce_e.is_empty()
        || !crate::handshake::verify_server_proof(&conn.token, conn.port, &nonce_e, nonce_s, proof)
    {
        *conn.state.borrow_mut() = ConnState::Rejected(format!(
            "the program on port {} could not prove it is kapture (pid {}): it does not hold that kapture's token, so it was told nothing",
            conn.port, conn.pid
        ));
        conn.since.set(platform::now_ms());
        let _ = conn
            .ws
            .close_with_code_and_reason(4401, "server proof failed");
        update_badge(app);
        return;
    }
    conn.proven.set(true);
    conn.send(&ExtensionFrame::Proof {
        proof: crate::handshake::extension_proof(&conn.token, conn.port, nonce_s, &nonce_e),
    });
}

/// The rules `conn`'s commands run under: the server's own if it launched this browser or a
/// person accepted them, else the server's bounded by this browser's defaults.
fn apply_policy(app: &App, conn: &Conn) {
    let Some(offered) = conn.offered.borrow().clone() else {
        return;
    };
    if app.ext.borrow().launched_by == Some(conn.pid) {
        conn.looser.borrow_mut().clear();
        conn.agreed.set(None);
        *conn.policy.borrow_mut() = offered;
        return;
    }
    let ceiling = Policy::connected_default();
    let agreed = app
        .bridge
        .agreements
        .borrow()
        .as_ref()
        .and_then(|a| a.get(&bound::fingerprint(&offered)).copied());
    *conn.looser.borrow_mut() = bound::loosened(&offered, &ceiling)
        .iter()
        .map(ToString::to_string)
        .collect();
    conn.agreed.set(agreed);
    *conn.policy.borrow_mut() = if agreed == Some(true) {
        offered
    } else {
        Rc::new(bound::bound(&offered, &ceiling, CEILING_NOTE))
    };
}

/// Read a person's earlier answers to looser rule sets, once per worker.
async fn load_agreements(app: &App) {
    if app.bridge.agreements.borrow().is_some() {
        return;
    }
    let stored = chrome::storage::local_get(AGREEMENTS_KEY)
        .await
        .ok()
        .flatten()
        .and_then(|v| serde_json::from_value::<HashMap<String, bool>>(v).ok())
        .unwrap_or_default();
    let mut agreements = app.bridge.agreements.borrow_mut();
    if agreements.is_none() {
        *agreements = Some(stored);
    }
}

/// A person answered the looser rules of the server on `port`: `accept` them (for this
/// rule set, whichever kapture sends it) or keep this browser's defaults. `shown` is the
/// fingerprint of the rule set the panel showed them: when the server on that port now
/// offers another (it reconnected with other flags just before the click), nothing is
/// agreed and every panel is shown the question as it stands.
pub fn user_agree(app: &Rc<App>, port: u16, accept: bool, shown: &str) {
    let Some(offered) = app
        .bridge
        .conns
        .borrow()
        .get(&port)
        .and_then(|c| c.offered.borrow().clone())
    else {
        super::push::broadcast_state(app);
        return;
    };
    let print = bound::fingerprint(&offered);
    if print != shown {
        super::push::broadcast_state(app);
        return;
    }
    let snapshot = {
        let mut agreements = app.bridge.agreements.borrow_mut();
        let map = agreements.get_or_insert_with(HashMap::new);
        map.insert(print, accept);
        map.clone()
    };
    for conn in app.bridge.conns.borrow().values() {
        apply_policy(app, conn);
    }
    update_badge(app);
    spawn_local(async move {
        let value = serde_json::to_value(&snapshot).unwrap_or_default();
        let _ = chrome::storage::local_set(AGREEMENTS_KEY, &value).await;
    });
}

fn resume_key(port: u16) -> String {
    format!("kapture.resume.{port}")
}

/// Number the server on `port`'s session with this worker anew, unless it resumed the very
/// session this worker had with that same kapture (its token): a server's word that it
/// resumed is not enough, a restarted or other kapture on the port starts afresh. The
/// grants of the session it replaces are dropped.
fn new_epoch(app: &Rc<App>, conn: &Conn, session: &str, resumed: bool) {
    let port = conn.port;
    let old = app.bridge.epochs.borrow().get(&port).cloned();
    let same = old
        .as_ref()
        .is_some_and(|o| o.token == conn.token && o.session == session);
    if resumed && same {
        return;
    }
    let number = app.bridge.next_epoch.get();
    app.bridge.next_epoch.set(number + 1);
    app.bridge.epochs.borrow_mut().insert(
        port,
        Epoch {
            number,
            token: conn.token.clone(),
            session: session.to_string(),
        },
    );
    if let Some(old) = old {
        app.exec.forget_grants(&asker_prefix(port, old.number));
    }
}

fn asker_prefix(port: u16, epoch: u64) -> String {
    format!("{port}.{epoch}/")
}

/// Who asks for a command of the server on `port`: its session here and its MCP session
/// (`-` when it names none).
fn asker_key(app: &App, port: u16, mcp_session: Option<&str>) -> String {
    let epoch = app
        .bridge
        .epochs
        .borrow()
        .get(&port)
        .map_or(0, |e| e.number);
    format!(
        "{}{}",
        asker_prefix(port, epoch),
        mcp_session.unwrap_or("-")
    )
}

/// Keep what a restarted worker needs to resume its session with `conn`'s server. The write
/// is issued now (not awaited): it reaches the browser before anything the caller does next.
fn remember(conn: &Conn, session: &str) {
    let resume = Resume {
        session: session.to_string(),
        last_command: conn.last_command.get(),
    };
    let key = resume_key(conn.port);
    spawn_local(async move {
        let value = serde_json::to_value(&resume).unwrap_or_default();
        let _ = chrome::storage::session_set(&key, &value).await;
    });
}

/// A person asked to connect: forget their disconnects and look for servers now.
pub fn user_connect(app: &Rc<App>) {
    app.bridge.user_off.borrow_mut().clear();
    wake(app);
}

/// A person asked to disconnect from the server on `port`.
pub fn user_disconnect(app: &Rc<App>, port: u16) {
    app.bridge
        .user_off
        .borrow_mut()
        .insert(port, platform::now_ms());
    let conn = app.bridge.conns.borrow_mut().remove(&port);
    if let Some(conn) = conn {
        let _ = conn
            .ws
            .close_with_code_and_reason(1000, "disconnected from the panel");
    }
    update_badge(app);
}

/// The rules for commands a person runs from the panel: no looser than any connected
/// server's (each category on each origin as the strictest of them says; a person's
/// browser's defaults when none is connected), with the person's own over them; and the
/// longest of their approval waits.
pub fn panel_rules(app: &App) -> crate::exec::Rules {
    let conns = app.bridge.conns.borrow();
    let mut server: Option<(Policy, u64)> = None;
    for c in conns
        .values()
        .filter(|c| matches!(*c.state.borrow(), ConnState::Connected { .. }))
    {
        let (policy, ms) = (c.policy.borrow().clone(), c.approval_ms.get());
        server = Some(match server {
            None => ((*policy).clone(), ms),
            Some((so_far, most)) => (bound::bound(&so_far, &policy, ""), most.max(ms)),
        });
    }
    let (server, ms) = server.unwrap_or_else(|| (Policy::connected_default(), 60_000));
    crate::exec::Rules {
        policy: Rc::new(super::control::person_now(app).apply(&server)),
        approval_ms: ms,
    }
}
