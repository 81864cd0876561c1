//! `chrome.alarms`: the wake-up driver that survives service-worker suspension.
//! https://developer.chrome.com/docs/extensions/reference/api/alarms

use serde_json::json;
use wasm_bindgen::prelude::*;

use super::to_js;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = ["chrome", "alarms"], js_name = create)]
    fn create_js(name: &str, info: JsValue);
}

/// (Re)create a repeating alarm; recreating one with the same name replaces it.
pub fn create_periodic(name: &str, period_minutes: f64) {
    create_js(
        name,
        to_js(&json!({"periodInMinutes": period_minutes, "delayInMinutes": period_minutes})),
    );
}
