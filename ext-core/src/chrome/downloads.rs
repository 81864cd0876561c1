//! `chrome.downloads`: start downloads and follow them to completion.
//! https://developer.chrome.com/docs/extensions/reference/api/downloads

use serde_json::json;
use wasm_bindgen::prelude::*;

use super::{from_js, to_js, wire_error};
use crate::protocol::WireError;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_namespace = ["chrome", "downloads"], js_name = download)]
    async fn download_js(options: JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "downloads"], js_name = search)]
    async fn search_js(query: JsValue) -> Result<JsValue, JsValue>;
}

/// The fields of a `DownloadItem` Kapture reads (the executor's type).
pub use crate::exec::DownloadItem as Item;

/// Start downloading `url` without asking where to save it.
pub async fn start(url: &str) -> Result<i32, WireError> {
    let id = download_js(to_js(
        &json!({"url": url, "saveAs": false, "conflictAction": "uniquify"}),
    ))
    .await
    .map_err(wire_error)?;
    from_js(id)
}

/// One download by id.
pub async fn get(id: i32) -> Result<Option<Item>, WireError> {
    let items: Vec<Item> = from_js(
        search_js(to_js(&json!({"id": id})))
            .await
            .map_err(wire_error)?,
    )?;
    Ok(items.into_iter().next())
}

/// The most recently started download, if any.
pub async fn latest() -> Result<Option<Item>, WireError> {
    let query = json!({"orderBy": ["-startTime"], "limit": 1});
    let items: Vec<Item> = from_js(search_js(to_js(&query)).await.map_err(wire_error)?)?;
    Ok(items.into_iter().next())
}
