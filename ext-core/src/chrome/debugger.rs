//! `chrome.debugger`: attach to a tab and send it CDP commands.
//! https://developer.chrome.com/docs/extensions/reference/api/debugger

use serde_json::{json, Value};
use wasm_bindgen::prelude::*;

use super::{from_js, to_js, wire_error};
use crate::protocol::{TabId, WireError};

/// CDP version asked for at attach.
const PROTOCOL: &str = "1.3";

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = ["chrome", "debugger"], js_name = attach)]
    async fn attach_js(target: JsValue, version: &str) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "debugger"], js_name = detach)]
    async fn detach_js(target: JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "debugger"], js_name = sendCommand)]
    async fn send_command_js(
        target: JsValue,
        method: &str,
        params: JsValue,
    ) -> Result<JsValue, JsValue>;
}

fn target(tab_id: TabId) -> JsValue {
    to_js(&json!({ "tabId": tab_id }))
}

pub async fn attach(tab_id: TabId) -> Result<(), WireError> {
    attach_js(target(tab_id), PROTOCOL)
        .await
        .map(drop)
        .map_err(wire_error)
}

pub async fn detach(tab_id: TabId) -> Result<(), WireError> {
    detach_js(target(tab_id))
        .await
        .map(drop)
        .map_err(wire_error)
}

pub async fn send_command(tab_id: TabId, method: &str, params: &Value) -> Result<Value, WireError> {
    let res = send_command_js(target(tab_id), method, to_js(params))
        .await
        .map_err(wire_error)?;
    if res.is_undefined() || res.is_null() {
        return Ok(Value::Object(Default::default()));
    }
    from_js(res)
}

/// [`send_command`] on a child session of the tab (flat sessions of auto-attached targets).
pub async fn send_command_in(
    tab_id: TabId,
    session: &str,
    method: &str,
    params: &Value,
) -> Result<Value, WireError> {
    let res = send_command_js(
        to_js(&json!({ "tabId": tab_id, "sessionId": session })),
        method,
        to_js(params),
    )
    .await
    .map_err(wire_error)?;
    if res.is_undefined() || res.is_null() {
        return Ok(Value::Object(Default::default()));
    }
    from_js(res)
}

/// Whether this browser gave the extension `chrome.debugger` (the `debugger` permission).
pub fn available() -> bool {
    let chrome = js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("chrome"))
        .unwrap_or(JsValue::UNDEFINED);
    !chrome.is_undefined()
        && js_sys::Reflect::get(&chrome, &JsValue::from_str("debugger"))
            .map(|d| !d.is_undefined())
            .unwrap_or(false)
}
