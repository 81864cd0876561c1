//! The Test Web App's files, served from the built extension folder: `/app` is `app.html`,
//! `/app/<path>` a file under the folder with an allowed extension; nothing else leaves it.
//! Which file a path names is decided here (pure), reading it is the caller's.

use std::path::{Path, PathBuf};

/// What a path under `/app` is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AppFile {
    /// Relative to the extension folder, made only of plain parts.
    pub relative: PathBuf,
    pub content_type: &'static str,
}

/// The file types the app is made of.
fn content_type(ext: &str) -> Option<&'static str> {
    Some(match ext {
        "html" => "text/html; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "wasm" => "application/wasm",
        "png" => "image/png",
        "svg" => "image/svg+xml",
        _ => return None,
    })
}

/// The file for the request path `path` (starting with `/app`), or `None`: not an app
/// path, a part that is empty, hidden, `.`/`..`, holds a backslash, a NUL or a colon, or a
/// type not allowed. Percent escapes are refused, not decoded: the app's names need none.
pub fn resolve(path: &str) -> Option<AppFile> {
    let rest = path.strip_prefix("/app")?;
    let rest = match rest {
        "" | "/" => "app.html",
        r => r.strip_prefix('/')?,
    };
    let mut relative = PathBuf::new();
    for part in rest.split('/') {
        let plain =
            !part.is_empty() && !part.starts_with('.') && !part.contains(['\\', '\0', ':', '%']);
        if !plain {
            return None;
        }
        relative.push(part);
    }
    let ext = relative.extension()?.to_str()?.to_ascii_lowercase();
    Some(AppFile {
        content_type: content_type(&ext)?,
        relative,
    })
}

/// Read `file` under `dir`, refusing one that resolves (through symlinks) outside it.
pub fn read(dir: &Path, file: &AppFile) -> Option<Vec<u8>> {
    let root = dir.canonicalize().ok()?;
    let full = root.join(&file.relative).canonicalize().ok()?;
    if !full.starts_with(&root) || !full.is_file() {
        return None;
    }
    std::fs::read(full).ok()
}

/// The headers every app response carries: no sniffing, no framing, no referrer (the
/// token is in the first URL), and a policy that lets the page run only its own scripts
/// and WASM and talk only to this server.
pub const SECURITY_HEADERS: &[(&str, &str)] = &[
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "no-referrer"),
    ("x-frame-options", "DENY"),
    ("cache-control", "no-store"),
    (
        "content-security-policy",
        "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    ),
];

/// The page shown when the app is not in the extension folder.
pub fn not_built_page(dir: Option<&Path>) -> String {
    let where_ = dir
        .map(|d| format!("in {}", d.display()))
        .unwrap_or_else(|| "(no built extension folder was found)".into());
    format!(
        "<!doctype html><meta charset=utf-8><title>Kapture: app not built</title>\
         <h1>The Test Web App is not built</h1>\
         <p>kapture serves it from the built extension folder, and app.html is not there {}.\
         Run <code>cargo make build</code>, or start kapture with <code>--extension-dir</code> \
         naming a built extension.</p>",
        html_text(&where_)
    )
}

fn html_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn app_paths_map_to_plain_files_of_allowed_types() {
        let f = resolve("/app").unwrap();
        assert_eq!(f.relative, PathBuf::from("app.html"));
        assert_eq!(f.content_type, "text/html; charset=utf-8");
        assert_eq!(
            resolve("/app/").unwrap().relative,
            PathBuf::from("app.html")
        );
        let f = resolve("/app/pkg/ext_core_bg.wasm").unwrap();
        assert_eq!(f.relative, PathBuf::from("pkg/ext_core_bg.wasm"));
        assert_eq!(f.content_type, "application/wasm");
        assert_eq!(
            resolve("/app/app.js").unwrap().content_type,
            "text/javascript; charset=utf-8"
        );
        assert_eq!(
            resolve("/app/icons/k.SVG").unwrap().content_type,
            "image/svg+xml"
        );
        for refused in [
            "/",
            "/apps",
            "/application.js",
            "/app/../secret.js",
            "/app/pkg/../../x.js",
            "/app/./app.js",
            "/app//app.js",
            "/app/.hidden.js",
            "/app/manifest.json",
            "/app/tools.json",
            "/app/key",
            "/app/a%2e%2e/x.js",
            "/app/C:/x.js",
            "/app/a\\..\\x.js",
            "/app/x.js/",
        ] {
            assert_eq!(resolve(refused), None, "{refused}");
        }
    }

    #[test]
    fn files_are_read_only_inside_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("app.html"), "<p>hi").unwrap();
        std::fs::write(outside.path().join("secret.js"), "s").unwrap();
        assert_eq!(
            read(dir.path(), &resolve("/app").unwrap()).unwrap(),
            b"<p>hi"
        );
        assert_eq!(read(dir.path(), &resolve("/app/nope.js").unwrap()), None);
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(outside.path().join("secret.js"), dir.path().join("l.js"))
                .unwrap();
            assert_eq!(read(dir.path(), &resolve("/app/l.js").unwrap()), None);
        }
    }
}
