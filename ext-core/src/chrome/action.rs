//! `chrome.action`: the toolbar icon's badge and tooltip show the connection state.
//! https://developer.chrome.com/docs/extensions/reference/api/action

use serde_json::json;
use wasm_bindgen::prelude::*;

use super::to_js;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = ["chrome", "action"], js_name = setBadgeText)]
    fn set_badge_text_js(details: JsValue);
    #[wasm_bindgen(js_namespace = ["chrome", "action"], js_name = setBadgeBackgroundColor)]
    fn set_badge_background_color_js(details: JsValue);
    #[wasm_bindgen(js_namespace = ["chrome", "action"], js_name = setTitle)]
    fn set_title_js(details: JsValue);
}

/// Show `text` on a `color` badge with `title` as the tooltip.
pub fn show(text: &str, color: &str, title: &str) {
    set_badge_text_js(to_js(&json!({"text": text})));
    set_badge_background_color_js(to_js(&json!({"color": color})));
    set_title_js(to_js(&json!({"title": title})));
}
