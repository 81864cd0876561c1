//! MCP's stdio, hardened in front of rmcp: every line from the client is judged here, and only
//! well-formed JSON-RPC that rmcp will answer with the same id reaches rmcp. Lines are read
//! with a length cap (an oversized one is skipped as it streams, answered -32600). A line that
//! is not JSON (garbage, invalid UTF-8, nesting deeper than the parser allows) is answered
//! -32700 with id null instead of silence. JSON that is no request (`{"foo":"bar"}`, a batch,
//! `"jsonrpc":"1.0"`, a non-string method, an id that is null or not a string or integer)
//! gets -32600, with the id when it can be read. Bad params (params not an object, `tools/call`
//! without a string `name` or with non-object `arguments`, params rmcp cannot decode for a
//! method it knows) get -32602 with the request's id.
//!
//! The lifecycle is enforced here, so nothing reaches the tools (or the browser) before a
//! lifecycle is chosen. Both are served: the handshake (`initialize`, then anything), and
//! MCP 2026-07-28's, chosen by a first request that carries the protocol version and client
//! capabilities in its `_meta`; from then on the connection speaks 2026-07-28 (rmcp checks
//! each request's metadata) and `initialize` gets -32600. `server/discover` passes at any
//! time and chooses nothing. Until a lifecycle is chosen, `ping` and `initialize` pass, any
//! other request gets -32600 "not initialized" (-32600 rather than LSP's -32002, which MCP
//! uses for "resource not found"), and notifications and client responses are dropped (rmcp
//! ends the session on a first message that is not a request). A second `initialize` gets
//! -32600 and never reaches rmcp, so the session is never reset.
//!
//! A request whose id is still in flight (forwarded, rmcp's answer not yet written) gets
//! -32600 "duplicate id"; `1` and `"1"` are different ids. The merge side reads the id of
//! every answer rmcp writes and releases it before the line goes out. rmcp writes no answer
//! for a request the client cancelled, so a cancelled id is released when an answer passes
//! anyway or `CANCEL_GRACE` after the cancellation. At most `MAX_IN_FLIGHT` requests are in
//! flight: past that the filter stops reading stdin until answers have gone out, so a client
//! that writes without reading meets backpressure and kapture's memory stays bounded (the
//! -32600 "already in flight" answer is only a backstop). Notifications never get an answer: unknown ones
//! and cancellations of unknown ids are passed to rmcp, which ignores them, and ones rmcp
//! could not decode are dropped here (rmcp would answer them -32600).
//!
//! The judging is pure (`read` parses a line, `Session::decide` judges it in the session,
//! `Session::answered` notes one of rmcp's lines); the tasks around it only move lines. rmcp's
//! answers and ours share stdout line by line. The end of stdin is also signalled on its own,
//! so kapture exits promptly even while rmcp would wait for calls still running; before it
//! exits, `Ends::flush` writes out every line rmcp and the filter already produced (rmcp
//! stops the moment stdin ends, and its last answers used to die with the runtime).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::{mpsc, Notify};
use tokio_util::sync::CancellationToken;

/// The longest line accepted (rmcp's own limit is the same).
pub const MAX_LINE: usize = 16 << 20;
/// The most requests forwarded to rmcp and not yet answered: the reader waits past it.
pub const MAX_IN_FLIGHT: usize = 256;
/// How long a cancelled request's id stays taken: rmcp drops the answer of a cancelled
/// request, but one already on its way may still pass, and must not meet a new request
/// with the same id.
pub const CANCEL_GRACE: Duration = Duration::from_secs(5);
/// Buffer between the filter and rmcp.
const PIPE: usize = 1 << 16;
/// While kapture exits: how long the output waits for one more line before it stops.
const QUIET: Duration = Duration::from_millis(50);
/// While kapture exits: the longest the output may take to write out what it holds.
const FLUSH_BOUND: Duration = Duration::from_secs(1);

/// The request methods rmcp decodes into typed requests: if one of them comes back as a
/// custom request, its params did not fit.
const KNOWN_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "server/discover",
    "completion/complete",
    "logging/setLevel",
    "prompts/get",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "resources/directory/read",
    "subscriptions/listen",
    "tools/call",
    "tools/list",
    "tasks/get",
    "tasks/update",
    "tasks/cancel",
    "skills/list",
    "skills/get",
];

/// What to do with one line from the client.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Hand it to rmcp.
    Pass,
    /// Drop it without an answer (an empty line, a notification that must not be answered).
    Skip,
    /// Answer this JSON-RPC error and drop the line.
    Reply(String),
}

/// Where the handshake is.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
enum Phase {
    /// No `initialize` forwarded yet.
    #[default]
    Fresh,
    /// `initialize` with this id (its key) forwarded, not yet answered.
    Initializing(String),
    /// `initialize` answered with a result.
    Ready,
    /// A request with 2026-07-28 metadata passed first: no handshake on this connection.
    Stateless,
}

/// A request forwarded to rmcp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flight {
    Live,
    /// Cancelled by the client; the id is released at this instant if no answer passes first.
    Cancelled(Instant),
}

/// What the filter knows of the session: shared by the reading and writing sides.
#[derive(Debug, Default)]
pub struct Session {
    phase: Phase,
    /// Requests in flight by id key (the id's JSON text, so `1` and `"1"` differ).
    in_flight: HashMap<String, Flight>,
}

/// One JSON-RPC error answer, fields in the usual order.
fn error(id: &Value, code: i64, message: &str) -> Verdict {
    #[derive(serde::Serialize)]
    struct Body<'a> {
        code: i64,
        message: &'a str,
    }
    #[derive(serde::Serialize)]
    struct Answer<'a> {
        jsonrpc: &'static str,
        id: &'a Value,
        error: Body<'a>,
    }
    let answer = Answer {
        jsonrpc: "2.0",
        id,
        error: Body { code, message },
    };
    Verdict::Reply(serde_json::to_string(&answer).unwrap_or_default())
}

/// A request id MCP accepts: a string or an integer (rmcp keeps integers as i64).
fn valid_id(id: &Value) -> bool {
    id.is_string() || id.is_i64()
}

/// The id to echo in an error: the request's, when it is one.
fn readable_id(msg: &serde_json::Map<String, Value>) -> Value {
    msg.get("id")
        .filter(|id| valid_id(id))
        .cloned()
        .unwrap_or(Value::Null)
}

fn key(id: &Value) -> String {
    id.to_string()
}

/// One line as read, before the session is consulted (the costly parsing happens here,
/// outside the session's lock).
#[derive(Debug)]
pub enum Line {
    /// The answer whatever the session.
    Settled(Verdict),
    /// The client's answer to a request of ours.
    Response,
    /// A notification; `cancels` is the key of the id a cancellation names, and `readable`
    /// says whether rmcp can decode it.
    Notification {
        method: String,
        cancels: Option<String>,
        readable: bool,
    },
    /// A request; `bad` is what is wrong with it once it may run (code, message);
    /// `inline` says it carries the 2026-07-28 metadata (no handshake needed).
    Request {
        id: Value,
        method: String,
        bad: Option<(i64, String)>,
        inline: bool,
    },
}

/// Read one complete line (without its newline). `too_long` marks a line cut at the cap.
pub fn read(line: &[u8], too_long: bool) -> Line {
    let null = Value::Null;
    let settled = |code, message: &str| Line::Settled(error(&null, code, message));
    if too_long {
        return settled(
            -32600,
            &format!("Invalid Request: a message longer than {MAX_LINE} bytes was dropped"),
        );
    }
    if line.iter().all(u8::is_ascii_whitespace) {
        return Line::Settled(Verdict::Skip);
    }
    let Ok(text) = std::str::from_utf8(line) else {
        return settled(-32700, "Parse error: the message is not UTF-8");
    };
    let value = match serde_json::from_str::<Value>(text) {
        Ok(v) => v,
        Err(e) => return settled(-32700, &format!("Parse error: {e}")),
    };
    let msg = match &value {
        Value::Object(m) => m,
        Value::Array(_) => {
            return settled(
                -32600,
                "Invalid Request: batches are not supported (MCP 2025-06-18 removed them); send one message per line",
            )
        }
        _ => return settled(-32600, "Invalid Request: a message is a JSON object"),
    };
    let invalid = |message: &str| Line::Settled(error(&readable_id(msg), -32600, message));
    if msg.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid("Invalid Request: \"jsonrpc\" must be \"2.0\"");
    }
    let Some(method) = msg.get("method") else {
        if msg.contains_key("id") && (msg.contains_key("result") || msg.contains_key("error")) {
            return Line::Response;
        }
        return invalid(
            "Invalid Request: a message has a \"method\", or a \"result\" or \"error\" with an \"id\"",
        );
    };
    let Some(method) = method.as_str().map(str::to_string) else {
        return invalid("Invalid Request: \"method\" must be a string");
    };
    // What rmcp makes of it: the same decoding its transport does.
    let decoded = <rmcp::model::ClientJsonRpcMessage as serde::Deserialize>::deserialize(&value);
    let Some(id) = msg.get("id") else {
        let cancels = match &decoded {
            Ok(rmcp::model::ClientJsonRpcMessage::Notification(n)) => match &n.notification {
                rmcp::model::ClientNotification::CancelledNotification(c) => c
                    .params
                    .request_id
                    .as_ref()
                    .and_then(|id| serde_json::to_value(id).ok())
                    .map(|id| key(&id)),
                _ => None,
            },
            _ => None,
        };
        return Line::Notification {
            method,
            cancels,
            readable: decoded.is_ok(),
        };
    };
    if !valid_id(id) {
        return settled(
            -32600,
            "Invalid Request: a request id is a string or an integer, never null",
        );
    }
    let inline = match &decoded {
        Ok(rmcp::model::ClientJsonRpcMessage::Request(r)) => {
            let meta = rmcp::model::GetMeta::get_meta(&r.request);
            meta.protocol_version().is_some()
                && meta
                    .missing_required_keys(&rmcp::model::ProtocolVersion::V_2026_07_28)
                    .is_empty()
        }
        _ => false,
    };
    let bad = if let Some(why) = bad_params(&method, msg.get("params")) {
        Some((-32602, format!("Invalid params: {why}")))
    } else {
        match decoded {
            Ok(rmcp::model::ClientJsonRpcMessage::Request(r)) => match r.request {
                rmcp::model::ClientRequest::CustomRequest(_)
                    if KNOWN_METHODS.contains(&method.as_str()) =>
                {
                    Some((
                        -32602,
                        format!("Invalid params: the params do not fit {method}"),
                    ))
                }
                _ => None,
            },
            // rmcp could not read it as a request: it would answer without the id.
            _ => Some((
                -32600,
                "Invalid Request: not a request rmcp can read".into(),
            )),
        }
    };
    Line::Request {
        id: id.clone(),
        method,
        bad,
        inline,
    }
}

impl Session {
    /// Judge one line at `now` (`read`, then `decide`).
    pub fn judge(&mut self, line: &[u8], too_long: bool, now: Instant) -> Verdict {
        self.decide(read(line, too_long), now)
    }

    /// What to do with a line read, in this session at `now`. A request that passes is
    /// counted in flight until `answered` sees its answer.
    pub fn decide(&mut self, line: Line, now: Instant) -> Verdict {
        self.expire(now);
        match line {
            Line::Settled(verdict) => verdict,
            // Before the handshake there is nothing to answer, and rmcp would end the
            // session on it.
            Line::Response if self.phase == Phase::Fresh => Verdict::Skip,
            Line::Response => Verdict::Pass,
            Line::Notification { method, .. } if self.phase == Phase::Fresh => {
                tracing::debug!(method, "notification before initialize dropped");
                Verdict::Skip
            }
            // rmcp answers a standard notification it cannot decode with -32600, and a
            // notification must never be answered.
            Line::Notification {
                method,
                readable: false,
                ..
            } => {
                tracing::debug!(method, "undecodable notification dropped");
                Verdict::Skip
            }
            Line::Notification { cancels, .. } => {
                if let Some(flight @ Flight::Live) =
                    cancels.and_then(|k| self.in_flight.get_mut(&k))
                {
                    *flight = Flight::Cancelled(now + CANCEL_GRACE);
                }
                Verdict::Pass
            }
            Line::Request {
                id,
                method,
                bad,
                inline,
            } => self.request(&id, &method, bad, inline),
        }
    }

    fn request(
        &mut self,
        id: &Value,
        method: &str,
        bad: Option<(i64, String)>,
        inline: bool,
    ) -> Verdict {
        let k = key(id);
        if self.in_flight.contains_key(&k) {
            return error(
                id,
                -32600,
                &format!(
                    "Invalid Request: duplicate id {k}: a request with this id is still in flight"
                ),
            );
        }
        match (&self.phase, method) {
            // A probe: rmcp answers it (checking its metadata) whatever the lifecycle.
            (_, "server/discover") => {}
            (Phase::Stateless, "initialize") => {
                return error(
                    id,
                    -32600,
                    "Invalid Request: this connection speaks MCP 2026-07-28 (its first request carried the metadata); initialize has no place in it",
                )
            }
            (Phase::Stateless, _) => {}
            (Phase::Fresh, "initialize" | "ping") | (Phase::Initializing(_), "ping") => {}
            (Phase::Fresh, _) if inline && bad.is_none() => self.phase = Phase::Stateless,
            (Phase::Ready | Phase::Initializing(_), "initialize") => {
                return error(
                    id,
                    -32600,
                    "Invalid Request: the session is already initialized; initialize is accepted once",
                )
            }
            (Phase::Ready, _) => {}
            (_, _) => {
                return error(
                    id,
                    -32600,
                    "Invalid Request: not initialized; send initialize first and wait for its answer (only ping may come before), or carry MCP 2026-07-28's metadata in _meta (io.modelcontextprotocol/protocolVersion and clientCapabilities)",
                )
            }
        }
        if let Some((code, message)) = bad {
            return error(id, code, &message);
        }
        if self.in_flight.len() >= MAX_IN_FLIGHT {
            return error(
                id,
                -32600,
                &format!("Invalid Request: {MAX_IN_FLIGHT} requests are already in flight; wait for their answers"),
            );
        }
        if method == "initialize" {
            self.phase = Phase::Initializing(k.clone());
        }
        self.in_flight.insert(k, Flight::Live);
        Verdict::Pass
    }

    /// Whether the window of requests in flight is full at `now`.
    pub fn is_full(&mut self, now: Instant) -> bool {
        self.expire(now);
        self.in_flight.len() >= MAX_IN_FLIGHT
    }

    /// Release cancelled ids whose grace is over.
    fn expire(&mut self, now: Instant) {
        self.in_flight
            .retain(|_, f| !matches!(f, Flight::Cancelled(until) if *until <= now));
    }

    /// Note one line rmcp writes: an answer releases its id, and the answer to `initialize`
    /// ends the handshake.
    pub fn answered(&mut self, line: &str) {
        #[derive(serde::Deserialize)]
        struct Answer {
            id: Option<Value>,
            method: Option<serde::de::IgnoredAny>,
            result: Option<serde::de::IgnoredAny>,
            error: Option<serde::de::IgnoredAny>,
        }
        let Ok(a) = serde_json::from_str::<Answer>(line) else {
            return;
        };
        let Some(id) = a.id.filter(|_| a.method.is_none()) else {
            return;
        };
        if a.result.is_none() && a.error.is_none() {
            return;
        }
        let k = key(&id);
        self.in_flight.remove(&k);
        if self.phase == Phase::Initializing(k) {
            // rmcp ends the session after a failed initialize; until then, nothing else goes.
            self.phase = if a.result.is_some() {
                Phase::Ready
            } else {
                Phase::Fresh
            };
        }
    }
}

/// Why `params` do not fit `method`, for the checks rmcp would answer wrongly (-32601, or
/// -32600 without the id).
fn bad_params(method: &str, params: Option<&Value>) -> Option<&'static str> {
    let params = match params {
        None | Some(Value::Null) => None,
        Some(Value::Object(p)) => Some(p),
        Some(_) => return Some("params must be an object"),
    };
    if method != "tools/call" {
        return None;
    }
    let Some(p) = params else {
        return Some("tools/call needs params with a string \"name\"");
    };
    if !p.get("name").is_some_and(Value::is_string) {
        return Some("tools/call needs a string \"name\"");
    }
    match p.get("arguments") {
        None | Some(Value::Null | Value::Object(_)) => None,
        Some(_) => Some("tools/call \"arguments\" must be an object"),
    }
}

type Shared = Arc<Mutex<Session>>;

fn lock(session: &Shared) -> MutexGuard<'_, Session> {
    session.lock().unwrap_or_else(|p| p.into_inner())
}

/// Read `input` line by line (each at most `MAX_LINE`), hand the good ones to `to_rmcp`,
/// and the answers for the bad ones to `replies`. Ends at end of input.
async fn filter(
    input: impl AsyncRead + Unpin,
    mut to_rmcp: DuplexStream,
    replies: mpsc::Sender<String>,
    session: Shared,
    room: Arc<Notify>,
    ended_input: CancellationToken,
) {
    let mut reader = BufReader::with_capacity(1 << 16, input);
    let mut line: Vec<u8> = Vec::new();
    let mut too_long = false;
    loop {
        // Backpressure: with the window full, read nothing more until answers go out (the
        // timeout re-checks cancelled ids whose grace ran out).
        while lock(&session).is_full(Instant::now()) {
            let _ = tokio::time::timeout(Duration::from_millis(500), room.notified()).await;
        }
        let (done, used, ended) = {
            let buf = match reader.fill_buf().await {
                Ok(b) => b,
                Err(_) => break,
            };
            if buf.is_empty() {
                (false, 0, true)
            } else {
                match buf.iter().position(|b| *b == b'\n') {
                    Some(at) => {
                        if !too_long && line.len() + at <= MAX_LINE {
                            line.extend_from_slice(&buf[..at]);
                        } else {
                            too_long = true;
                        }
                        (true, at + 1, false)
                    }
                    None => {
                        if !too_long && line.len() + buf.len() <= MAX_LINE {
                            line.extend_from_slice(buf);
                        } else {
                            // Past the cap: keep nothing more of this line.
                            too_long = true;
                            line.clear();
                        }
                        (false, buf.len(), false)
                    }
                }
            }
        };
        reader.consume(used);
        if ended {
            break;
        }
        if !done {
            continue;
        }
        let parsed = read(&line, too_long);
        let verdict = lock(&session).decide(parsed, Instant::now());
        match verdict {
            Verdict::Pass => {
                line.push(b'\n');
                if to_rmcp.write_all(&line).await.is_err() {
                    break;
                }
            }
            Verdict::Skip => {}
            Verdict::Reply(answer) => {
                if replies.send(answer).await.is_err() {
                    break;
                }
            }
        }
        line.clear();
        too_long = false;
    }
    // End of input: rmcp sees it too and shuts down.
    ended_input.cancel();
    let _ = to_rmcp.shutdown().await;
}

/// Write rmcp's lines and our replies to `output`, one whole line at a time. Each of
/// rmcp's answers releases its id before it goes out, so a client that reacts to it
/// finds the id free (and the handshake done). Ends when both sources are closed, or, once
/// `finish` is cancelled (kapture is exiting), after `QUIET` without a line: what was
/// already written still goes out.
async fn merge(
    from_rmcp: DuplexStream,
    mut replies: mpsc::Receiver<String>,
    mut output: impl AsyncWrite + Unpin,
    session: Shared,
    room: Arc<Notify>,
    finish: CancellationToken,
) {
    let mut lines = BufReader::new(from_rmcp).lines();
    let (mut rmcp_open, mut replies_open) = (true, true);
    while rmcp_open || replies_open {
        let quiet = async {
            finish.cancelled().await;
            tokio::time::sleep(QUIET).await;
        };
        let line = tokio::select! {
            l = lines.next_line(), if rmcp_open => match l {
                Ok(Some(l)) => {
                    lock(&session).answered(&l);
                    l
                }
                _ => { rmcp_open = false; continue; }
            },
            r = replies.recv(), if replies_open => match r {
                Some(r) => r,
                None => { replies_open = false; continue; }
            },
            () = quiet => break,
        };
        if output.write_all(line.as_bytes()).await.is_err()
            || output.write_all(b"\n").await.is_err()
            || output.flush().await.is_err()
        {
            break;
        }
        // Written: the reader may take the next request.
        room.notify_one();
    }
}

/// The ends of the stdio transport kapture's lifetime depends on.
pub struct Ends {
    input_ended: CancellationToken,
    finish: CancellationToken,
    output: tokio::task::JoinHandle<()>,
}

impl Ends {
    /// Cancelled when the client's input ends.
    pub fn input_ended(&self) -> CancellationToken {
        self.input_ended.clone()
    }

    /// Before the process exits: write out every line rmcp and the filter already wrote
    /// (an answer rmcp wrote just before it stopped would otherwise die with the runtime),
    /// within `FLUSH_BOUND`.
    pub async fn flush(self) {
        self.finish.cancel();
        let _ = tokio::time::timeout(FLUSH_BOUND, self.output).await;
    }
}

/// The transport rmcp serves on: the process's stdin and stdout behind the filter, and its
/// ends (stdin's end, the output's flush).
pub fn transport() -> ((DuplexStream, DuplexStream), Ends) {
    wrap(tokio::io::stdin(), tokio::io::stdout())
}

/// The same over any input and output (tests).
pub fn wrap(
    input: impl AsyncRead + Unpin + Send + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
) -> ((DuplexStream, DuplexStream), Ends) {
    let (to_rmcp, rmcp_reads) = tokio::io::duplex(PIPE);
    let (rmcp_writes, from_rmcp) = tokio::io::duplex(PIPE);
    let (tx, rx) = mpsc::channel(64);
    let session = Shared::default();
    let room = Arc::new(Notify::new());
    let input_ended = CancellationToken::new();
    let finish = CancellationToken::new();
    tokio::spawn(filter(
        input,
        to_rmcp,
        tx,
        session.clone(),
        room.clone(),
        input_ended.clone(),
    ));
    let output = tokio::spawn(merge(from_rmcp, rx, output, session, room, finish.clone()));
    (
        (rmcp_reads, rmcp_writes),
        Ends {
            input_ended,
            finish,
            output,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

    /// The error an answer carries: (id, code, message).
    fn err(v: Verdict) -> (Value, i64, String) {
        let Verdict::Reply(r) = v else {
            panic!("expected an error, got {v:?}")
        };
        let v: Value = serde_json::from_str(&r).unwrap();
        assert_eq!(v["jsonrpc"], "2.0");
        (
            v["id"].clone(),
            v["error"]["code"].as_i64().unwrap(),
            v["error"]["message"].as_str().unwrap().to_string(),
        )
    }

    fn req(id: &str, method: &str, params: &str) -> String {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#)
    }

    /// A session past the handshake.
    fn ready(now: Instant) -> Session {
        let mut s = Session::default();
        assert_eq!(s.judge(INIT.as_bytes(), false, now), Verdict::Pass);
        s.answered(r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}"#);
        s
    }

    #[test]
    fn bad_lines_get_a_parse_error_and_good_ones_pass() {
        let now = Instant::now();
        let mut s = Session::default();
        assert_eq!(
            s.judge(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, false, now),
            Verdict::Pass
        );
        assert_eq!(s.judge(b"  \t", false, now), Verdict::Skip);
        for bad in [&b"not json"[..], b"{\"a\":\xff}", b"{\"a\": 1"] {
            let (id, code, _) = err(s.judge(bad, false, now));
            assert_eq!((id, code), (Value::Null, -32700));
        }
        let deep = "[".repeat(100_000);
        assert_eq!(err(s.judge(deep.as_bytes(), false, now)).1, -32700);
        assert_eq!(err(s.judge(b"{}", true, now)).1, -32600);
    }

    #[test]
    fn what_is_not_a_request_is_an_invalid_request() {
        let now = Instant::now();
        let mut s = ready(now);
        for (line, id) in [
            (r#"{"foo":"bar"}"#, Value::Null),
            (
                r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
                Value::Null,
            ),
            (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, Value::Null),
            (
                r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
                Value::Null,
            ),
            (
                r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#,
                Value::Null,
            ),
            (r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#, 1.into()),
            (r#"{"id":"a","method":"ping"}"#, "a".into()),
            (r#"{"jsonrpc":"2.0","id":2,"method":7}"#, 2.into()),
            (r#"{"jsonrpc":"2.0","id":3}"#, 3.into()),
            (r#"[{"jsonrpc":"2.0","id":7,"method":"ping"}]"#, Value::Null),
            ("[]", Value::Null),
            ("[1,2]", Value::Null),
            ("7", Value::Null),
        ] {
            assert_eq!(err(s.judge(line.as_bytes(), false, now)).0, id, "{line}");
            assert_eq!(
                err(s.judge(line.as_bytes(), false, now)).1,
                -32600,
                "{line}"
            );
        }
        assert!(s.in_flight.is_empty());
    }

    #[test]
    fn bad_params_are_invalid_params_with_the_id() {
        let now = Instant::now();
        let mut s = ready(now);
        for (id, params) in [
            ("10", "[1]"),
            ("11", "{}"),
            ("12", r#"{"arguments":{}}"#),
            ("13", r#"{"name":7}"#),
            ("14", r#"{"name":"browser_status","arguments":[1]}"#),
            ("15", r#"{"name":"browser_status","arguments":"x"}"#),
            (r#""s""#, "7"),
        ] {
            let (got, code, message) =
                err(s.judge(req(id, "tools/call", params).as_bytes(), false, now));
            assert_eq!(
                (got.to_string(), code),
                (id.to_string(), -32602),
                "{params}: {message}"
            );
        }
        let bare = r#"{"jsonrpc":"2.0","id":16,"method":"tools/call"}"#;
        assert_eq!(err(s.judge(bare.as_bytes(), false, now)).1, -32602);
        // Other methods: params are an object, and fit what rmcp expects.
        assert_eq!(
            err(s.judge(req("17", "tools/list", "[1]").as_bytes(), false, now)).1,
            -32602
        );
        assert_eq!(
            err(s.judge(req("18", "resources/read", "{}").as_bytes(), false, now)).1,
            -32602
        );
        assert!(s.in_flight.is_empty());
        for (id, params) in [
            ("20", r#"{"name":"browser_status"}"#),
            ("21", r#"{"name":"browser_status","arguments":null}"#),
            ("22", r#"{"name":"no_such_tool","arguments":{"a":1}}"#),
        ] {
            assert_eq!(
                s.judge(req(id, "tools/call", params).as_bytes(), false, now),
                Verdict::Pass
            );
        }
        for (id, method, params) in [
            ("23", "tools/list", "{}"),
            ("24", "ping", "{}"),
            ("25", "ping", "null"),
            ("26", "no/such", "[1]"),
        ] {
            let v = s.judge(req(id, method, params).as_bytes(), false, now);
            if method == "no/such" {
                // Params of a method nobody knows are still an object in MCP.
                assert_eq!(err(v).1, -32602);
            } else {
                assert_eq!(v, Verdict::Pass, "{method} {params}");
            }
        }
    }

    #[test]
    fn nothing_but_ping_and_initialize_before_the_handshake_and_initialize_once() {
        let now = Instant::now();
        let mut s = Session::default();
        let call = req(
            "3",
            "tools/call",
            r#"{"name":"browser_status","arguments":{}}"#,
        );
        let (id, code, message) = err(s.judge(call.as_bytes(), false, now));
        assert_eq!((id, code), (3.into(), -32600));
        assert!(message.contains("send initialize first"), "{message}");
        // A probe passes (rmcp answers it) and chooses no lifecycle.
        assert_eq!(
            s.judge(req("4", "server/discover", "{}").as_bytes(), false, now),
            Verdict::Pass
        );
        s.answered(r#"{"jsonrpc":"2.0","id":4,"result":{}}"#);
        assert_eq!(s.phase, Phase::Fresh);
        // Notifications and stray answers are dropped before the handshake.
        for quiet in [
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/zzz"}"#,
            r#"{"jsonrpc":"2.0","id":9,"result":{}}"#,
        ] {
            assert_eq!(
                s.judge(quiet.as_bytes(), false, now),
                Verdict::Skip,
                "{quiet}"
            );
        }
        assert_eq!(
            s.judge(req("5", "ping", "{}").as_bytes(), false, now),
            Verdict::Pass
        );
        // Bad initialize params leave the session fresh.
        assert_eq!(
            err(s.judge(req("6", "initialize", "{}").as_bytes(), false, now)).1,
            -32602
        );
        assert_eq!(s.phase, Phase::Fresh);
        assert_eq!(s.judge(INIT.as_bytes(), false, now), Verdict::Pass);
        // Until its answer: pings and notifications pass, other requests do not.
        assert_eq!(err(s.judge(call.as_bytes(), false, now)).1, -32600);
        assert_eq!(
            s.judge(req("7", "ping", "{}").as_bytes(), false, now),
            Verdict::Pass
        );
        let inited = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(s.judge(inited, false, now), Verdict::Pass);
        let again = INIT.replace("\"id\":1", "\"id\":8");
        assert_eq!(err(s.judge(again.as_bytes(), false, now)).1, -32600);
        // A server request from rmcp is no answer.
        s.answered(r#"{"jsonrpc":"2.0","id":1,"method":"roots/list"}"#);
        assert_eq!(s.phase, Phase::Initializing("1".into()));
        s.answered(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        assert_eq!(s.phase, Phase::Ready);
        assert_eq!(s.judge(call.as_bytes(), false, now), Verdict::Pass);
        let (id, code, message) = err(s.judge(again.as_bytes(), false, now));
        assert_eq!((id, code), (8.into(), -32600));
        assert_eq!(
            s.judge(req("9", "server/discover", "{}").as_bytes(), false, now),
            Verdict::Pass
        );
        assert!(message.contains("already initialized"), "{message}");
        assert_eq!(s.phase, Phase::Ready);
    }

    /// `_meta` of a 2026-07-28 request.
    const META_2026: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}"#;

    #[test]
    fn a_first_request_with_2026_metadata_chooses_the_lifecycle_without_handshake() {
        let now = Instant::now();
        let mut s = Session::default();
        // The version alone is not the whole metadata: still refused before a lifecycle.
        let partial = req(
            "1",
            "tools/list",
            r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}"#,
        );
        assert_eq!(err(s.judge(partial.as_bytes(), false, now)).1, -32600);
        assert_eq!(s.phase, Phase::Fresh);
        let list = req("2", "tools/list", &format!("{{{META_2026}}}"));
        assert_eq!(s.judge(list.as_bytes(), false, now), Verdict::Pass);
        assert_eq!(s.phase, Phase::Stateless);
        let call = req(
            "3",
            "tools/call",
            &format!(r#"{{"name":"browser_status","arguments":{{}},{META_2026}}}"#),
        );
        assert_eq!(s.judge(call.as_bytes(), false, now), Verdict::Pass);
        let (_, code, message) = err(s.judge(INIT.as_bytes(), false, now));
        assert_eq!(code, -32600);
        assert!(message.contains("2026-07-28"), "{message}");
        // Notifications (a cancellation) reach rmcp now.
        let cancel =
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#;
        assert_eq!(s.judge(cancel, false, now), Verdict::Pass);
    }

    #[test]
    fn an_id_in_flight_is_refused_until_answered_and_1_is_not_the_string_1() {
        let now = Instant::now();
        let mut s = ready(now);
        let list = |id: &str| req(id, "tools/list", "{}");
        assert_eq!(s.judge(list("5").as_bytes(), false, now), Verdict::Pass);
        let (id, code, message) = err(s.judge(list("5").as_bytes(), false, now));
        assert_eq!((id, code), (5.into(), -32600));
        assert!(message.contains("duplicate id"), "{message}");
        assert_eq!(
            s.judge(list(r#""5""#).as_bytes(), false, now),
            Verdict::Pass
        );
        s.answered(r#"{"jsonrpc":"2.0","id":"5","result":{}}"#);
        assert_eq!(err(s.judge(list("5").as_bytes(), false, now)).1, -32600);
        s.answered(r#"{"jsonrpc":"2.0","id":5,"error":{"code":-1,"message":"x"}}"#);
        assert_eq!(s.judge(list("5").as_bytes(), false, now), Verdict::Pass);
        // Our own duplicate-id error did not release it.
        assert_eq!(err(s.judge(list("5").as_bytes(), false, now)).1, -32600);
    }

    #[test]
    fn a_cancelled_id_is_released_by_its_answer_or_after_the_grace() {
        let now = Instant::now();
        let mut s = ready(now);
        let call = |id: &str| {
            req(
                id,
                "tools/call",
                r#"{"name":"browser_navigate","arguments":{}}"#,
            )
        };
        let cancel = |id: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id}}}}}"#
            )
        };
        assert_eq!(s.judge(call("7").as_bytes(), false, now), Verdict::Pass);
        assert_eq!(s.judge(cancel("7").as_bytes(), false, now), Verdict::Pass);
        assert_eq!(err(s.judge(call("7").as_bytes(), false, now)).1, -32600);
        let later = now + CANCEL_GRACE;
        assert_eq!(s.judge(call("7").as_bytes(), false, later), Verdict::Pass);
        // A cancellation of nothing in flight passes (rmcp ignores it) and changes nothing.
        assert_eq!(
            s.judge(cancel("99").as_bytes(), false, later),
            Verdict::Pass
        );
        assert_eq!(s.judge(cancel("7").as_bytes(), false, later), Verdict::Pass);
        s.answered(r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32800,"message":"cancelled"}}"#);
        assert!(s.in_flight.is_empty());
    }

    #[test]
    fn in_flight_requests_are_bounded() {
        let now = Instant::now();
        let mut s = ready(now);
        for i in 0..MAX_IN_FLIGHT {
            let line = req(&(i + 100).to_string(), "ping", "{}");
            assert_eq!(s.judge(line.as_bytes(), false, now), Verdict::Pass);
        }
        let (_, code, message) = err(s.judge(req("1", "ping", "{}").as_bytes(), false, now));
        assert_eq!(code, -32600);
        assert!(message.contains("in flight"), "{message}");
        s.answered(r#"{"jsonrpc":"2.0","id":100,"result":{}}"#);
        assert_eq!(
            s.judge(req("1", "ping", "{}").as_bytes(), false, now),
            Verdict::Pass
        );
    }

    #[tokio::test]
    async fn lines_flow_through_and_an_oversized_one_is_dropped_with_bounded_memory() {
        let (mut client, server_side) = tokio::io::duplex(1 << 16);
        let (out_w, out_r) = tokio::io::duplex(1 << 16);
        let (server_in, server_out) = tokio::io::split(server_side);
        let ((mut rmcp_in, mut rmcp_out), _) = wrap(server_in, out_w);
        // The "rmcp" side echoes what it reads.
        tokio::spawn(async move {
            let mut lines = BufReader::new(&mut rmcp_in).lines();
            while let Ok(Some(l)) = lines.next_line().await {
                rmcp_out
                    .write_all(format!("{l}\n").as_bytes())
                    .await
                    .unwrap();
            }
        });
        drop(server_out);
        let ping1 = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let ping2 = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
        let writer = tokio::spawn(async move {
            client
                .write_all(format!("{ping1}\n").as_bytes())
                .await
                .unwrap();
            let chunk = vec![b'x'; 1 << 20];
            for _ in 0..(MAX_LINE / chunk.len() + 2) {
                client.write_all(&chunk).await.unwrap();
            }
            client
                .write_all(format!("\n garbage\n{ping2}\n").as_bytes())
                .await
                .unwrap();
            client.shutdown().await.unwrap();
        });
        let mut lines = BufReader::new(out_r).lines();
        let mut got = Vec::new();
        while let Ok(Ok(Some(l))) =
            tokio::time::timeout(Duration::from_secs(10), lines.next_line()).await
        {
            got.push(l);
            if got.len() == 4 {
                break;
            }
        }
        writer.await.unwrap();
        assert_eq!(got.len(), 4, "{got:?}");
        assert!(got.contains(&ping1.to_string()) && got.contains(&ping2.to_string()));
        assert!(got.iter().any(|l| l.contains("-32600")), "{got:?}");
        assert!(got.iter().any(|l| l.contains("-32700")), "{got:?}");
    }

    /// The next line within 300 ms, if any.
    async fn next(lines: &mut tokio::io::Lines<BufReader<DuplexStream>>) -> Option<String> {
        tokio::time::timeout(Duration::from_millis(300), lines.next_line())
            .await
            .ok()
            .and_then(|l| l.ok().flatten())
    }

    #[tokio::test]
    async fn a_full_window_stops_reading_until_answers_go_out_and_eof_is_signalled() {
        let (mut client, server_in) = tokio::io::duplex(1 << 20);
        let (out_w, out_r) = tokio::io::duplex(1 << 20);
        let ((rmcp_in, mut rmcp_out), ends) = wrap(server_in, out_w);
        let ended = ends.input_ended();
        let mut forwarded = BufReader::new(rmcp_in).lines();
        let mut answers = BufReader::new(out_r).lines();
        client
            .write_all(format!("{INIT}\n").as_bytes())
            .await
            .unwrap();
        assert!(next(&mut forwarded).await.is_some());
        rmcp_out
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n")
            .await
            .unwrap();
        assert!(next(&mut answers).await.is_some(), "initialize answered");
        let extra = 20;
        for i in 0..MAX_IN_FLIGHT + extra {
            let line = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}}\n",
                i + 10
            );
            client.write_all(line.as_bytes()).await.unwrap();
        }
        let mut seen = 0;
        while next(&mut forwarded).await.is_some() {
            seen += 1;
        }
        assert_eq!(seen, MAX_IN_FLIGHT, "the reader stopped at the window");
        // Nothing was refused: the rest waits in the client's pipe.
        assert!(next(&mut answers).await.is_none());
        // One answer goes out: one more request comes in.
        rmcp_out
            .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":10,\"result\":{}}\n")
            .await
            .unwrap();
        assert!(next(&mut answers).await.is_some());
        assert!(next(&mut forwarded).await.is_some());
        assert!(next(&mut forwarded).await.is_none());
        assert!(!ended.is_cancelled());
        drop(client);
        // Still full: the end of input is only seen once there is room; answer them all.
        for i in 11..(MAX_IN_FLIGHT + extra + 10) {
            let line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{i},\"result\":{{}}}}\n");
            rmcp_out.write_all(line.as_bytes()).await.unwrap();
        }
        let drain =
            tokio::spawn(
                async move { while answers.next_line().await.ok().flatten().is_some() {} },
            );
        tokio::time::timeout(Duration::from_secs(5), ended.cancelled())
            .await
            .expect("end of input signalled");
        drop(rmcp_out);
        let _ = drain.await;
    }

    #[tokio::test]
    async fn what_rmcp_wrote_before_it_stopped_goes_out_before_exit() {
        let (client, server_in) = tokio::io::duplex(1 << 16);
        let (out_w, out_r) = tokio::io::duplex(1 << 16);
        let ((rmcp_in, mut rmcp_out), ends) = wrap(server_in, out_w);
        // rmcp answers and stops at once, as it does when stdin ends right after requests.
        for id in 1..=3 {
            let line = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{}}}}\n");
            rmcp_out.write_all(line.as_bytes()).await.unwrap();
        }
        drop((rmcp_out, rmcp_in, client));
        tokio::time::timeout(Duration::from_secs(5), ends.flush())
            .await
            .expect("flushed within its bound");
        let mut lines = BufReader::new(out_r).lines();
        let mut ids = Vec::new();
        while let Some(l) = next(&mut lines).await {
            ids.push(serde_json::from_str::<Value>(&l).unwrap()["id"].clone());
        }
        assert_eq!(ids, [1, 2, 3]);
    }

    #[tokio::test]
    async fn an_exit_while_rmcp_still_works_waits_only_a_quiet_moment() {
        let (_client, server_in) = tokio::io::duplex(1 << 16);
        let (out_w, _out_r) = tokio::io::duplex(1 << 16);
        let ((_rmcp_in, _rmcp_out), ends) = wrap(server_in, out_w);
        let started = Instant::now();
        ends.flush().await;
        assert!(started.elapsed() < FLUSH_BOUND, "{:?}", started.elapsed());
    }
}
