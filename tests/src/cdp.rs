//! A minimal raw CDP client for benchmarks and tests: the physical floor and the raw sizes
//! Kapture is measured against, and what a test does as a person. It speaks to the browser endpoint a `--remote-debugging-port` browser
//! writes to `DevToolsActivePort`, with flattened sessions.

use std::path::Path;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A raw CDP connection to a browser.
pub struct RawCdp {
    ws: Ws,
    next: u64,
    /// Events read while waiting for answers, when asked to keep them (`keep_events`).
    kept: Option<Vec<(tokio::time::Instant, Option<String>, String)>>,
}

impl RawCdp {
    /// Connect to the browser whose profile is `profile` (it must run with
    /// `--remote-debugging-port`).
    pub async fn connect(profile: &Path) -> Result<RawCdp, String> {
        let file = profile.join("DevToolsActivePort");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let text = loop {
            if let Ok(t) = std::fs::read_to_string(&file) {
                if t.lines().count() >= 2 {
                    break t;
                }
            }
            if std::time::Instant::now() > deadline {
                return Err(format!("{} never appeared", file.display()));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let mut lines = text.lines();
        let port = lines.next().unwrap_or_default();
        let path = lines.next().unwrap_or_default();
        let (ws, _) = tokio_tungstenite::connect_async(format!("ws://127.0.0.1:{port}{path}"))
            .await
            .map_err(|e| e.to_string())?;
        Ok(RawCdp {
            ws,
            next: 0,
            kept: None,
        })
    }

    /// Send a command (on a session, if given) and wait for its answer; events are skipped.
    pub async fn send(
        &mut self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, String> {
        self.send_keeping(session, method, params, None).await
    }

    /// Send a command and wait for its answer and then for `event` on the same session
    /// (e.g. `Page.navigate` then `Page.loadEventFired`), at most 60 s.
    pub async fn send_until(
        &mut self,
        session: Option<&str>,
        method: &str,
        params: Value,
        event: &str,
    ) -> Result<Value, String> {
        let answer = self
            .send_keeping(session, method, params, Some(event))
            .await?;
        Ok(answer)
    }

    async fn send_keeping(
        &mut self,
        session: Option<&str>,
        method: &str,
        params: Value,
        event: Option<&str>,
    ) -> Result<Value, String> {
        self.next += 1;
        let mut msg = json!({"id": self.next, "method": method, "params": params});
        if let Some(s) = session {
            msg["sessionId"] = json!(s);
        }
        self.ws
            .send(Message::text(msg.to_string()))
            .await
            .map_err(|e| e.to_string())?;
        let (mut answer, mut seen) = (None, event.is_none());
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        while answer.is_none() || !seen {
            let frame = tokio::time::timeout_at(deadline, self.ws.next())
                .await
                .map_err(|_| format!("{method}: no answer"))?
                .ok_or("socket closed")?
                .map_err(|e| e.to_string())?;
            let Message::Text(t) = frame else { continue };
            let v: Value = serde_json::from_str(&t).map_err(|e| e.to_string())?;
            if v.get("id").and_then(Value::as_u64) == Some(self.next) {
                if let Some(err) = v.get("error") {
                    return Err(format!("{method}: {err}"));
                }
                answer = Some(v.get("result").cloned().unwrap_or(Value::Null));
            } else if event.is_some()
                && v.get("method").and_then(Value::as_str) == event
                && v.get("sessionId").and_then(Value::as_str) == session
            {
                seen = true;
            } else if let (Some(kept), Some(m)) =
                (self.kept.as_mut(), v.get("method").and_then(Value::as_str))
            {
                let on = v
                    .get("sessionId")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                kept.push((tokio::time::Instant::now(), on, m.to_string()));
            }
        }
        Ok(answer.unwrap_or(Value::Null))
    }

    /// The raw byte size of a command's whole answer message.
    pub async fn answer_bytes(
        &mut self,
        session: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<usize, String> {
        self.send(session, method, params)
            .await
            .map(|v| v.to_string().len())
    }

    /// Attach to the page target whose URL contains `url_part`; answers the session id.
    pub async fn attach_page(&mut self, url_part: &str) -> Result<String, String> {
        let targets = self.send(None, "Target.getTargets", json!({})).await?;
        let target = targets["targetInfos"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| {
                t["type"] == "page" && t["url"].as_str().is_some_and(|u| u.contains(url_part))
            })
            .ok_or_else(|| format!("no page with {url_part}"))?;
        let attached = self
            .send(
                None,
                "Target.attachToTarget",
                json!({"targetId": target["targetId"], "flatten": true}),
            )
            .await?;
        attached["sessionId"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| "no session".into())
    }
}

impl RawCdp {
    /// Close the extension's service worker the way Chrome stops an idle one (its target
    /// closed through browser-level CDP); answers how many workers were closed.
    pub async fn kill_service_worker(&mut self) -> Result<usize, String> {
        let targets = self.send(None, "Target.getTargets", json!({})).await?;
        let workers: Vec<Value> = targets["targetInfos"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|t| {
                t["type"] == "service_worker"
                    && t["url"]
                        .as_str()
                        .is_some_and(|u| u.starts_with("chrome-extension://"))
            })
            .cloned()
            .collect();
        for w in &workers {
            self.send(
                None,
                "Target.closeTarget",
                json!({"targetId": w["targetId"]}),
            )
            .await?;
        }
        Ok(workers.len())
    }
}

impl RawCdp {
    /// Reload extension `id` as a person does on `chrome://extensions` (developer mode on, as
    /// it must be for an unpacked extension, then its Reload button).
    pub async fn reload_extension(&mut self, id: &str) -> Result<(), String> {
        let created = self
            .send(
                None,
                "Target.createTarget",
                json!({"url": "chrome://extensions"}),
            )
            .await?;
        let target = created["targetId"].clone();
        let attached = self
            .send(
                None,
                "Target.attachToTarget",
                json!({"targetId": target, "flatten": true}),
            )
            .await?;
        let session = attached["sessionId"]
            .as_str()
            .ok_or("no session")?
            .to_string();
        let script = format!(
            "chrome.developerPrivate.updateProfileConfiguration({{inDeveloperMode: true}})\
             .then(() => chrome.developerPrivate.reload({id:?}, {{failQuietly: true}}))\
             .then(() => 'reloaded')"
        );
        let answer = self
            .send(
                Some(&session),
                "Runtime.evaluate",
                json!({"expression": script, "awaitPromise": true, "returnByValue": true}),
            )
            .await?;
        self.send(None, "Target.closeTarget", json!({"targetId": target}))
            .await?;
        match answer.pointer("/result/value").and_then(Value::as_str) {
            Some("reloaded") => Ok(()),
            _ => Err(format!("the reload failed: {answer}")),
        }
    }
}

impl RawCdp {
    /// Keep the events `send` reads past from now on (none kept before), or stop keeping
    /// them; answers those kept so far with when each came.
    pub fn keep_events(
        &mut self,
        keep: bool,
    ) -> Vec<(tokio::time::Instant, Option<String>, String)> {
        std::mem::replace(&mut self.kept, keep.then(Vec::new)).unwrap_or_default()
    }

    /// Read events for `window` (a fixed wait, as a grace window is): answers the methods
    /// seen on `session`, in order, each with when it came (ms into the window). Bounded
    /// by the window; a closed socket is an error.
    pub async fn watch(
        &mut self,
        session: Option<&str>,
        window: Duration,
    ) -> Result<Vec<(f64, String)>, String> {
        let began = tokio::time::Instant::now();
        let deadline = began + window;
        let mut seen = Vec::new();
        loop {
            let frame = match tokio::time::timeout_at(deadline, self.ws.next()).await {
                Err(_) => return Ok(seen),
                Ok(frame) => frame.ok_or("socket closed")?.map_err(|e| e.to_string())?,
            };
            let Message::Text(t) = frame else { continue };
            let v: Value = serde_json::from_str(&t).map_err(|e| e.to_string())?;
            if v.get("sessionId").and_then(Value::as_str) == session {
                if let Some(m) = v.get("method").and_then(Value::as_str) {
                    seen.push((began.elapsed().as_secs_f64() * 1e3, m.to_string()));
                }
            }
        }
    }
}
