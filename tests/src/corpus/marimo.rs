//! marimo (PyPI `marimo`), a reactive Python notebook whose editor is a React app: `marimo
//! edit` on a seeded notebook file, headless and token-less on 127.0.0.1, with its home,
//! config and caches in a throwaway folder (under the corpus folder's `marimo/`, not `/tmp`). The
//! truth is on disk: the notebook's `.py` file (what a save writes) and the session file
//! marimo keeps beside it (`__marimo__/session/<name>.json`, every cell's last output,
//! written every 2 s).

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use super::{free_port, python_of, Served};

/// The seeded notebook's file name.
pub const NOTEBOOK: &str = "budget.py";

/// Two cells: a list of prices and their total, which depends on it.
const SEEDED: &str = r#"import marimo

__generated_with = "0.25.2"
app = marimo.App()


@app.cell
def _():
    prices = [3, 4, 5]
    return (prices,)


@app.cell
def _(prices):
    total = sum(prices)
    total
    return (total,)


if __name__ == "__main__":
    app.run()
"#;

/// A marimo editor server, stopped when dropped.
pub struct Marimo {
    served: Served,
}

impl Marimo {
    pub fn start() -> Marimo {
        let python = python_of("marimo");
        // Not under /tmp: marimo takes a notebook there for a scratch one and answers a
        // save with "Save as…" (its frontend's `/tmp/` test), as it would for a person.
        let parent = super::corpus_dir().join("marimo");
        let dir = tempfile::Builder::new()
            .prefix("run-")
            .tempdir_in(&parent)
            .expect("marimo folder");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).expect("home folder");
        std::fs::write(dir.path().join(NOTEBOOK), SEEDED).expect("seed the notebook");
        let port = free_port();
        let mut cmd = Command::new(python);
        cmd.args([
            "-m",
            "marimo",
            "-y",
            "edit",
            NOTEBOOK,
            "--headless",
            "--no-token",
        ])
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["--skip-update-check", "--no-sandbox"])
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("XDG_STATE_HOME", home.join(".state"))
        .env("XDG_DATA_HOME", home.join(".local/share"));
        let served = Served::start(cmd, port, dir, "/", Duration::from_secs(60));
        Marimo { served }
    }

    /// The editor's address.
    pub fn url(&self) -> String {
        self.served.url("/")
    }

    fn path(&self) -> PathBuf {
        self.served.dir.path().join(NOTEBOOK)
    }

    /// The notebook file as saved now.
    pub fn source(&self) -> String {
        std::fs::read_to_string(self.path()).unwrap_or_default()
    }

    /// The cells' code in the file, in order: each `@app.cell` function's body, dedented,
    /// without its `return` line.
    pub fn cells(&self) -> Vec<String> {
        cells_of(&self.source())
    }

    /// The text of every cell's last output, as marimo's session file holds it (empty
    /// before marimo first writes it).
    pub fn outputs(&self) -> Vec<String> {
        let file = self
            .served
            .dir
            .path()
            .join("__marimo__")
            .join("session")
            .join(format!("{NOTEBOOK}.json"));
        let Ok(text) = std::fs::read_to_string(file) else {
            return Vec::new();
        };
        let Ok(v) = serde_json::from_str::<Value>(&text) else {
            return Vec::new();
        };
        v["cells"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                c["outputs"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|o| {
                        let data = &o["data"];
                        match data["text/plain"].as_str() {
                            Some(plain) => plain.to_string(),
                            None => text_of_html(data["text/html"].as_str().unwrap_or_default()),
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .collect()
    }

    pub fn log_tail(&self) -> String {
        self.served.log_tail()
    }
}

/// The text of an output's HTML (marimo shows a value as `<pre class='…'>22</pre>`): the
/// tags dropped, the common entities decoded.
pub fn text_of_html(html: &str) -> String {
    let mut text = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => text.push(c),
            _ => {}
        }
    }
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&amp;", "&")
}

/// The cells of a marimo notebook file (see [`Marimo::cells`]).
pub fn cells_of(source: &str) -> Vec<String> {
    let mut cells = Vec::new();
    let mut lines = source.lines().peekable();
    while let Some(line) = lines.next() {
        if !line.starts_with("@app.cell") {
            continue;
        }
        // The `def _(…):` line, then the indented body.
        if lines.next().is_none() {
            break;
        }
        let mut body = Vec::new();
        while let Some(next) = lines.peek() {
            if !next.is_empty() && !next.starts_with(' ') {
                break;
            }
            body.push(next.strip_prefix("    ").unwrap_or(next).to_string());
            lines.next();
        }
        while body.last().is_some_and(|l| l.trim().is_empty()) {
            body.pop();
        }
        if body.last().is_some_and(|l| l.starts_with("return")) {
            body.pop();
        }
        cells.push(body.join("\n").trim_end().to_string());
    }
    cells
}

#[cfg(test)]
mod tests {
    #[test]
    fn outputs_are_read_from_their_html() {
        assert_eq!(super::text_of_html("<pre class='text-xs'>22</pre>"), "22");
        assert_eq!(super::text_of_html("<span>a &lt; b</span>"), "a < b");
    }

    #[test]
    fn cells_are_read_from_the_file() {
        assert_eq!(
            super::cells_of(super::SEEDED),
            vec!["prices = [3, 4, 5]", "total = sum(prices)\ntotal"]
        );
    }
}
