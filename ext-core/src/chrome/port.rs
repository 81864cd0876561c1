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

    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = connect)]
    fn connect_js(info: JsValue) -> Port;
}

impl Port {
    /// Open a port to the service worker.
    pub fn connect(name: &str) -> Port {
        connect_js(to_js(&json!({ "name": name })))
    }

    /// Send a message; a closed port drops it.
    pub fn post<T: serde::Serialize>(&self, message: &T) {
        let _ = self.post_message_js(&to_js(message));
    }

    /// Call `f` for every message. The listener lives as long as the page (forgotten on
    /// purpose: ports and their pages end together).
    pub fn on_message(&self, f: impl FnMut(JsValue) + 'static) {
        let closure = Closure::<dyn FnMut(JsValue)>::new(f);
        self.on_message_js().add_listener(&closure);
        closure.forget();
    }

    /// Call `f` once the other side goes away.
    pub fn on_disconnect(&self, f: impl FnMut(JsValue) + 'static) {
        let closure = Closure::<dyn FnMut(JsValue)>::new(f);
        self.on_disconnect_js().add_listener(&closure);
        closure.forget();
    }
}
