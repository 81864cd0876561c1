//! The only place that touches `chrome.*`: one binding file per namespace, each a thin
//! typed wrapper over wasm-bindgen externs (promise-returning APIs become `async fn`s).

pub mod action;
pub mod alarms;
pub mod debugger;
pub mod devtools;
pub mod downloads;
pub mod port;
pub mod runtime;
pub mod scripting;
pub mod side_panel;
pub mod storage;
pub mod tab_groups;
pub mod tabs;
pub mod windows;

use serde::{de::DeserializeOwned, Serialize};
use wasm_bindgen::JsValue;

use crate::protocol::WireError;

/// Rust value → plain JS object, through `JSON.parse` (one crossing of the wasm boundary).
pub fn to_js<T: Serialize + ?Sized>(value: &T) -> JsValue {
    serde_json::to_string(value)
        .ok()
        .and_then(|text| js_sys::JSON::parse(&text).ok())
        .unwrap_or(JsValue::NULL)
}

/// JS value → Rust value, through `JSON.stringify`: one crossing of the wasm boundary
/// instead of one per field, which is what large answers (a snapshot's walk) cost.
pub fn from_js<T: DeserializeOwned>(value: JsValue) -> Result<T, WireError> {
    let unexpected = |why: String| {
        WireError::new(
            crate::protocol::ErrorCode::Internal,
            format!("unexpected value from the browser: {why}"),
        )
    };
    let text = if value.is_undefined() {
        "null".to_string()
    } else {
        js_sys::JSON::stringify(&value)
            .map_err(|e| unexpected(error_message(&e)))?
            .as_string()
            .unwrap_or_else(|| "null".into())
    };
    serde_json::from_str(&text).map_err(|e| unexpected(e.to_string()))
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
    crate::cdp::failure(&error_message(&err))
}
