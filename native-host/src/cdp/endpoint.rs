//! Where a browser's DevTools WebSocket is: a `ws://` or `wss://` URL is taken as it is;
//! for `http(s)://host:port` the browser is asked (`GET /json/version`, its
//! `webSocketDebuggerUrl`). The HTTP side is one bounded GET on a socket (TLS for https);
//! no client library needed for it.

use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use url::Url;

use super::CdpError;

/// How long asking `/json/version` may take in all (connect, send, answer).
pub const VERSION_LIMIT: Duration = Duration::from_secs(10);
/// The largest `/json/version` answer read (a browser's is well under 1 KiB).
const MAX_ANSWER: usize = 64 * 1024;

/// The longest endpoint shown when it does not parse as a URL.
const SHOWN_MAX: usize = 80;

/// How an endpoint is shown in messages, status lines and logs: `scheme://host:port/path`,
/// without the credentials pools carry (userinfo `user:pass@`, the query's `?token=…`,
/// `apiKey=…`: replaced by `?…`) and without a fragment. One that does not parse is cut at
/// its first `?` or `#`, after its last `@`, and to [`SHOWN_MAX`] characters.
pub fn shown(endpoint: &str) -> String {
    let endpoint = endpoint.trim();
    if let Ok(url) = Url::parse(endpoint) {
        if let Some(host) = url.host_str().filter(|h| !h.is_empty()) {
            let mut out = format!("{}://{host}", url.scheme());
            if let Some(port) = url.port() {
                out.push_str(&format!(":{port}"));
            }
            if url.path() != "/" {
                out.push_str(url.path());
            }
            if url.query().is_some() {
                out.push_str("?…");
            }
            return out;
        }
    }
    let cut = endpoint.split(['?', '#']).next().unwrap_or_default();
    let (scheme, rest) = match cut.split_once("://") {
        Some((scheme, rest)) => (format!("{scheme}://"), rest),
        None => (String::new(), cut),
    };
    let rest = rest.rsplit('@').next().unwrap_or_default();
    let whole = format!("{scheme}{rest}");
    let mut out: String = whole
        .chars()
        .filter(|c| !c.is_control())
        .take(SHOWN_MAX)
        .collect();
    if cut.len() < endpoint.len() {
        out.push_str("?…");
    } else if whole.chars().count() > SHOWN_MAX {
        out.push('…');
    }
    out
}

/// A DevTools endpoint as given on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// The browser's (or a pool's) HTTP side: ask it for the WebSocket URL.
    Http(Url),
    /// The WebSocket URL itself.
    Ws(Url),
}

/// Read an endpoint: `http(s)://host:port[/path][?query]` or `ws(s)://…`.
pub fn parse(endpoint: &str) -> Result<Endpoint, CdpError> {
    let bad = |why: &str| CdpError::BadEndpoint(shown(endpoint), why.to_string());
    let url = Url::parse(endpoint.trim()).map_err(|e| bad(&e.to_string()))?;
    if url.host_str().is_none_or(str::is_empty) {
        return Err(bad("it names no host"));
    }
    match url.scheme() {
        "http" | "https" => Ok(Endpoint::Http(url)),
        "ws" | "wss" => Ok(Endpoint::Ws(url)),
        other => Err(bad(&format!(
            "the scheme {other}: is not one; write http(s)://host:port or ws(s)://host:port/devtools/browser/…"
        ))),
    }
}

/// The browser's WebSocket URL for `endpoint`.
pub async fn websocket_url(endpoint: &str) -> Result<Url, CdpError> {
    match parse(endpoint)? {
        Endpoint::Ws(url) => Ok(url),
        Endpoint::Http(base) => {
            let unreachable = |why: String| CdpError::Unreachable {
                endpoint: shown(endpoint),
                why,
            };
            let answer = tokio::time::timeout(VERSION_LIMIT, get(&version_url(&base)))
                .await
                .map_err(|_| unreachable(format!("no answer within {VERSION_LIMIT:?}")))?
                .map_err(unreachable)?;
            let ws = websocket_of(&answer).map_err(|why| CdpError::NotABrowser {
                endpoint: shown(endpoint),
                why,
            })?;
            let ws = Url::parse(&ws).map_err(|e| CdpError::NotABrowser {
                endpoint: shown(endpoint),
                why: format!(
                    "its webSocketDebuggerUrl {:?} is not a URL: {e}",
                    shown(&ws)
                ),
            })?;
            Ok(behind_tls(&base, ws))
        }
    }
}

/// A browser behind a TLS front names its WebSocket `ws://` on the front's own host and
/// port (it builds the URL from the request's Host): that socket is the front's, so TLS.
fn behind_tls(base: &Url, mut ws: Url) -> Url {
    let same_place = ws.host_str() == base.host_str()
        && ws.port_or_known_default() == base.port_or_known_default();
    if base.scheme() == "https" && ws.scheme() == "ws" && same_place {
        let _ = ws.set_scheme("wss");
    }
    ws
}

/// `/json/version` under the endpoint's path, its query kept (pools put tokens there).
fn version_url(base: &Url) -> Url {
    let mut url = base.clone();
    let path = format!("{}/json/version", base.path().trim_end_matches('/'));
    url.set_path(&path);
    url
}

/// One `GET` (over TLS for `https`); answers the body of a `200`.
async fn get(url: &Url) -> Result<Vec<u8>, String> {
    let host = url.host_str().unwrap_or_default();
    let port = url.port_or_known_default().unwrap_or(80);
    let tcp = tokio::net::TcpStream::connect((host.trim_matches(['[', ']']), port))
        .await
        .map_err(|e| e.to_string())?;
    if url.scheme() == "https" {
        get_over(url, super::tls::connect(host, tcp).await?).await
    } else {
        get_over(url, tcp).await
    }
}

/// The GET itself on an open stream.
async fn get_over(
    url: &Url,
    mut stream: impl tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
) -> Result<Vec<u8>, String> {
    let host = url.host_str().unwrap_or_default();
    let mut target = url.path().to_string();
    if let Some(q) = url.query() {
        target = format!("{target}?{q}");
    }
    let host_header = match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_string(),
    };
    let request = format!(
        "GET {target} HTTP/1.1\r\nHost: {host_header}\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
    );
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        let n = stream.read(&mut buf).await.map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        raw.extend_from_slice(&buf[..n]);
        if raw.len() > MAX_ANSWER {
            return Err(format!("its answer is over {MAX_ANSWER} bytes"));
        }
        if let Ok(Some(body)) = http_body(&raw, false) {
            return Ok(body);
        }
    }
    http_body(&raw, true)?.ok_or_else(|| "the answer ended early".to_string())
}

/// The body of a complete HTTP answer in `raw` (`None`: not complete yet; `at_eof`: the
/// connection ended there); anything but a `200` is an error carrying the status line.
fn http_body(raw: &[u8], at_eof: bool) -> Result<Option<Vec<u8>>, String> {
    let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Ok(None);
    };
    let head = String::from_utf8_lossy(&raw[..end]);
    let body = &raw[end + 4..];
    let mut lines = head.lines();
    let status = lines.next().unwrap_or_default();
    if status.split_whitespace().nth(1) != Some("200") {
        return Err(format!("it answered {status:?}"));
    }
    let header = |name: &str| {
        head.lines().skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    };
    if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        return Ok(dechunk(body));
    }
    match header("content-length").and_then(|v| v.parse::<usize>().ok()) {
        Some(len) if body.len() >= len => Ok(Some(body[..len].to_vec())),
        Some(_) => Ok(None),
        // No length: the body runs to the end of the connection (asked with `close`).
        None => Ok(at_eof.then(|| body.to_vec())),
    }
}

/// A chunked body, once its last chunk is in.
fn dechunk(mut body: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    // Bounded: each round consumes a chunk header.
    for _ in 0..MAX_ANSWER {
        let line_end = body.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&body[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        body = &body[line_end + 2..];
        if size == 0 {
            return Some(out);
        }
        if body.len() < size + 2 {
            return None;
        }
        out.extend_from_slice(&body[..size]);
        body = &body[size + 2..];
    }
    None
}

/// `webSocketDebuggerUrl` of a `/json/version` answer.
fn websocket_of(body: &[u8]) -> Result<String, String> {
    let v: Value = serde_json::from_slice(body).map_err(|e| format!("not JSON: {e}"))?;
    v.get("webSocketDebuggerUrl")
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| "its /json/version has no webSocketDebuggerUrl".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_are_shown_without_their_credentials() {
        let cases = [
            ("http://127.0.0.1:9222", "http://127.0.0.1:9222"),
            (
                "wss://user:pass@pool.example/chrome?token=SECRET&apiKey=K",
                "wss://pool.example/chrome?…",
            ),
            (
                "ws://127.0.0.1:9222/devtools/browser/abc",
                "ws://127.0.0.1:9222/devtools/browser/abc",
            ),
            (
                "https://pool.example:8443/?apiKey=SECRET#frag",
                "https://pool.example:8443?…",
            ),
            ("http://only-user@h:1/p#SECRET", "http://h:1/p"),
            // Malformed ones: cut, never echoed whole.
            ("http://user:SECRET@/x?token=SECRET", "http:///x?…"),
            ("9222?token=SECRET", "9222?…"),
            ("user:SECRET@host", "host"),
            ("http://", "http://"),
        ];
        for (given, want) in cases {
            assert_eq!(shown(given), want, "{given}");
            assert!(!shown(given).contains("SECRET"), "{given}");
        }
        let long = "x".repeat(500);
        assert_eq!(shown(&long).chars().count(), SHOWN_MAX + 1);
        let err = parse("ftp://u:SECRET@h/?token=SECRET")
            .unwrap_err()
            .to_string();
        assert!(!err.contains("SECRET"), "{err}");
    }

    #[test]
    fn endpoints_are_read_tls_ones_too() {
        assert!(matches!(
            parse("http://127.0.0.1:9222"),
            Ok(Endpoint::Http(_))
        ));
        assert!(matches!(
            parse("https://pool.example"),
            Ok(Endpoint::Http(_))
        ));
        assert!(matches!(
            parse("ws://127.0.0.1:9222/devtools/browser/abc"),
            Ok(Endpoint::Ws(_))
        ));
        assert!(matches!(
            parse("wss://pool.example/x?token=t"),
            Ok(Endpoint::Ws(_))
        ));
        for bad in ["ftp://h", "9222", "http://"] {
            let err = parse(bad).unwrap_err().to_string();
            assert!(err.contains("is not a DevTools endpoint"), "{bad}: {err}");
        }
    }

    #[test]
    fn a_browser_behind_a_tls_front_is_reached_over_tls() {
        let ws = |u: &str| Url::parse(u).unwrap();
        let front = ws("https://127.0.0.1:8443");
        assert_eq!(
            behind_tls(&front, ws("ws://127.0.0.1:8443/devtools/browser/a")).as_str(),
            "wss://127.0.0.1:8443/devtools/browser/a"
        );
        // Elsewhere, or plain discovery: as the browser said.
        assert_eq!(
            behind_tls(&front, ws("ws://127.0.0.1:9222/devtools/browser/a")).as_str(),
            "ws://127.0.0.1:9222/devtools/browser/a"
        );
        assert_eq!(
            behind_tls(
                &ws("http://127.0.0.1:8443"),
                ws("ws://127.0.0.1:8443/devtools/browser/a")
            )
            .as_str(),
            "ws://127.0.0.1:8443/devtools/browser/a"
        );
    }

    #[test]
    fn the_version_url_keeps_the_path_and_the_query() {
        let base = Url::parse("http://h:3000/pool/?token=t").unwrap();
        assert_eq!(
            version_url(&base).as_str(),
            "http://h:3000/pool/json/version?token=t"
        );
        let base = Url::parse("http://127.0.0.1:9222").unwrap();
        assert_eq!(
            version_url(&base).as_str(),
            "http://127.0.0.1:9222/json/version"
        );
    }

    #[test]
    fn http_answers_are_read_by_length_or_chunks() {
        let body = br#"{"webSocketDebuggerUrl":"ws://127.0.0.1:1/devtools/browser/x"}"#;
        let mut raw =
            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes();
        assert_eq!(http_body(&raw, false).unwrap(), None);
        raw.extend_from_slice(body);
        let got = http_body(&raw, false).unwrap().unwrap();
        assert_eq!(
            websocket_of(&got).unwrap(),
            "ws://127.0.0.1:1/devtools/browser/x"
        );
        let chunked = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n2\r\n1}\r\n0\r\n\r\n";
        assert_eq!(http_body(chunked, false).unwrap().unwrap(), b"{\"a\":1}");
        let unsized_body = b"HTTP/1.1 200 OK\r\n\r\n{}";
        assert_eq!(http_body(unsized_body, false).unwrap(), None);
        assert_eq!(http_body(unsized_body, true).unwrap().unwrap(), b"{}");
        let refused =
            b"HTTP/1.1 500 Host header is specified and is not an IP address or localhost.\r\n\r\n";
        assert!(http_body(refused, false).unwrap_err().contains("500"));
        assert!(websocket_of(b"{}")
            .unwrap_err()
            .contains("webSocketDebuggerUrl"));
    }
}
