//! The app's MCP client over Streamable HTTP, as pure data: the HTTP requests to send
//! (JSON-RPC ids, bearer token, session and protocol headers) and the reading of an answer
//! (JSON or an SSE stream; HTTP failures told in words). The page only performs them.

use serde_json::{json, Value};

use super::sse;

/// The protocol version the app asks for in `initialize` (the server may answer another,
/// which the app then sends in `MCP-Protocol-Version`).
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// What the app says it is.
pub const CLIENT_NAME: &str = "kapture-test-app";

/// Longest piece of a server's error body quoted in a message.
const BODY_QUOTE_MAX: usize = 300;

/// Why a call did not give a result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientError {
    /// The server refused the bearer token.
    #[error("kapture refused the token (HTTP {status}): use the token from the app link kapture printed on its stderr")]
    Unauthorized { status: u16 },
    /// The session is gone (expired, or kapture restarted).
    #[error("the MCP session is gone (HTTP 404; expired or kapture restarted): connect again")]
    SessionGone,
    /// Any other HTTP failure, with what the server said.
    #[error("HTTP {status}: {body}")]
    Http { status: u16, body: String },
    /// The server answered a JSON-RPC error.
    #[error("JSON-RPC error {code}: {message}")]
    Rpc { code: i64, message: String },
    /// The answer held no response to the request.
    #[error("the answer held no response to request {id}")]
    NoAnswer { id: u64 },
    /// The answer could not be read.
    #[error("the answer is not JSON-RPC: {0}")]
    BadAnswer(String),
    /// fetch itself failed (server down, network).
    #[error("could not reach kapture: {0}")]
    Network(String),
}

/// One HTTP request to make against the MCP endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpRequest {
    pub method: &'static str,
    pub headers: Vec<(String, String)>,
    pub body: Option<String>,
}

impl HttpRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What `initialize` told about the server.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct ServerInfo {
    pub name: String,
    pub version: String,
    pub protocol: String,
    pub instructions: String,
}

/// The client's state: token, next id, and the session once initialized.
#[derive(Debug, Clone)]
pub struct Client {
    token: String,
    next_id: u64,
    session: Option<String>,
    protocol: Option<String>,
}

impl Client {
    pub fn new(token: &str) -> Client {
        Client {
            token: token.trim().to_string(),
            next_id: 0,
            session: None,
            protocol: None,
        }
    }

    pub fn session_id(&self) -> Option<&str> {
        self.session.as_deref()
    }

    pub fn protocol(&self) -> Option<&str> {
        self.protocol.as_deref()
    }

    /// The headers every request carries: the token, what answers the app reads, and once
    /// initialized the session and the negotiated protocol version.
    fn headers(&self, with_body: bool) -> Vec<(String, String)> {
        let mut h = vec![
            ("Authorization".into(), format!("Bearer {}", self.token)),
            (
                "Accept".into(),
                "application/json, text/event-stream".into(),
            ),
        ];
        if with_body {
            h.push(("Content-Type".into(), "application/json".into()));
        }
        if let Some(s) = &self.session {
            h.push(("Mcp-Session-Id".into(), s.clone()));
        }
        if let Some(p) = &self.protocol {
            h.push(("MCP-Protocol-Version".into(), p.clone()));
        }
        h
    }

    /// A request with the next id; answers the id to look for in the answer.
    pub fn request(&mut self, method: &str, params: Value) -> (u64, HttpRequest) {
        self.next_id += 1;
        let id = self.next_id;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        (
            id,
            HttpRequest {
                method: "POST",
                headers: self.headers(true),
                body: Some(body.to_string()),
            },
        )
    }

    /// A notification (no id, no answer but 202).
    pub fn notification(&self, method: &str) -> HttpRequest {
        HttpRequest {
            method: "POST",
            headers: self.headers(true),
            body: Some(json!({"jsonrpc": "2.0", "method": method}).to_string()),
        }
    }

    /// The `initialize` request. The app offers no capabilities: kapture's approvals
    /// (elicitation) are then refused with the reason in the answer, never left waiting.
    pub fn initialize(&mut self) -> (u64, HttpRequest) {
        self.request(
            "initialize",
            json!({
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION")},
            }),
        )
    }

    /// Take in the `initialize` result and the `Mcp-Session-Id` header that came with it.
    pub fn initialized(&mut self, session: Option<&str>, result: &Value) -> ServerInfo {
        self.session = session.filter(|s| !s.is_empty()).map(str::to_string);
        let text = |p: &str| {
            result
                .pointer(p)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let protocol = text("/protocolVersion");
        self.protocol = (!protocol.is_empty()).then(|| protocol.clone());
        ServerInfo {
            name: text("/serverInfo/name"),
            version: text("/serverInfo/version"),
            protocol,
            instructions: text("/instructions"),
        }
    }

    /// `DELETE /mcp`: ends the session on the server (nothing to end without one).
    pub fn end(&mut self) -> Option<HttpRequest> {
        let req = self.session.as_ref().map(|_| HttpRequest {
            method: "DELETE",
            headers: self.headers(false),
            body: None,
        });
        self.session = None;
        self.protocol = None;
        req
    }
}

/// Read the answer to request `id`: the HTTP status, its Content-Type and its body. An SSE
/// body may hold notifications and requests before the response; they are skipped.
pub fn read_answer(
    status: u16,
    content_type: &str,
    body: &str,
    id: u64,
) -> Result<Value, ClientError> {
    match status {
        200..=299 => {}
        401 => return Err(ClientError::Unauthorized { status }),
        403 if body_says_token(body) => return Err(ClientError::Unauthorized { status }),
        404 => return Err(ClientError::SessionGone),
        _ => {
            return Err(ClientError::Http {
                status,
                body: quote_body(body),
            })
        }
    }
    let messages: Vec<Value> = if content_type
        .to_ascii_lowercase()
        .starts_with("text/event-stream")
    {
        sse::parse(body)
            .into_iter()
            .filter(|e| !e.data.trim().is_empty())
            .filter_map(|e| serde_json::from_str(&e.data).ok())
            .collect()
    } else {
        match serde_json::from_str::<Value>(body) {
            Ok(Value::Array(batch)) => batch,
            Ok(v) => vec![v],
            Err(e) => return Err(ClientError::BadAnswer(e.to_string())),
        }
    };
    let answer = messages
        .into_iter()
        .find(|m| m.get("id").and_then(Value::as_u64) == Some(id) && m.get("method").is_none())
        .ok_or(ClientError::NoAnswer { id })?;
    if let Some(err) = answer.get("error") {
        return Err(ClientError::Rpc {
            code: err.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: err
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        });
    }
    answer
        .get("result")
        .cloned()
        .ok_or_else(|| ClientError::BadAnswer("a response with neither result nor error".into()))
}

fn body_says_token(body: &str) -> bool {
    let b = body.to_ascii_lowercase();
    b.contains("token") || b.contains("unauthori")
}

/// A server's error body as one short line.
fn quote_body(body: &str) -> String {
    let one_line: String = body
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let t = one_line.trim();
    if t.is_empty() {
        return "(no body)".into();
    }
    match t.char_indices().nth(BODY_QUOTE_MAX) {
        Some((at, _)) => format!("{}…", &t[..at]),
        None => t.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(req: &HttpRequest) -> Value {
        serde_json::from_str(req.body.as_deref().unwrap()).unwrap()
    }

    #[test]
    fn initialize_then_requests_carry_session_and_protocol() {
        let mut c = Client::new(" tok123 \n");
        let (id, init) = c.initialize();
        assert_eq!(id, 1);
        assert_eq!(init.method, "POST");
        assert_eq!(init.header("authorization"), Some("Bearer tok123"));
        assert_eq!(
            init.header("accept"),
            Some("application/json, text/event-stream")
        );
        assert_eq!(init.header("Mcp-Session-Id"), None);
        assert_eq!(init.header("MCP-Protocol-Version"), None);
        let b = body(&init);
        assert_eq!(b["method"], "initialize");
        assert_eq!(b["id"], 1);
        assert_eq!(b["params"]["protocolVersion"], PROTOCOL_VERSION);

        let info = c.initialized(
            Some("abc-session"),
            &json!({"protocolVersion": "2025-06-18", "serverInfo": {"name": "kapture", "version": "0.1.0"}, "instructions": "Drive"}),
        );
        assert_eq!(info.name, "kapture");
        assert_eq!(info.protocol, "2025-06-18");
        assert_eq!(c.session_id(), Some("abc-session"));

        let note = c.notification("notifications/initialized");
        assert_eq!(body(&note).get("id"), None);
        assert_eq!(note.header("mcp-session-id"), Some("abc-session"));

        let (id2, list) = c.request("tools/list", json!({}));
        let (id3, _) = c.request("tools/call", json!({"name": "x"}));
        assert_eq!((id2, id3), (2, 3));
        assert_eq!(list.header("MCP-Protocol-Version"), Some("2025-06-18"));
        assert_eq!(list.header("Mcp-Session-Id"), Some("abc-session"));
    }

    #[test]
    fn end_deletes_the_session_once() {
        let mut c = Client::new("t");
        assert_eq!(c.end(), None, "no session, nothing to delete");
        c.initialized(Some("s1"), &json!({"protocolVersion": "2025-11-25"}));
        let del = c.end().unwrap();
        assert_eq!(del.method, "DELETE");
        assert_eq!(del.body, None);
        assert_eq!(del.header("Mcp-Session-Id"), Some("s1"));
        assert_eq!(c.end(), None);
        assert_eq!(c.session_id(), None);
    }

    #[test]
    fn a_json_answer_and_an_sse_answer_read_the_same() {
        let msg = json!({"jsonrpc": "2.0", "id": 4, "result": {"tools": []}});
        let json_ok = read_answer(200, "application/json", &msg.to_string(), 4).unwrap();
        let sse_body = format!(
            "id: 0\nretry: 3000\ndata:\n\ndata: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{}}}}\n\nid: 1\ndata: {msg}\n\n"
        );
        let sse_ok = read_answer(200, "text/event-stream; charset=utf-8", &sse_body, 4).unwrap();
        assert_eq!(json_ok, json!({"tools": []}));
        assert_eq!(sse_ok, json_ok);
    }

    #[test]
    fn a_server_request_with_the_same_id_is_not_the_answer() {
        let body = "data: {\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"elicitation/create\",\"params\":{}}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"ok\":true}}\n\n";
        assert_eq!(
            read_answer(200, "text/event-stream", body, 5).unwrap(),
            json!({"ok": true})
        );
    }

    #[test]
    fn failures_are_told_in_words() {
        assert_eq!(
            read_answer(401, "text/plain", "Unauthorized", 1),
            Err(ClientError::Unauthorized { status: 401 })
        );
        let text = read_answer(401, "", "", 1).unwrap_err().to_string();
        assert!(text.contains("refused the token"), "{text}");
        assert_eq!(read_answer(404, "", "", 1), Err(ClientError::SessionGone));
        match read_answer(403, "text/plain", "Origin not allowed\n", 1) {
            Err(ClientError::Http { status: 403, body }) => assert_eq!(body, "Origin not allowed"),
            other => panic!("{other:?}"),
        }
        let long = "x".repeat(1000);
        match read_answer(500, "", &long, 1) {
            Err(ClientError::Http { body, .. }) => {
                assert!(body.chars().count() <= BODY_QUOTE_MAX + 1)
            }
            other => panic!("{other:?}"),
        }
        let rpc =
            json!({"jsonrpc": "2.0", "id": 2, "error": {"code": -32602, "message": "bad params"}});
        assert_eq!(
            read_answer(200, "application/json", &rpc.to_string(), 2),
            Err(ClientError::Rpc {
                code: -32602,
                message: "bad params".into()
            })
        );
        assert_eq!(
            read_answer(200, "application/json", &rpc.to_string(), 3),
            Err(ClientError::NoAnswer { id: 3 })
        );
        assert!(matches!(
            read_answer(200, "application/json", "<html>", 1),
            Err(ClientError::BadAnswer(_))
        ));
    }
}
