//! Manual pairing, for a machine where native messaging cannot be registered: a person pastes
//! the one-time code `kapture pair` showed into the options page; the worker proves the code
//! to that kapture (and has it proved back), receives the token sealed under the code, and
//! keeps that server in `chrome.storage.local`, where discovery finds it next to the ones
//! native messaging reports. The code never leaves the machine and is worth one pairing.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::spawn_local;
use web_sys::{MessageEvent, WebSocket};

use crate::chrome;
use crate::handshake::{new_nonce, PairingCode};
use crate::platform;
use crate::protocol::{self, ExtensionFrame, HostFrame, ServerEntry};

/// Where the servers paired by code are kept (port → token); a later pairing with the same
/// port replaces its entry.
const MANUAL_KEY: &str = "kapture.manual_servers";
/// At most this many servers paired by hand are kept (the newest).
const MAX_MANUAL: usize = 8;
/// How long a pairing may take before the person is told it failed.
const PAIR_LIMIT_MS: f64 = 10_000.0;

/// The servers a person paired by code, newest first.
pub async fn manual_servers() -> Vec<ServerEntry> {
    chrome::storage::local_get(MANUAL_KEY)
        .await
        .ok()
        .flatten()
        .and_then(|v| serde_json::from_value(v).ok())
        .unwrap_or_default()
}

async fn keep(server: ServerEntry) {
    let mut list = manual_servers().await;
    list.retain(|s| s.port != server.port);
    list.insert(0, server);
    list.truncate(MAX_MANUAL);
    let value = serde_json::to_value(&list).unwrap_or_default();
    let _ = chrome::storage::local_set(MANUAL_KEY, &value).await;
}

/// Who hears how a pairing went (the page that asked).
type Reply = Box<dyn FnOnce(bool, String)>;

/// One pairing under way.
struct Pairing {
    code: PairingCode,
    ws: WebSocket,
    nonce: String,
    /// The server's nonce, from its challenge: the seal covers it.
    server_nonce: RefCell<String>,
    proven: Cell<bool>,
    /// The token came: the socket's close that follows is no failure.
    paired: Cell<bool>,
    reply: RefCell<Option<Reply>>,
}

impl Pairing {
    /// Say how it went, once; the socket goes.
    fn finish(&self, ok: bool, message: String) {
        if let Some(reply) = self.reply.borrow_mut().take() {
            reply(ok, message);
        }
        let _ = self.ws.close();
    }

    fn send(&self, frame: &ExtensionFrame) {
        let _ = self.ws.send_with_str(&protocol::encode(frame));
    }
}

/// Pair with the kapture the `code` names; `reply` hears the outcome in words. On success
/// the server is kept, and the caller looks for servers (it connects with the token).
pub fn pair(code: &str, reply: impl FnOnce(bool, String) + 'static) {
    let code = match PairingCode::parse(code) {
        Ok(code) => code,
        Err(why) => return reply(false, why),
    };
    let (Ok(nonce), Ok(ws)) = (
        new_nonce(),
        WebSocket::new(&format!("ws://127.0.0.1:{}/", code.port)),
    ) else {
        return reply(false, "the browser could not open a connection".into());
    };
    let pairing = Rc::new(Pairing {
        code,
        ws,
        nonce,
        server_nonce: RefCell::default(),
        proven: Cell::new(false),
        paired: Cell::new(false),
        reply: RefCell::new(Some(Box::new(reply))),
    });
    let on_open = {
        let p = pairing.clone();
        Closure::<dyn FnMut(JsValue)>::new(move |_| {
            p.send(&ExtensionFrame::Pair {
                nonce: p.nonce.clone(),
            })
        })
    };
    let on_message = {
        let p = pairing.clone();
        Closure::<dyn FnMut(JsValue)>::new(move |event: JsValue| {
            let text = event
                .dyn_into::<MessageEvent>()
                .ok()
                .and_then(|m| m.data().as_string());
            if let Some(text) = text {
                on_frame(&p, &text);
            }
        })
    };
    let on_close = {
        let p = pairing.clone();
        Closure::<dyn FnMut(JsValue)>::new(move |_| {
            if p.paired.get() {
                return;
            }
            p.finish(
                false,
                format!(
                    "no kapture answered on port {} (is it running? the code names its port)",
                    p.code.port
                ),
            )
        })
    };
    pairing
        .ws
        .set_onopen(Some(on_open.as_ref().unchecked_ref()));
    pairing
        .ws
        .set_onmessage(Some(on_message.as_ref().unchecked_ref()));
    pairing
        .ws
        .set_onclose(Some(on_close.as_ref().unchecked_ref()));
    // A person pairs a handful of times: the three handlers live as long as the worker.
    on_open.forget();
    on_message.forget();
    on_close.forget();
    let p = pairing.clone();
    spawn_local(async move {
        platform::sleep(std::time::Duration::from_millis(PAIR_LIMIT_MS as u64)).await;
        if !p.paired.get() {
            p.finish(false, "the pairing took too long; try again".into());
        }
    });
}

fn on_frame(p: &Rc<Pairing>, text: &str) {
    let Ok(frame) = protocol::decode::<HostFrame>(text) else {
        return;
    };
    match frame {
        HostFrame::Challenge { nonce, proof } if !p.proven.get() => {
            // Only a server that knows the code hears our proof of it.
            if !p.code.verify_server_proof(&p.nonce, &nonce, &proof) {
                // A mistyped code, or a program that is not that kapture: either way it
                // was told nothing.
                return p.finish(
                    false,
                    format!(
                        "the code does not match the one `kapture pair` showed for the kapture on port {}: check it, or run `kapture pair` again",
                        p.code.port
                    ),
                );
            }
            p.proven.set(true);
            *p.server_nonce.borrow_mut() = nonce.clone();
            p.send(&ExtensionFrame::Proof {
                proof: p.code.extension_proof(&nonce, &p.nonce),
            });
        }
        HostFrame::Paired { sealed } if p.proven.get() => {
            let nonce_s = p.server_nonce.borrow().clone();
            let Some(token) = p.code.unseal(&p.nonce, &nonce_s, &sealed) else {
                return p.finish(false, "kapture's answer could not be read".into());
            };
            p.paired.set(true);
            let server = ServerEntry {
                port: p.code.port,
                token,
                pid: 0,
                started: platform::now_ms() as u64,
            };
            let p = p.clone();
            spawn_local(async move {
                keep(server).await;
                p.finish(
                    true,
                    format!(
                        "paired with the kapture on port {}; connecting",
                        p.code.port
                    ),
                );
            });
        }
        HostFrame::Unauthorized { message, .. } => p.finish(false, message),
        _ => {}
    }
}
