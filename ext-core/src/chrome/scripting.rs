//! `chrome.scripting`: reduced mode's way into a page (no debugger): Kapture's packaged page
//! script injected into the main frame's isolated world, and its functions called there.
//! https://developer.chrome.com/docs/extensions/reference/api/scripting

use serde_json::{json, Value};
use wasm_bindgen::prelude::*;

use super::{from_js, to_js, wire_error};
use crate::protocol::{TabId, WireError};

// The function `executeScript` runs in the page: it must be a JS function (the browser sends
// its source), and it only calls what the packaged file defined.
#[wasm_bindgen(inline_js = "export function page_caller() {
  return (name, args) => {
    const k = globalThis.__kr;
    if (!k) return { missing: true };
    return Promise.resolve().then(() => k[name](...args))
      .catch((e) => ({ error: 'INTERNAL', message: 'page script: ' + String((e && e.message) || e) }));
  };
}")]
extern "C" {
    fn page_caller() -> JsValue;
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = ["chrome", "scripting"], js_name = executeScript)]
    async fn execute_script_js(injection: JsValue) -> Result<JsValue, JsValue>;
}

/// Whether this browser gave the extension `chrome.scripting`.
pub fn available() -> bool {
    let chrome = js_sys::Reflect::get(&js_sys::global(), &JsValue::from_str("chrome"))
        .unwrap_or(JsValue::UNDEFINED);
    !chrome.is_undefined()
        && js_sys::Reflect::get(&chrome, &JsValue::from_str("scripting"))
            .map(|s| !s.is_undefined())
            .unwrap_or(false)
}

/// The main frame of a tab.
fn target(tab: TabId) -> JsValue {
    to_js(&json!({"tabId": tab, "frameIds": [0]}))
}

/// The result of the first (only) frame's injection.
fn first_result(results: JsValue) -> Result<Value, WireError> {
    let results: Vec<Value> = from_js(results)?;
    Ok(results
        .into_iter()
        .next()
        .and_then(|r| r.get("result").cloned())
        .unwrap_or(Value::Null))
}

/// Run the packaged file `file` in the tab's main frame.
pub async fn inject_file(tab: TabId, file: &str) -> Result<(), WireError> {
    let injection = to_js(&json!({"files": [file]}));
    js_sys::Reflect::set(&injection, &JsValue::from_str("target"), &target(tab))
        .map_err(wire_error)?;
    execute_script_js(injection).await.map_err(wire_error)?;
    Ok(())
}

/// Call `name(...args)` of the packaged page script in the tab's main frame; `None` when the
/// document does not have it yet (a new document: inject the file first).
pub async fn call(tab: TabId, name: &str, args: &[Value]) -> Result<Option<Value>, WireError> {
    let injection = js_sys::Object::new();
    let set = |k: &str, v: &JsValue| js_sys::Reflect::set(&injection, &JsValue::from_str(k), v);
    set("target", &target(tab)).map_err(wire_error)?;
    set("func", &page_caller()).map_err(wire_error)?;
    set("args", &to_js(&json!([name, args]))).map_err(wire_error)?;
    let result = first_result(
        execute_script_js(injection.into())
            .await
            .map_err(wire_error)?,
    )?;
    if result.get("missing").and_then(Value::as_bool) == Some(true) {
        return Ok(None);
    }
    Ok(Some(result))
}
