//! Whether the tab's network is quiet: the requests in flight and when the last one began
//! or ended, for `waitUntil: networkidle` (pure, fed with the Network domain's events).

use std::collections::HashMap;

use serde_json::Value;

/// Requests remembered in flight at most: beyond this a page's requests are not counted
/// (a wait for quiet is bounded by its deadline anyway).
const PENDING_MAX: usize = 1000;

/// Requests in flight and the time of the last network news.
#[derive(Debug, Default)]
pub struct NetQuiet {
    /// Request id → when it began (ms).
    pending: HashMap<String, f64>,
    /// When a request last began or ended (ms; 0: never).
    last_at: f64,
}

impl NetQuiet {
    /// The Network events that move it.
    pub const EVENTS: [&'static str; 3] = [
        "Network.requestWillBeSent",
        "Network.loadingFinished",
        "Network.loadingFailed",
    ];

    /// Feed one event at `now` (ms).
    pub fn on_event(&mut self, method: &str, params: &Value, now: f64) {
        let id = params.get("requestId").and_then(Value::as_str);
        match (method, id) {
            ("Network.requestWillBeSent", Some(id)) => {
                // A redirect reuses the id: still the same request in flight.
                if self.pending.len() < PENDING_MAX || self.pending.contains_key(id) {
                    self.pending.insert(id.to_string(), now);
                }
                self.last_at = now;
            }
            ("Network.loadingFinished" | "Network.loadingFailed", Some(id)) => {
                self.pending.remove(id);
                self.last_at = now;
            }
            _ => {}
        }
    }

    /// A new main document committed: the old one's requests are cancelled with it (their
    /// end may never be reported to this session).
    pub fn new_document(&mut self, now: f64) {
        self.pending.clear();
        self.last_at = now;
    }

    /// Requests in flight.
    pub fn in_flight(&self) -> usize {
        self.pending.len()
    }

    /// How long (ms) until the network has been quiet for `quiet_ms` at `now`: 0 when it
    /// has, `None` while a request is in flight.
    pub fn quiet_in(&self, quiet_ms: f64, now: f64) -> Option<f64> {
        match self.pending.is_empty() {
            true => Some((self.last_at + quiet_ms - now).max(0.0)),
            false => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn quiet_once_every_request_ended_and_time_passed() {
        let mut q = NetQuiet::default();
        assert_eq!(q.quiet_in(500.0, 1000.0), Some(0.0));
        q.on_event(
            "Network.requestWillBeSent",
            &json!({"requestId": "1"}),
            1000.0,
        );
        q.on_event(
            "Network.requestWillBeSent",
            &json!({"requestId": "2"}),
            1010.0,
        );
        assert_eq!(q.quiet_in(500.0, 1100.0), None);
        q.on_event(
            "Network.loadingFinished",
            &json!({"requestId": "1"}),
            1200.0,
        );
        assert_eq!(q.in_flight(), 1);
        q.on_event("Network.loadingFailed", &json!({"requestId": "2"}), 1300.0);
        assert_eq!(q.quiet_in(500.0, 1400.0), Some(400.0));
        assert_eq!(q.quiet_in(500.0, 1900.0), Some(0.0));
        q.on_event(
            "Network.requestWillBeSent",
            &json!({"requestId": "3"}),
            2000.0,
        );
        q.new_document(2100.0);
        assert_eq!(q.quiet_in(500.0, 2100.0), Some(500.0));
    }
}
