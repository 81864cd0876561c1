//! A tiny static server for the pages in `pages/` (or any folder, for the real-app corpus),
//! bound to 127.0.0.1 on a free port, for tests and benches. It stops when the [`Site`] is
//! dropped.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;

/// The folder of the pages.
pub fn pages_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("pages")
}

/// A running page server.
pub struct Site {
    server: Arc<tiny_http::Server>,
    port: u16,
    thread: Option<JoinHandle<()>>,
}

impl Site {
    /// Serve `pages/` on 127.0.0.1 with a port the OS picks.
    pub fn start() -> std::io::Result<Site> {
        Site::serve_folder(pages_dir())
    }

    /// Serve the files of `root` (nothing above it) on 127.0.0.1 with a port the OS picks.
    pub fn serve_folder(root: PathBuf) -> std::io::Result<Site> {
        let server = tiny_http::Server::http("127.0.0.1:0").map_err(std::io::Error::other)?;
        let port = server
            .server_addr()
            .to_ip()
            .map(|a| a.port())
            .ok_or_else(|| std::io::Error::other("no ip address"))?;
        let server = Arc::new(server);
        let worker = server.clone();
        let thread = std::thread::spawn(move || {
            for request in worker.incoming_requests() {
                // One thread a request: a delayed answer (`?delay=`) holds up no other.
                let root = root.clone();
                std::thread::spawn(move || {
                    let _ = respond(request, &root);
                });
            }
        });
        Ok(Site {
            server,
            port,
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
        self.server.unblock();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
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

fn header(name: &str, value: &str) -> std::io::Result<tiny_http::Header> {
    tiny_http::Header::from_bytes(name, value).map_err(|_| std::io::Error::other("header"))
}

/// Longest `?delay=` honoured, in milliseconds.
const MAX_DELAY_MS: u64 = 10_000;

/// The pairs of a query string or form body, decoded.
fn form_pairs(s: &str) -> Vec<(String, String)> {
    url::form_urlencoded::parse(s.as_bytes())
        .into_owned()
        .collect()
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
fn delay_of(pairs: &[(String, String)]) -> Option<std::time::Duration> {
    pairs
        .iter()
        .find(|(k, _)| k == "delay")
        .and_then(|(_, v)| v.parse::<u64>().ok())
        .map(|ms| std::time::Duration::from_millis(ms.min(MAX_DELAY_MS)))
}

fn respond(mut request: tiny_http::Request, root: &Path) -> std::io::Result<()> {
    let (path, query) = match request.url().split_once('?') {
        Some((p, q)) => (p.to_string(), q.to_string()),
        None => (request.url().to_string(), String::new()),
    };
    let mut pairs = form_pairs(&query);
    // `POST /submit`: the form's fields, answered (after `delay` ms) with a 303 to the
    // result page, the way a server-rendered app answers a saved form.
    if path == "/submit" && *request.method() == tiny_http::Method::Post {
        let mut body = String::new();
        std::io::Read::read_to_string(&mut request.as_reader(), &mut body)?;
        pairs.extend(form_pairs(&body));
        if let Some(d) = delay_of(&pairs) {
            std::thread::sleep(d);
        }
        let kept: Vec<String> = body
            .split('&')
            .filter(|p| !p.is_empty() && !p.starts_with("delay="))
            .map(str::to_string)
            .collect();
        let location = format!("/result?from=post&{}", kept.join("&"));
        let response = tiny_http::Response::from_string("see other")
            .with_status_code(303)
            .with_header(header("Location", &location)?);
        return request.respond(response);
    }
    // Anything else may be answered late: `?delay=<ms>` (capped).
    if let Some(d) = delay_of(&pairs) {
        std::thread::sleep(d);
    }
    // `/nocontent`: a 204, which a browser answers by staying on the page.
    if path == "/nocontent" {
        return request.respond(tiny_http::Response::empty(204));
    }
    if path == "/result" {
        let response = tiny_http::Response::from_string(result_page(&pairs))
            .with_header(header("Content-Type", "text/html; charset=utf-8")?);
        return request.respond(response);
    }
    // `/attachment/<name>`: a generated file served as a download (Content-Disposition).
    if let Some(name) = request.url().strip_prefix("/attachment/") {
        let name: String = name
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || ".-_".contains(*c))
            .collect();
        let body = format!("attachment body of {name}\n");
        let response = tiny_http::Response::from_string(body)
            .with_header(header("Content-Type", "application/octet-stream")?)
            .with_header(header(
                "Content-Disposition",
                &format!("attachment; filename=\"{name}\""),
            )?);
        return request.respond(response);
    }
    // `/redirect?to=<url>`: a 302 to another address (policy tests follow it).
    if let Some(to) = request.url().strip_prefix("/redirect?to=") {
        let to = to.to_string();
        let response = tiny_http::Response::from_string("moved")
            .with_status_code(302)
            .with_header(header("Location", &to)?);
        return request.respond(response);
    }
    match resolve(request.url(), root) {
        Some(path) => {
            let body = std::fs::read(&path)?;
            let content_type = header("Content-Type", content_type(&path))?;
            request.respond(tiny_http::Response::from_data(body).with_header(content_type))
        }
        None => {
            request.respond(tiny_http::Response::from_string("not found").with_status_code(404))
        }
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

    #[test]
    fn form_bodies_decode_and_results_escape() {
        let pairs = form_pairs("name=Ada+L%C3%B6we&q=%3Cb%3E&bad=%zz&delay=300");
        assert_eq!(pairs[0], ("name".into(), "Ada Löwe".into()));
        assert_eq!(pairs[1].1, "<b>");
        assert_eq!(pairs[2].1, "%zz");
        assert_eq!(
            delay_of(&pairs),
            Some(std::time::Duration::from_millis(300))
        );
        let page = result_page(&pairs);
        assert!(page.contains("<title>Result Ada Löwe</title>"), "{page}");
        assert!(page.contains("&lt;b&gt;") && !page.contains("<b>"));
        assert!(!page.contains("delay"), "the delay is not content");
    }

    #[test]
    fn serves_on_loopback() {
        let site = Site::start().unwrap();
        assert!(site.url("form.html").starts_with("http://127.0.0.1:"));
        assert_ne!(site.port(), 0);
    }
}
