//! `chrome.windows`: bring a window to the front, know the side panel's window.
//! https://developer.chrome.com/docs/extensions/reference/api/windows

use serde_json::json;
use wasm_bindgen::prelude::*;

use super::{to_js, wire_error};
use crate::protocol::WireError;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = ["chrome", "windows"], js_name = update)]
    async fn update_js(window_id: i32, props: JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "windows"], js_name = create)]
    async fn create_js(props: JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "windows"], js_name = getCurrent)]
    async fn get_current_js() -> Result<JsValue, JsValue>;
}

/// The window this extension page is in (the side panel's window).
pub async fn current_id() -> Result<i32, WireError> {
    let w = get_current_js().await.map_err(wire_error)?;
    js_sys::Reflect::get(&w, &JsValue::from_str("id"))
        .ok()
        .and_then(|id| id.as_f64())
        .map(|id| id as i32)
        .ok_or_else(|| {
            WireError::new(
                crate::protocol::ErrorCode::Internal,
                "the browser returned a window without id",
            )
        })
}

/// Open an extension page in a small window of its own (approvals when no panel is open).
pub async fn open_popup(page: &str) -> Result<(), WireError> {
    let props = json!({"url": page, "type": "popup", "width": 520, "height": 760, "focused": true});
    create_js(to_js(&props)).await.map(drop).map_err(wire_error)
}

pub async fn focus(window_id: i32) -> Result<(), WireError> {
    update_js(window_id, to_js(&json!({"focused": true})))
        .await
        .map(drop)
        .map_err(wire_error)
}
