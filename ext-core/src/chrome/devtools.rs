//! `chrome.devtools`: the "Kapture" panel in DevTools and the tab it inspects.
//! https://developer.chrome.com/docs/extensions/reference/api/devtools/panels

use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = ["chrome", "devtools", "panels"], js_name = create)]
    fn create_js(title: &str, icon: &str, page: &str);
}

fn lookup(path: &[&str]) -> JsValue {
    let mut value: JsValue = js_sys::global().into();
    for key in path {
        value = js_sys::Reflect::get(&value, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED);
    }
    value
}

/// The tab DevTools inspects, when this page runs inside DevTools.
pub fn inspected_tab() -> Option<i32> {
    lookup(&["chrome", "devtools", "inspectedWindow", "tabId"])
        .as_f64()
        .map(|v| v as i32)
}

/// DevTools' theme ("default" or "dark"), when inside DevTools.
pub fn theme() -> Option<String> {
    lookup(&["chrome", "devtools", "panels", "themeName"]).as_string()
}

/// Add a panel to DevTools.
pub fn create_panel(title: &str, icon: &str, page: &str) {
    create_js(title, icon, page);
}
