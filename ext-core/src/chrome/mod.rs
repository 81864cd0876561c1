//! The only place that touches `chrome.*`: one binding file per namespace, each a thin
//! typed wrapper over wasm-bindgen externs (promise-returning APIs become `async fn`s).

pub mod action;
pub mod alarms;
pub mod debugger;
pub mod devtools;
pub mod downloads;
pub mod port;
pub mod runtime;
pub mod storage;
pub mod tabs;
pub mod windows;

use serde::{de::DeserializeOwned, Serialize};
use wasm_bindgen::JsValue;

use crate::cdp::classify_failure;
use crate::protocol::WireError;

/// Rust value → plain JS object (objects, not `Map`s; `null`, not `undefined`).
pub fn to_js<T: Serialize + ?Sized>(value: &T) -> JsValue {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .unwrap_or(JsValue::NULL)
}

/// JS value → Rust value, through `JSON.stringify`: one crossing of the wasm boundary
/// instead of one per field, which is what large answers (a snapshot's walk) cost.
pub fn from_js<T: DeserializeOwned>(value: JsValue) -> Result<T, WireError> {
    if let Some(text) = js_sys::JSON::stringify(&value)
        .ok()
        .and_then(|s| s.as_string())
    {
        if let Ok(v) = serde_json::from_str(&text) {
            return Ok(v);
        }
    }
    serde_wasm_bindgen::from_value(value).map_err(|e| {
        WireError::new(
            crate::protocol::ErrorCode::Internal,
            format!("unexpected value from the browser: {e}"),
        )
    })
}

/// The message of a rejected chrome promise.
pub fn error_message(err: &JsValue) -> String {
    if let Some(s) = err.as_string() {
        return s;
    }
    js_sys::Reflect::get(err, &JsValue::from_str("message"))
        .ok()
        .and_then(|m| m.as_string())
        .unwrap_or_else(|| format!("{err:?}"))
}

/// A rejected chrome promise as a classified wire error.
pub fn wire_error(err: JsValue) -> WireError {
    let message = error_message(&err);
    WireError::new(classify_failure(&message), message)
}
