//! Downloads in the native engine: the browser saves every download under its guid into a
//! private staging folder of this connection (`Browser.setDownloadBehavior` allowAndName),
//! its `Browser.downloadWillBegin` / `downloadProgress` events are kept here as the
//! extension's `chrome.downloads` items, and a finished file is handed on under its
//! sanitised suggested name, for `files::finish_download` to move into kapture's download
//! folder like any other (never overwriting, never through a symlink).

use std::cell::{Cell, RefCell};
use std::path::{Path, PathBuf};

use ext_core::exec::DownloadItem;
use serde_json::Value;

/// How many downloads are remembered (the oldest are forgotten first).
const KEPT: usize = 256;

struct Item {
    id: i32,
    guid: String,
    /// The frame that started it (a page's main frame id is its target id).
    frame: String,
    url: String,
    suggested: String,
    /// in_progress, interrupted or complete (`chrome.downloads` words).
    state: String,
    bytes: f64,
    /// The size the server announced (0: unknown).
    total: f64,
    file: String,
    error: Option<String>,
    /// Refused by the policy: whatever the browser still writes is deleted, never kept.
    cancelled: bool,
}

/// The connection's downloads and the folder the browser writes them into.
pub struct Downloads {
    staging: tempfile::TempDir,
    items: RefCell<Vec<Item>>,
    next: Cell<i32>,
}

impl Downloads {
    pub fn new() -> std::io::Result<Downloads> {
        Ok(Downloads {
            staging: tempfile::Builder::new()
                .prefix("kapture-downloads-")
                .tempdir()?,
            items: RefCell::default(),
            next: Cell::new(1),
        })
    }

    /// Where the browser is told to save.
    pub fn staging(&self) -> &Path {
        self.staging.path()
    }

    /// A browser event; the frame of a download that just ended (finished or not).
    pub fn on_event(&self, method: &str, p: &Value) -> Option<String> {
        let text = |k: &str| p.get(k).and_then(Value::as_str).unwrap_or_default();
        match method {
            "Browser.downloadWillBegin" => {
                let id = self.next.get();
                self.next.set(id + 1);
                let mut items = self.items.borrow_mut();
                if items.len() >= KEPT {
                    items.remove(0);
                }
                items.push(Item {
                    id,
                    guid: text("guid").into(),
                    frame: text("frameId").into(),
                    url: text("url").into(),
                    suggested: text("suggestedFilename").into(),
                    state: "in_progress".into(),
                    bytes: 0.0,
                    total: 0.0,
                    file: String::new(),
                    error: None,
                    cancelled: false,
                });
                None
            }
            "Browser.downloadProgress" => {
                let mut items = self.items.borrow_mut();
                let item = items.iter_mut().find(|i| i.guid == text("guid"))?;
                item.bytes = p
                    .get("receivedBytes")
                    .and_then(Value::as_f64)
                    .unwrap_or(item.bytes);
                item.total = p
                    .get("totalBytes")
                    .and_then(Value::as_f64)
                    .unwrap_or(item.total);
                match text("state") {
                    "completed" | "canceled" if item.cancelled => {
                        // It finished before the cancel reached the browser.
                        self.remove_files(item);
                        Some(item.frame.clone())
                    }
                    "completed" => {
                        match self.hand_on(item) {
                            Ok(file) => {
                                item.file = file.display().to_string();
                                item.state = "complete".into();
                            }
                            Err(why) => {
                                item.state = "interrupted".into();
                                item.error = Some(why);
                            }
                        }
                        Some(item.frame.clone())
                    }
                    "canceled" => {
                        item.state = "interrupted".into();
                        item.error = Some("the browser cancelled it".into());
                        Some(item.frame.clone())
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The finished file `<staging>/<guid>` as `<staging>/<id>/<suggested name>`, so the
    /// name it is kept under in kapture's folder is the one the server suggested.
    fn hand_on(&self, item: &Item) -> Result<PathBuf, String> {
        let saved = self.staging().join(&item.guid);
        if item.guid.is_empty() || item.guid.contains(['/', '\\', '.']) || !saved.is_file() {
            return Err(format!(
                "the browser reported it finished, but no file is at {} (a browser on another machine saves downloads on its own disk)",
                saved.display()
            ));
        }
        let folder = self.staging().join(item.id.to_string());
        std::fs::create_dir(&folder).map_err(|e| e.to_string())?;
        let name = crate::files::sanitize_name(&item.suggested);
        let file = folder.join(name);
        std::fs::rename(&saved, &file).map_err(|e| e.to_string())?;
        Ok(file)
    }

    /// Mark download `id` refused and delete what is on disk of it; its guid, for the
    /// browser's `Browser.cancelDownload` (`None`: no such download).
    pub fn cancel(&self, id: i32) -> Option<String> {
        let mut items = self.items.borrow_mut();
        let item = items.iter_mut().find(|i| i.id == id)?;
        item.cancelled = true;
        item.state = "interrupted".into();
        item.error = Some("refused by the policy".into());
        self.remove_files(item);
        Some(item.guid.clone())
    }

    /// Delete a download's files: the one being written and the one handed on.
    fn remove_files(&self, item: &mut Item) {
        if !item.guid.is_empty() && !item.guid.contains(['/', '\\', '.']) {
            let _ = std::fs::remove_file(self.staging().join(&item.guid));
        }
        if !item.file.is_empty() {
            let _ = std::fs::remove_file(&item.file);
            item.file.clear();
        }
    }

    fn view(i: &Item) -> DownloadItem {
        DownloadItem {
            id: i.id,
            url: i.url.clone(),
            final_url: String::new(),
            filename: i.file.clone(),
            mime: String::new(),
            state: i.state.clone(),
            file_size: i.bytes,
            bytes_received: i.bytes,
            total_bytes: i.total,
            error: i.error.clone(),
            exists: !i.file.is_empty(),
        }
    }

    pub fn latest(&self) -> Option<DownloadItem> {
        self.items.borrow().last().map(Self::view)
    }

    pub fn get(&self, id: i32) -> Option<DownloadItem> {
        self.items
            .borrow()
            .iter()
            .find(|i| i.id == id)
            .map(Self::view)
    }

    /// The first download `frame` started after download `after`.
    pub fn started_by(&self, frame: &str, after: i32) -> Option<i32> {
        self.items
            .borrow()
            .iter()
            .find(|i| i.id > after && i.frame == frame)
            .map(|i| i.id)
    }

    /// The newest download's id (0: none yet).
    pub fn newest_id(&self) -> i32 {
        self.items.borrow().last().map(|i| i.id).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_make_items_and_a_finished_file_keeps_its_suggested_name() {
        let d = Downloads::new().unwrap();
        d.on_event(
            "Browser.downloadWillBegin",
            &json!({"guid": "g1", "frameId": "F", "url": "http://a.test/r.txt", "suggestedFilename": "../r\u{202e}.txt"}),
        );
        assert_eq!(d.latest().unwrap().state, "in_progress");
        assert_eq!(d.started_by("F", 0), Some(1));
        assert_eq!(d.started_by("F", 1), None);
        std::fs::write(d.staging().join("g1"), "body").unwrap();
        let ended = d.on_event(
            "Browser.downloadProgress",
            &json!({"guid": "g1", "state": "completed", "receivedBytes": 4.0}),
        );
        assert_eq!(ended.as_deref(), Some("F"));
        let item = d.get(1).unwrap();
        assert_eq!(item.state, "complete");
        assert_eq!(item.file_size, 4.0);
        let file = PathBuf::from(&item.filename);
        assert!(file.starts_with(d.staging()), "{file:?}");
        // No dot-dot, no bidi mark: the name is sanitised before it is used.
        assert_eq!(file.file_name().unwrap(), "_r_.txt");
        assert_eq!(std::fs::read_to_string(file).unwrap(), "body");
    }

    #[test]
    fn a_missing_file_or_a_cancel_is_an_interrupted_download_that_says_why() {
        let d = Downloads::new().unwrap();
        for g in ["g1", "g2"] {
            d.on_event(
                "Browser.downloadWillBegin",
                &json!({"guid": g, "frameId": "F", "url": "u"}),
            );
        }
        d.on_event(
            "Browser.downloadProgress",
            &json!({"guid": "g1", "state": "completed"}),
        );
        d.on_event(
            "Browser.downloadProgress",
            &json!({"guid": "g2", "state": "canceled"}),
        );
        let (a, b) = (d.get(1).unwrap(), d.get(2).unwrap());
        assert_eq!(
            (a.state.as_str(), b.state.as_str()),
            ("interrupted", "interrupted")
        );
        assert!(a.error.unwrap().contains("no file"));
        assert!(b.error.unwrap().contains("cancelled"));
    }

    #[test]
    fn a_cancelled_download_leaves_no_file_finished_or_not() {
        let d = Downloads::new().unwrap();
        for g in ["g1", "g2"] {
            d.on_event(
                "Browser.downloadWillBegin",
                &json!({"guid": g, "frameId": "F", "url": "u", "suggestedFilename": "s.csv"}),
            );
            std::fs::write(d.staging().join(g), "secret").unwrap();
        }
        // g1 finished and was handed on before the cancel; g2 finishes after it.
        d.on_event(
            "Browser.downloadProgress",
            &json!({"guid": "g1", "state": "completed"}),
        );
        let handed = PathBuf::from(d.get(1).unwrap().filename);
        assert!(handed.is_file());
        assert_eq!(d.cancel(1).as_deref(), Some("g1"));
        assert_eq!(d.cancel(2).as_deref(), Some("g2"));
        d.on_event(
            "Browser.downloadProgress",
            &json!({"guid": "g2", "state": "completed"}),
        );
        assert!(!handed.exists());
        assert!(!d.staging().join("g2").exists());
        for id in [1, 2] {
            let item = d.get(id).unwrap();
            assert_eq!(
                (item.state.as_str(), item.filename.as_str()),
                ("interrupted", "")
            );
        }
    }
}
