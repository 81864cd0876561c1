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
    #[wasm_bindgen(catch, js_namespace = ["chrome", "downloads"], js_name = cancel)]
    async fn cancel_js(id: i32) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "downloads"], js_name = removeFile)]
    async fn remove_file_js(id: i32) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_namespace = ["chrome", "downloads"], js_name = erase)]
    async fn erase_js(query: JsValue) -> Result<JsValue, JsValue>;
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

/// Stop a download and delete its file: a running one is cancelled (the browser then drops
/// its partial file), a finished one's file is removed; then it leaves the download list.
/// Waits (bounded) until the browser reports it stopped, so the answer comes after the fact.
pub async fn cancel(id: i32) -> Result<(), WireError> {
    // Each step may fail for the state the download is in (cancel: already finished;
    // removeFile: not finished): what matters is that no file is left.
    let _ = cancel_js(id).await;
    for _ in 0..40 {
        match get(id).await? {
            Some(d) if d.state == "in_progress" => {
                crate::platform::sleep(std::time::Duration::from_millis(50)).await
            }
            _ => break,
        }
    }
    let _ = remove_file_js(id).await;
    match get(id).await? {
        Some(d) if d.exists && d.state != "interrupted" => Err(WireError::new(
            crate::protocol::ErrorCode::DownloadFailed,
            format!("its file {} could not be removed", d.filename),
        )),
        _ => {
            let _ = erase_js(to_js(&json!({"id": id}))).await;
            Ok(())
        }
    }
}
