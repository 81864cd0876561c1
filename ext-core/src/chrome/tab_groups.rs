//! `chrome.tabGroups` and `chrome.tabs.group`: the tab group each MCP session's tabs go in.
//! https://developer.chrome.com/docs/extensions/reference/api/tabGroups

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::json;
use wasm_bindgen::prelude::*;

use super::{from_js, to_js, wire_error};
use crate::protocol::{TabId, WireError};

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = ["chrome", "tabGroups"], js_name = query)]
    async fn query_js(info: JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "tabGroups"], js_name = update)]
    async fn update_js(group_id: i32, props: JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "tabs"], js_name = group)]
    async fn group_js(options: JsValue) -> Result<JsValue, JsValue>;
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawGroup {
    id: i32,
    #[serde(default)]
    title: Option<String>,
}

/// Every group's title by its id (empty when the browser has no tab groups).
pub async fn titles() -> HashMap<i32, String> {
    let Ok(value) = query_js(to_js(&json!({}))).await else {
        return HashMap::new();
    };
    from_js::<Vec<RawGroup>>(value)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|g| Some((g.id, g.title?)))
        .collect()
}

/// Put the tab into the group titled `title` in `window_id`, making the group (with a colour
/// chosen from the title, so a session keeps its colour) when there is none yet.
pub async fn put(tab: TabId, window_id: i32, title: &str) -> Result<(), WireError> {
    let groups: Vec<RawGroup> = from_js(
        query_js(to_js(&json!({"windowId": window_id})))
            .await
            .map_err(wire_error)?,
    )?;
    if let Some(g) = groups.iter().find(|g| g.title.as_deref() == Some(title)) {
        group_js(to_js(&json!({"tabIds": [tab], "groupId": g.id})))
            .await
            .map_err(wire_error)?;
        return Ok(());
    }
    let id = group_js(to_js(
        &json!({"tabIds": [tab], "createProperties": {"windowId": window_id}}),
    ))
    .await
    .map_err(wire_error)?;
    let id: i32 = from_js(id)?;
    let props = json!({"title": title, "color": crate::exec::Placement::colour_of(title), "collapsed": false});
    update_js(id, to_js(&props)).await.map_err(wire_error)?;
    Ok(())
}
