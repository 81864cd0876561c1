//! `chrome.storage.session`: small values that survive service-worker restarts but not
//! the browser session.
//! https://developer.chrome.com/docs/extensions/reference/api/storage

use serde_json::{json, Value};
use wasm_bindgen::prelude::*;

use super::{from_js, to_js, wire_error};
use crate::protocol::WireError;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = ["chrome", "storage", "session"], js_name = get)]
    async fn session_get_js(keys: JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "storage", "session"], js_name = set)]
    async fn session_set_js(items: JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "storage", "local"], js_name = get)]
    async fn local_get_js(keys: JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "storage", "local"], js_name = set)]
    async fn local_set_js(items: JsValue) -> Result<JsValue, JsValue>;
}

/// The local (persistent) value under `key`, if any.
pub async fn local_get(key: &str) -> Result<Option<Value>, WireError> {
    let all: Value = from_js(
        local_get_js(to_js(&json!([key])))
            .await
            .map_err(wire_error)?,
    )?;
    Ok(all.get(key).cloned())
}

pub async fn local_set(key: &str, value: &Value) -> Result<(), WireError> {
    let mut items = serde_json::Map::new();
    items.insert(key.to_string(), value.clone());
    local_set_js(to_js(&items))
        .await
        .map(drop)
        .map_err(wire_error)
}

/// The session value under `key`, if any.
pub async fn session_get(key: &str) -> Result<Option<Value>, WireError> {
    let all: Value = from_js(
        session_get_js(to_js(&json!([key])))
            .await
            .map_err(wire_error)?,
    )?;
    Ok(all.get(key).cloned())
}

pub async fn session_set(key: &str, value: &Value) -> Result<(), WireError> {
    let mut items = serde_json::Map::new();
    items.insert(key.to_string(), value.clone());
    session_set_js(to_js(&items))
        .await
        .map(drop)
        .map_err(wire_error)
}
