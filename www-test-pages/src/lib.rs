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
            let root = Arc::new(root);
            for request in worker.incoming_requests() {
                // Each answer on its own thread: a browser may stop reading one large
                // response until another arrives, and a single writer would then wait forever.
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

fn respond(request: tiny_http::Request, root: &Path) -> std::io::Result<()> {
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
    fn serves_on_loopback() {
        let site = Site::start().unwrap();
        assert!(site.url("form.html").starts_with("http://127.0.0.1:"));
        assert_ne!(site.port(), 0);
    }
}
