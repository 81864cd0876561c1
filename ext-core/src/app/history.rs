//! The app's call history (pure): each call with its arguments, start time, duration and
//! status, bounded, newest last; re-run takes a call back; export is one JSON document; kept
//! across reloads as a stored document whose secrets and typed text are masked.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::client::ServerInfo;

/// Most calls kept; the oldest go first.
pub const HISTORY_MAX: usize = 200;

/// The `format` field of an exported history.
pub const EXPORT_FORMAT: &str = "kapture-app-history";

/// The `format` field of the history the page keeps across reloads.
pub const STORED_FORMAT: &str = "kapture-app-history-stored";

/// One call made from the app.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Call {
    /// 1, 2, 3… in the order calls were made in this page.
    pub seq: u64,
    pub tool: String,
    pub args: Value,
    /// When it started, ms since the Unix epoch.
    pub started: f64,
    /// How long it took, ms.
    pub ms: f64,
    /// `ok`, an error code, or `HTTP`/`RPC` for a failure before any tool result.
    pub status: String,
    pub summary: String,
    /// Its arguments were masked when it was stored (a secret, typed text): a call brought
    /// back from storage that way cannot be run again as it was.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub masked: bool,
}

impl Call {
    pub fn ok(&self) -> bool {
        self.status == "ok"
    }
}

/// The calls, oldest first.
#[derive(Debug, Clone, Default)]
pub struct History {
    calls: VecDeque<Call>,
    next: u64,
}

impl History {
    pub fn new() -> History {
        History::default()
    }

    /// Add a finished call; answers its number.
    pub fn push(
        &mut self,
        tool: &str,
        args: Value,
        started: f64,
        ms: f64,
        status: &str,
        summary: &str,
    ) -> u64 {
        self.next += 1;
        if self.calls.len() == HISTORY_MAX {
            self.calls.pop_front();
        }
        self.calls.push_back(Call {
            seq: self.next,
            tool: tool.to_string(),
            args,
            started,
            ms: ms.max(0.0).round(),
            status: status.to_string(),
            summary: summary.to_string(),
            masked: false,
        });
        self.next
    }

    /// The history as the page stores it (browser storage outlives the page, so nothing
    /// secret goes there): secret-named arguments and typed text masked, as kapture's own
    /// history masks them.
    pub fn stored(&self) -> Value {
        let calls: Vec<Call> = self
            .calls
            .iter()
            .map(|c| {
                let mut args = crate::mask::mask_params(&c.tool, &c.args);
                crate::mask::mask_typed(&c.tool, &mut args, None);
                Call {
                    masked: c.masked || args != c.args,
                    args,
                    ..c.clone()
                }
            })
            .collect();
        json!({"format": STORED_FORMAT, "version": 1, "next": self.next, "calls": calls})
    }

    /// A history stored by [`History::stored`]; an empty one for anything else (a document
    /// of another version, or text a page's scripts left there).
    pub fn restore(stored: &Value) -> History {
        if stored.get("format").and_then(Value::as_str) != Some(STORED_FORMAT)
            || stored.get("version").and_then(Value::as_u64) != Some(1)
        {
            return History::new();
        }
        let calls: VecDeque<Call> = stored
            .get("calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|c| serde_json::from_value::<Call>(c.clone()).ok())
            .collect();
        let skip = calls.len().saturating_sub(HISTORY_MAX);
        let calls: VecDeque<Call> = calls.into_iter().skip(skip).collect();
        let top = calls.iter().map(|c| c.seq).max().unwrap_or(0);
        let next = stored
            .get("next")
            .and_then(Value::as_u64)
            .unwrap_or(0)
            .max(top);
        History { calls, next }
    }

    /// A call by its number (what re-run takes).
    pub fn get(&self, seq: u64) -> Option<&Call> {
        self.calls.iter().find(|c| c.seq == seq)
    }

    /// Newest first, as the table shows them.
    pub fn newest_first(&self) -> impl Iterator<Item = &Call> {
        self.calls.iter().rev()
    }

    pub fn len(&self) -> usize {
        self.calls.len()
    }

    pub fn is_empty(&self) -> bool {
        self.calls.is_empty()
    }

    pub fn clear(&mut self) {
        self.calls.clear();
    }

    /// The history as one JSON document: who served it, when it was exported, every call
    /// oldest first (times as ISO 8601 UTC and as epoch ms).
    pub fn export(&self, server: &ServerInfo, endpoint: &str, now: f64) -> Value {
        let calls: Vec<Value> = self
            .calls
            .iter()
            .map(|c| {
                json!({
                    "seq": c.seq,
                    "tool": c.tool,
                    "args": c.args,
                    "startedAt": iso_time(c.started),
                    "started": c.started,
                    "ms": c.ms,
                    "status": c.status,
                    "ok": c.ok(),
                    "summary": c.summary,
                })
            })
            .collect();
        json!({
            "format": EXPORT_FORMAT,
            "version": 1,
            "exportedAt": iso_time(now),
            "endpoint": endpoint,
            "server": server,
            "calls": calls,
        })
    }
}

/// Epoch milliseconds as `YYYY-MM-DDTHH:MM:SS.mmmZ` (proleptic Gregorian, UTC).
pub fn iso_time(epoch_ms: f64) -> String {
    let ms_total = epoch_ms.max(0.0) as i64;
    let (days, ms_of_day) = (
        ms_total.div_euclid(86_400_000),
        ms_total.rem_euclid(86_400_000),
    );
    // Days since 1970-01-01 to a civil date (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s, ms) = (
        ms_of_day / 3_600_000,
        ms_of_day / 60_000 % 60,
        ms_of_day / 1000 % 60,
        ms_of_day % 1000,
    );
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{ms:03}Z")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_numbered_bounded_and_newest_first() {
        let mut h = History::new();
        for i in 0..(HISTORY_MAX + 5) {
            h.push(
                "browser_snapshot",
                json!({"i": i}),
                1000.0,
                12.4,
                "ok",
                "- page",
            );
        }
        assert_eq!(h.len(), HISTORY_MAX);
        let newest: Vec<u64> = h.newest_first().map(|c| c.seq).take(2).collect();
        assert_eq!(newest, [HISTORY_MAX as u64 + 5, HISTORY_MAX as u64 + 4]);
        assert!(h.get(1).is_none(), "the oldest went");
        assert_eq!(h.get(6).unwrap().args, json!({"i": 5}));
        assert_eq!(h.get(6).unwrap().ms, 12.0);
        h.clear();
        assert!(h.is_empty());
        assert_eq!(
            h.push("x", json!({}), 0.0, 0.0, "ok", ""),
            HISTORY_MAX as u64 + 6
        );
    }

    #[test]
    fn export_is_one_document_with_every_call() {
        let mut h = History::new();
        h.push(
            "browser_navigate",
            json!({"url": "http://127.0.0.1:1/a"}),
            1_700_000_000_000.0,
            85.6,
            "ok",
            "Navigated",
        );
        h.push(
            "browser_click",
            json!({"selector": "#x"}),
            1_700_000_001_000.0,
            3.0,
            "SELECTOR_NOT_FOUND",
            "SELECTOR_NOT_FOUND: no",
        );
        let server = ServerInfo {
            name: "kapture".into(),
            version: "0.1.0".into(),
            protocol: "2025-11-25".into(),
            instructions: String::new(),
        };
        let doc = h.export(&server, "http://127.0.0.1:9/mcp", 1_700_000_002_000.0);
        // It survives a text round trip, as the downloaded file does.
        let doc: Value =
            serde_json::from_str(&serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        assert_eq!(doc["format"], EXPORT_FORMAT);
        assert_eq!(doc["server"]["name"], "kapture");
        assert_eq!(doc["endpoint"], "http://127.0.0.1:9/mcp");
        assert_eq!(doc["exportedAt"], "2023-11-14T22:13:22.000Z");
        let calls = doc["calls"].as_array().unwrap();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0]["tool"], "browser_navigate");
        assert_eq!(calls[0]["args"]["url"], "http://127.0.0.1:1/a");
        assert_eq!(calls[0]["ms"], 86.0);
        assert_eq!(calls[0]["ok"], true);
        assert_eq!(calls[0]["startedAt"], "2023-11-14T22:13:20.000Z");
        assert_eq!(calls[1]["status"], "SELECTOR_NOT_FOUND");
        assert_eq!(calls[1]["ok"], false);
    }

    #[test]
    fn a_stored_history_comes_back_with_its_secrets_masked() {
        let mut h = History::new();
        h.push(
            "browser_navigate",
            json!({"url": "http://a/"}),
            1.0,
            2.0,
            "ok",
            "Navigated",
        );
        h.push(
            "browser_type",
            json!({"ref": "e3", "text": "hunter2"}),
            3.0,
            4.0,
            "ok",
            "Typed",
        );
        h.push(
            "browser_evaluate",
            json!({"function": "1", "apiToken": "tok"}),
            5.0,
            6.0,
            "ok",
            "1",
        );
        // Stored as text, as browser storage keeps it.
        let text = serde_json::to_string(&h.stored()).unwrap();
        assert!(
            !text.contains("hunter2") && !text.contains("\"tok\""),
            "{text}"
        );
        let back = History::restore(&serde_json::from_str(&text).unwrap());
        assert_eq!(back.len(), 3);
        let nav = back.get(1).unwrap();
        assert_eq!(nav.args, json!({"url": "http://a/"}));
        assert!(!nav.masked, "a call without secrets runs again as it was");
        let typed = back.get(2).unwrap();
        assert_eq!(typed.args["text"], crate::mask::MASK);
        assert!(typed.masked);
        assert!(back.get(3).unwrap().masked);
        // Numbering goes on where it stopped.
        let mut back = back;
        assert_eq!(back.push("x", json!({}), 7.0, 1.0, "ok", ""), 4);
    }

    #[test]
    fn anything_else_in_storage_is_an_empty_history() {
        for junk in [
            json!(null),
            json!({"format": "other", "version": 1, "calls": []}),
            json!({"format": STORED_FORMAT, "version": 2, "calls": [{"seq": 1}]}),
            json!({"format": STORED_FORMAT, "version": 1, "calls": [{"seq": "x"}, 5]}),
        ] {
            assert!(History::restore(&junk).is_empty(), "{junk}");
        }
    }

    #[test]
    fn iso_times() {
        assert_eq!(iso_time(0.0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_time(951_782_400_123.0), "2000-02-29T00:00:00.123Z");
        assert_eq!(iso_time(4_102_444_799_999.0), "2099-12-31T23:59:59.999Z");
        assert_eq!(iso_time(-5.0), "1970-01-01T00:00:00.000Z");
    }
}
