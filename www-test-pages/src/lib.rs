//! A tiny static server for the pages in `pages/` (or any folder, for the real-app corpus),
//! bound to 127.0.0.1 on a free port, for tests and benches. It stops when the [`Site`] is
//! dropped.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The folder of the pages.
pub fn pages_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("pages")
}

/// A running page server: one thread accepts, each connection is answered on a thread of
/// its own and closed after one response. (A pooled server left a browser's sixth parallel
/// connection queued behind idle keep-alive ones, and pages with many scripts never
/// finished loading.)
pub struct Site {
    port: u16,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Site {
    /// Serve `pages/` on 127.0.0.1 with a port the OS picks.
    pub fn start() -> std::io::Result<Site> {
        Site::serve_folder(pages_dir())
    }

    /// Serve the files of `root` (nothing above it) on 127.0.0.1 with a port the OS picks.
    pub fn serve_folder(root: PathBuf) -> std::io::Result<Site> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = stop.clone();
        let root = Arc::new(root);
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let root = root.clone();
                std::thread::spawn(move || {
                    let _ = serve(stream, &root);
                });
            }
        });
        Ok(Site {
            port,
            stop,
            thread: Some(thread),
        })
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Absolute URL of a page, e.g. `url("form.html")`.
    pub fn url(&self, path: &str) -> String {
        format!(
            "http://127.0.0.1:{}/{}",
            self.port,
            path.trim_start_matches('/')
        )
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accepting thread so that it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Longest request head read, and longest body read (and dropped).
const HEAD_MAX: usize = 64 * 1024;
const BODY_MAX: u64 = 16 * 1024 * 1024;

/// One request on `stream`, one response, then the connection closes.
fn serve(stream: TcpStream, root: &Path) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    stream.set_write_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut head = Vec::new();
    let mut content_length = 0u64;
    let mut cookie = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || head.len() + line.len() > HEAD_MAX {
            return Ok(());
        }
        if line == "\r\n" || line == "\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                content_length = value.trim().parse().unwrap_or(0);
            }
            if name.trim().eq_ignore_ascii_case("cookie") {
                cookie = value.trim().to_string();
            }
        }
        head.push(line);
    }
    // The body is read whole (a form's fields), so that closing does not reset the
    // connection.
    let mut form = Vec::new();
    reader
        .by_ref()
        .take(content_length.min(BODY_MAX))
        .read_to_end(&mut form)?;
    let mut words = head
        .first()
        .map(|l| l.split_whitespace())
        .into_iter()
        .flatten();
    let method = words.next().unwrap_or("GET").to_string();
    let target = words.next().unwrap_or("/").to_string();
    let (status, headers, body) = respond(&method, &target, &form, &cookie, root);
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    let mut stream = stream;
    stream.write_all(out.as_bytes())?;
    stream.write_all(&body)?;
    stream.flush()?;
    stream.shutdown(std::net::Shutdown::Write)
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript",
        Some("css") => "text/css",
        Some("png") => "image/png",
        Some("json") => "application/json",
        Some("txt" | "md") => "text/plain; charset=utf-8",
        Some("svg") => "image/svg+xml",
        Some("gif") => "image/gif",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("ico") => "image/x-icon",
        Some("woff") => "font/woff",
        Some("woff2") => "font/woff2",
        _ => "application/octet-stream",
    }
}

/// Map a request path to a file under `root`, refusing anything that climbs out.
fn resolve(url: &str, root: &Path) -> Option<PathBuf> {
    let path = url.split(['?', '#']).next().unwrap_or("/");
    let rel = Path::new(path.trim_start_matches('/'));
    if rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return None;
    }
    let full = root.join(if rel.as_os_str().is_empty() {
        Path::new("index.html")
    } else {
        rel
    });
    // A folder answers with its index.html, as any static server does.
    let full = if full.is_dir() {
        full.join("index.html")
    } else {
        full
    };
    full.is_file().then_some(full)
}

/// Longest `?delay=` honoured, in milliseconds.
const MAX_DELAY_MS: u64 = 10_000;

/// The pairs of a query string or form body, decoded.
fn form_pairs(s: &[u8]) -> Vec<(String, String)> {
    url::form_urlencoded::parse(s).into_owned().collect()
}

/// Text safe inside HTML content and attribute values.
fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// `/result?…`: a page made from its query, so its title and content are unique to what
/// was submitted (`name` from the POST form, `q` from the GET form, `via` for links).
fn result_page(pairs: &[(String, String)]) -> String {
    let get = |k: &str| {
        pairs
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
            .unwrap_or("")
    };
    let subject = [get("name"), get("q"), get("via")]
        .into_iter()
        .find(|v| !v.is_empty())
        .unwrap_or("nothing");
    let items: String = pairs
        .iter()
        .filter(|(k, _)| k != "delay")
        .map(|(k, v)| format!("<li>{}: {}</li>", html_escape(k), html_escape(v)))
        .collect();
    format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Result {s}</title></head>\n\
         <body><h1>Result for {s}</h1><ul id=\"fields\">{items}</ul>\n\
         <a id=\"back\" href=\"/nav-form.html\">Back to the form</a></body></html>\n",
        s = html_escape(subject)
    )
}

/// The `delay` of a request (query or form body), capped.
fn delay_of(pairs: &[(String, String)]) -> Option<Duration> {
    pairs
        .iter()
        .find(|(k, _)| k == "delay")
        .and_then(|(_, v)| v.parse::<u64>().ok())
        .map(|ms| Duration::from_millis(ms.min(MAX_DELAY_MS)))
}

/// What a response is: status line, headers, body.
type Response = (&'static str, Vec<(&'static str, String)>, Vec<u8>);

/// `/account`: who the `sid` cookie signs in (set by `/signin?user=…`), and what the page's
/// localStorage keeps (`theme`), written by the page's script.
fn account_page(cookie: &str) -> String {
    let user = cookie
        .split(';')
        .filter_map(|c| c.trim().strip_prefix("sid=session-of-"))
        .next();
    let who = match user {
        Some(u) => format!("Signed in as {}", html_escape(u)),
        None => "Signed out".into(),
    };
    format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Account</title></head>\n\
         <body><h1 id=\"who\">{who}</h1><p id=\"theme\"></p>\n\
         <script>document.getElementById('theme').textContent = 'Theme: ' + \
         (localStorage.getItem('theme') || 'none');</script></body></html>\n"
    )
}

/// The response to `method url` with the request's body `form` and `Cookie` header
/// `cookie`. Any request may be answered late (`?delay=<ms>`, capped, also as a form
/// field).
fn respond(method: &str, url: &str, form: &[u8], cookie: &str, root: &Path) -> Response {
    let (path, query) = url.split_once('?').unwrap_or((url, ""));
    let mut pairs = form_pairs(query.as_bytes());
    if method == "POST" {
        pairs.extend(form_pairs(form));
    }
    if let Some(d) = delay_of(&pairs) {
        std::thread::sleep(d);
    }
    // `POST /submit`: the form's fields, answered with a 303 to the result page, the way a
    // server-rendered app answers a saved form.
    if path == "/submit" && method == "POST" {
        let kept: Vec<&str> = std::str::from_utf8(form)
            .unwrap_or("")
            .split('&')
            .filter(|p| !p.is_empty() && !p.starts_with("delay="))
            .collect();
        let location = format!("/result?from=post&{}", kept.join("&"));
        return (
            "303 See Other",
            vec![("Location", location)],
            b"see other".to_vec(),
        );
    }
    // `/signin?user=<name>`: a server's sign-in, an HttpOnly session cookie and a 303 to
    // `/account`, which shows who it signs in.
    if path == "/signin" {
        let user: String = pairs
            .iter()
            .find(|(k, _)| k == "user")
            .map(|(_, v)| v.chars().filter(char::is_ascii_alphanumeric).collect())
            .unwrap_or_default();
        return (
            "303 See Other",
            vec![
                ("Location", "/account".into()),
                (
                    "Set-Cookie",
                    format!("sid=session-of-{user}; HttpOnly; Path=/; SameSite=Lax"),
                ),
            ],
            b"signed in".to_vec(),
        );
    }
    if path == "/account" {
        return (
            "200 OK",
            vec![("Content-Type", "text/html; charset=utf-8".into())],
            account_page(cookie).into_bytes(),
        );
    }
    // `/nocontent`: a 204, which a browser answers by staying on the page.
    if path == "/nocontent" {
        return ("204 No Content", Vec::new(), Vec::new());
    }
    if path == "/result" {
        return (
            "200 OK",
            vec![("Content-Type", "text/html; charset=utf-8".into())],
            result_page(&pairs).into_bytes(),
        );
    }
    // `/attachment/<name>`: a generated file served as a download (Content-Disposition).
    if let Some(name) = url.strip_prefix("/attachment/") {
        let name: String = name
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || ".-_".contains(*c))
            .collect();
        let body = format!("attachment body of {name}\n");
        return (
            "200 OK",
            vec![
                ("Content-Type", "application/octet-stream".into()),
                (
                    "Content-Disposition",
                    format!("attachment; filename=\"{name}\""),
                ),
            ],
            body.into_bytes(),
        );
    }
    // `/redirect?to=<url>`: a 302 to another address (policy tests follow it).
    if let Some(to) = url.strip_prefix("/redirect?to=") {
        // A header value never carries a line break.
        let to: String = to.chars().filter(|c| !c.is_control()).collect();
        return ("302 Found", vec![("Location", to)], b"moved".to_vec());
    }
    match resolve(url, root).and_then(|path| Some((std::fs::read(&path).ok()?, path))) {
        Some((body, path)) => (
            "200 OK",
            vec![("Content-Type", content_type(&path).into())],
            body,
        ),
        None => ("404 Not Found", Vec::new(), b"not found".to_vec()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_inside_the_pages_folder() {
        let root = pages_dir();
        assert!(resolve("/form.html", &root).is_some());
        assert!(resolve("/form.html?x=1", &root).is_some());
        assert!(resolve("/", &root).is_some());
        assert!(resolve("/../Cargo.toml", &root).is_none());
        assert!(resolve("/nope.html", &root).is_none());
    }

    /// One raw request; answers the status line and the body.
    fn get(site: &Site, request: &str) -> (String, String) {
        let mut stream = TcpStream::connect(("127.0.0.1", site.port())).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        (head.lines().next().unwrap().to_string(), body.to_string())
    }

    #[test]
    fn answers_files_redirects_and_misses_then_closes() {
        let site = Site::start().unwrap();
        let (status, body) = get(&site, "GET /form.html HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(status, "HTTP/1.1 200 OK");
        assert!(body.contains("<form"));
        let (status, _) = get(&site, "GET /nope.html HTTP/1.1\r\n\r\n");
        assert_eq!(status, "HTTP/1.1 404 Not Found");
        let (status, _) = get(
            &site,
            "POST /redirect?to=/form.html HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
        );
        assert_eq!(status, "HTTP/1.1 302 Found");
    }

    #[test]
    fn serves_on_loopback() {
        let site = Site::start().unwrap();
        assert!(site.url("form.html").starts_with("http://127.0.0.1:"));
        assert_ne!(site.port(), 0);
    }
}
