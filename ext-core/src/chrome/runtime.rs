//! `chrome.runtime`: the extension's identity and native messaging.
//! https://developer.chrome.com/docs/extensions/reference/api/runtime

use serde::{de::DeserializeOwned, Serialize};
use wasm_bindgen::prelude::*;

use super::{from_js, to_js, wire_error};
use crate::protocol::WireError;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = ["chrome", "runtime"], js_name = getManifest)]
    fn get_manifest_js() -> JsValue;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "runtime"], js_name = sendNativeMessage)]
    async fn send_native_message_js(host: &str, message: JsValue) -> Result<JsValue, JsValue>;
}

fn lookup(path: &[&str]) -> Option<String> {
    let mut value: JsValue = js_sys::global().into();
    for key in path {
        value = js_sys::Reflect::get(&value, &JsValue::from_str(key)).ok()?;
    }
    value.as_string()
}

pub fn extension_id() -> String {
    lookup(&["chrome", "runtime", "id"]).unwrap_or_default()
}

pub fn user_agent() -> String {
    lookup(&["navigator", "userAgent"]).unwrap_or_default()
}

pub fn manifest_version() -> String {
    js_sys::Reflect::get(&get_manifest_js(), &JsValue::from_str("version"))
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_default()
}

/// One request/response exchange with a native-messaging host.
pub async fn send_native_message<Req: Serialize, Resp: DeserializeOwned>(
    host: &str,
    request: &Req,
) -> Result<Resp, WireError> {
    from_js(
        send_native_message_js(host, to_js(request))
            .await
            .map_err(wire_error)?,
    )
}
