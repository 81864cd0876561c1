//! `chrome.tabs`: list, create, focus and close tabs.
//! https://developer.chrome.com/docs/extensions/reference/api/tabs

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::{json, Value};
use wasm_bindgen::prelude::*;

use super::{from_js, to_js, wire_error};
use crate::methods::TabInfo;
use crate::protocol::{ErrorCode, TabId, WireError};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = ["chrome", "tabs"], js_name = query)]
    async fn query_js(info: JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "tabs"], js_name = get)]
    async fn get_js(tab_id: i32) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "tabs"], js_name = create)]
    async fn create_js(props: JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "tabs"], js_name = update)]
    async fn update_js(tab_id: i32, props: JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "tabs"], js_name = remove)]
    async fn remove_js(tab_id: i32) -> Result<JsValue, JsValue>;

    type TabEvent;
    #[wasm_bindgen(thread_local_v2, js_namespace = ["chrome", "tabs"], js_name = onActivated)]
    static ON_ACTIVATED: TabEvent;
    #[wasm_bindgen(thread_local_v2, js_namespace = ["chrome", "tabs"], js_name = onUpdated)]
    static ON_UPDATED: TabEvent;
    #[wasm_bindgen(method, js_name = addListener)]
    fn add_listener(this: &TabEvent, listener: &Closure<dyn FnMut(JsValue, JsValue)>);
}

/// The fields of `tabs.Tab` that Kapture reads.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawTab {
    id: Option<TabId>,
    index: u32,
    window_id: i32,
    url: Option<String>,
    pending_url: Option<String>,
    title: Option<String>,
    active: bool,
    /// -1 when the tab is in no group.
    #[serde(default = "no_group")]
    group_id: i32,
}

fn no_group() -> i32 {
    -1
}

impl RawTab {
    fn into_info(self, groups: &HashMap<i32, String>) -> Option<TabInfo> {
        Some(TabInfo {
            group: groups.get(&self.group_id).cloned(),
            tab_id: self.id?,
            index: self.index,
            window_id: self.window_id,
            url: self.url.or(self.pending_url).unwrap_or_default(),
            title: self.title.unwrap_or_default(),
            active: self.active,
        })
    }
}

/// The groups' titles, asked only when a tab is in one.
async fn titles_for<'a>(tabs: impl IntoIterator<Item = &'a RawTab>) -> HashMap<i32, String> {
    if tabs.into_iter().any(|t| t.group_id >= 0) {
        super::tab_groups::titles().await
    } else {
        HashMap::new()
    }
}

async fn tabs_from(value: Result<JsValue, JsValue>) -> Result<Vec<TabInfo>, WireError> {
    let raw: Vec<RawTab> = from_js(value.map_err(wire_error)?)?;
    let groups = titles_for(&raw).await;
    Ok(raw
        .into_iter()
        .filter_map(|t| t.into_info(&groups))
        .collect())
}

async fn tab_from(value: Result<JsValue, JsValue>) -> Result<TabInfo, WireError> {
    let raw: RawTab = from_js(value.map_err(wire_error)?)?;
    let groups = titles_for([&raw]).await;
    raw.into_info(&groups)
        .ok_or_else(|| WireError::new(ErrorCode::Internal, "the browser returned a tab without id"))
}

pub async fn query(filter: &Value) -> Result<Vec<TabInfo>, WireError> {
    tabs_from(query_js(to_js(filter)).await).await
}

pub async fn get(tab_id: TabId) -> Result<TabInfo, WireError> {
    tab_from(get_js(tab_id).await).await
}

pub async fn create(url: &str) -> Result<TabInfo, WireError> {
    tab_from(create_js(to_js(&json!({"url": url, "active": true}))).await).await
}

pub async fn activate(tab_id: TabId) -> Result<TabInfo, WireError> {
    tab_from(update_js(tab_id, to_js(&json!({"active": true}))).await).await
}

/// Load `url` in the tab (reduced mode's navigation, without the debugger).
pub async fn navigate(tab_id: TabId, url: &str) -> Result<(), WireError> {
    update_js(tab_id, to_js(&json!({"url": url})))
        .await
        .map(drop)
        .map_err(wire_error)
}

/// Whether the tab is loading a document (`status` is `loading`).
pub async fn loading(tab_id: TabId) -> Result<bool, WireError> {
    #[derive(Deserialize)]
    struct Status {
        #[serde(default)]
        status: Option<String>,
    }
    let tab: Status = from_js(get_js(tab_id).await.map_err(wire_error)?)?;
    Ok(tab.status.as_deref() == Some("loading"))
}

pub async fn remove(tab_id: TabId) -> Result<(), WireError> {
    remove_js(tab_id).await.map(drop).map_err(wire_error)
}

/// Call `f(tab, window)` whenever a window's active tab changes (an extension page's
/// listener, for the page's life: the side panel follows its window's tab).
pub fn on_activated(mut f: impl FnMut(TabId, i32) + 'static) {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Info {
        tab_id: TabId,
        window_id: i32,
    }
    let closure = Closure::<dyn FnMut(JsValue, JsValue)>::new(move |info: JsValue, _| {
        if let Ok(i) = from_js::<Info>(info) {
            f(i.tab_id, i.window_id)
        }
    });
    ON_ACTIVATED.with(|e| e.add_listener(&closure));
    closure.forget();
}

/// Call `f(tab)` whenever a tab's URL changes (for the page's life).
pub fn on_url_changed(mut f: impl FnMut(TabId) + 'static) {
    let closure = Closure::<dyn FnMut(JsValue, JsValue)>::new(move |tab: JsValue, change| {
        let url = js_sys::Reflect::get(&change, &JsValue::from_str("url")).ok();
        if let (Some(tab), Some(_)) = (tab.as_f64(), url.and_then(|u| u.as_string())) {
            f(tab as TabId)
        }
    });
    ON_UPDATED.with(|e| e.add_listener(&closure));
    closure.forget();
}
