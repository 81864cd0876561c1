//! `chrome.runtime` ports: the long-lived channel between the panel and the service worker.
//! https://developer.chrome.com/docs/extensions/reference/api/runtime#type-Port

use serde_json::json;
use wasm_bindgen::prelude::*;

use super::to_js;

#[wasm_bindgen]
extern "C" {
    /// A `runtime.Port`.
    #[derive(Clone)]
    pub type Port;
    #[wasm_bindgen(method, js_name = postMessage, catch)]
    fn post_message_js(this: &Port, message: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(method, getter, js_name = onMessage)]
    fn on_message_js(this: &Port) -> PortEvent;
    #[wasm_bindgen(method, getter, js_name = onDisconnect)]
    fn on_disconnect_js(this: &Port) -> PortEvent;

    type PortEvent;
    #[wasm_bindgen(method, js_name = addListener)]
    fn add_listener(this: &PortEvent, listener: &Closure<dyn FnMut(JsValue)>);

    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = connect, catch)]
    fn connect_js(info: JsValue) -> Result<Port, JsValue>;
}

/// A listener on a port: kept as long as the caller keeps it (a page that opens ports
/// again after its worker restarted drops the old port's listeners with it).
pub type Listener = Closure<dyn FnMut(JsValue)>;

impl Port {
    /// Open a port to the service worker; `None` when the extension cannot be reached
    /// (it was reloaded or removed under this page).
    pub fn open(name: &str) -> Option<Port> {
        connect_js(to_js(&json!({ "name": name }))).ok()
    }

    /// Send a message; false when the port is closed (the message is dropped).
    pub fn post<T: serde::Serialize>(&self, message: &T) -> bool {
        self.post_message_js(&to_js(message)).is_ok()
    }

    /// Call `f` for every message. The listener lives as long as the page (forgotten on
    /// purpose: the worker's ports and their pages end together).
    pub fn on_message(&self, f: impl FnMut(JsValue) + 'static) {
        self.listen_messages(f).forget();
    }

    /// Call `f` once the other side goes away (for the page's life).
    pub fn on_disconnect(&self, f: impl FnMut(JsValue) + 'static) {
        self.listen_disconnect(f).forget();
    }

    /// Call `f` for every message while the answered listener is kept.
    pub fn listen_messages(&self, f: impl FnMut(JsValue) + 'static) -> Listener {
        let closure = Closure::<dyn FnMut(JsValue)>::new(f);
        self.on_message_js().add_listener(&closure);
        closure
    }

    /// Call `f` when the other side goes away, while the answered listener is kept.
    pub fn listen_disconnect(&self, f: impl FnMut(JsValue) + 'static) -> Listener {
        let closure = Closure::<dyn FnMut(JsValue)>::new(f);
        self.on_disconnect_js().add_listener(&closure);
        closure
    }
}
