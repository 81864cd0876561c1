//! `chrome.sidePanel`: the toolbar icon opens Kapture's side panel.
//! https://developer.chrome.com/docs/extensions/reference/api/sidePanel

use serde_json::json;
use wasm_bindgen::prelude::*;

use super::{to_js, wire_error};
use crate::protocol::WireError;

#[wasm_bindgen]
extern "C" {
    // `catch`: a browser without the API (before Chrome 114) throws on the lookup.
    #[wasm_bindgen(catch, js_namespace = ["chrome", "sidePanel"], js_name = setPanelBehavior)]
    async fn set_panel_behavior_js(behavior: JsValue) -> Result<JsValue, JsValue>;
}

/// Make a click on the toolbar icon open (or close) the side panel.
pub async fn open_on_action_click() -> Result<(), WireError> {
    set_panel_behavior_js(to_js(&json!({"openPanelOnActionClick": true})))
        .await
        .map(drop)
        .map_err(wire_error)
}
