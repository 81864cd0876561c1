//! Attacks on the person's files (issue 14, items 1 and 2), each tried for real against a
//! launched headless Chromium: a hostile page asks for local files and POSTs whatever it
//! gets to a second origin; PDFs are aimed at files outside the download folder, at taken
//! names and at planted symlinks. Nothing here touches the real user's folders: kapture's
//! data folder and XDG_DATA_HOME are temporary.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use kapture_e2e::{eventually, Kapture, Start};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use www_test_pages::Site;

/// The second origin: a loopback HTTP server that keeps the body of every request.
struct Collector {
    port: u16,
    bodies: Arc<Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Collector {
    async fn start() -> Collector {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let kept = bodies.clone();
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let kept = kept.clone();
                tokio::spawn(async move {
                    let _ =
                        tokio::time::timeout(Duration::from_secs(10), serve(stream, kept)).await;
                });
            }
        });
        Collector { port, bodies, task }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/collect", self.port)
    }

    fn bodies(&self) -> Vec<String> {
        self.bodies.lock().unwrap().clone()
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Read one request (headers, then Content-Length bytes, at most 1 MiB), keep its body.
async fn serve(mut stream: tokio::net::TcpStream, kept: Arc<Mutex<Vec<String>>>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let (head_end, length) = loop {
        let Ok(n) = stream.read(&mut chunk).await else {
            return;
        };
        if n == 0 || buf.len() > 1 << 20 {
            return;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            break (end + 4, length.min(1 << 20));
        }
    };
    while buf.len() < head_end + length {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let body = String::from_utf8_lossy(&buf[head_end.min(buf.len())..]).into_owned();
    kept.lock().unwrap().push(body);
    let _ = stream
        .write_all(b"HTTP/1.1 200 OK\r\nAccess-Control-Allow-Origin: *\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        .await;
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn show(p: &Path) -> String {
    p.display().to_string()
}

/// A start whose every default folder is inside `root`.
fn start_in(root: &Path, args: &[String]) -> Start {
    let mut opts = Start {
        data_dir: Some(root.join("data")),
        ..Start::default()
    };
    opts.args.extend(args.iter().cloned());
    opts.env
        .push(("XDG_DATA_HOME".into(), show(&root.join("xdg-data"))));
    opts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_files_leave_only_from_allowed_folders() {
    let site = Site::start().unwrap();
    let collector = Collector::start().await;
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let home = root.join("home");
    let data = root.join("data");
    let uploads = data.join("uploads");
    // The canaries: a key outside, hidden files inside, kapture's own files.
    write(&home.join(".ssh/id_ed25519"), "CANARY-ssh-private-key");
    write(&home.join("notes.txt"), "CANARY-notes-outside");
    write(&uploads.join(".hidden/x.txt"), "CANARY-hidden-folder");
    write(&uploads.join(".env"), "CANARY-dot-file");
    write(&data.join("secrets/key"), "CANARY-sealed-secrets-key");
    write(&data.join("scenarios/login.json"), "CANARY-scenario");
    write(&uploads.join("ok.txt"), "allowed upload body");
    write(&uploads.join("second.txt"), "second allowed body");
    std::os::unix::fs::symlink(home.join("notes.txt"), uploads.join("link.txt")).unwrap();
    std::os::unix::fs::symlink(home.join(".ssh"), uploads.join("keys")).unwrap();
    std::os::unix::fs::symlink(home.join("gone.txt"), uploads.join("dangling.txt")).unwrap();
    // A folder allowed in the policy file.
    write(&root.join("shared/doc.txt"), "shared folder body");
    let policy = root.join("policy.toml");
    write(
        &policy,
        &format!("upload_dirs = [{:?}]\n", show(&root.join("shared"))),
    );
    // The data folder itself is allowed: kapture's own folders in it still never leave.
    let k = Kapture::start(start_in(
        &root,
        &[
            "--upload-dir".into(),
            show(&data),
            "--policy".into(),
            show(&policy),
        ],
    ))
    .await;
    k.ok(
        "browser_navigate",
        json!({"url": format!("{}?to={}", site.url("upload-exfil.html"), collector.url())}),
    )
    .await;

    // Each attempt is paired with one whose target does not exist: the answers must match.
    let attempts: Vec<String> = vec![
        show(&home.join(".ssh/id_ed25519")),
        show(&home.join(".ssh/id_rsa")),
        show(&home.join("notes.txt")),
        show(&home.join("missing.txt")),
        "link.txt".into(),
        "dangling.txt".into(),
        "keys/id_ed25519".into(),
        "keys/id_rsa".into(),
        show(&uploads.join("keys/id_ed25519")),
        ".hidden/x.txt".into(),
        ".hidden/y.txt".into(),
        ".env".into(),
        ".env.local".into(),
        show(&data.join("secrets/key")),
        show(&data.join("secrets/other-key")),
        show(&data.join("scenarios/login.json")),
        show(&data.join("scenarios/none.json")),
        "../../home/notes.txt".into(),
        "../../home/missing.txt".into(),
        format!("{}/../../home/notes.txt", show(&uploads)),
        // Relative to kapture's working folder this would be the tests' Cargo.toml.
        "Cargo.toml".into(),
        "Missing.toml".into(),
        "/etc/shadow".into(),
        "/etc/passwd".into(),
        "/etc/no-such-file-kapture".into(),
    ];
    let mut outcomes = Vec::new();
    for (i, path) in attempts.iter().enumerate() {
        // Through the file input, and (every third) through the file chooser a click opened.
        let args = if i % 3 == 0 {
            let click = k.ok("browser_click", json!({"selector": "#choose"})).await;
            assert!(click.contains("A file chooser is open"), "{click}");
            json!({"paths": [path]})
        } else {
            json!({"selector": "#key", "paths": [path]})
        };
        outcomes.push((path, k.call("browser_file_upload", args).await));
    }

    // An allowed file does upload, by input and by chooser: the page really posts what it
    // gets, and these posts come after every attempt above.
    k.ok(
        "browser_file_upload",
        json!({"selector": "#key", "paths": [show(&uploads.join("ok.txt"))]}),
    )
    .await;
    k.ok("browser_click", json!({"selector": "#choose"})).await;
    k.ok(
        "browser_file_upload",
        json!({"paths": [show(&uploads.join("second.txt"))]}),
    )
    .await;
    k.ok(
        "browser_file_upload",
        json!({"selector": "#key", "paths": [show(&root.join("shared/doc.txt"))]}),
    )
    .await;
    eventually(
        "the three allowed uploads at the second origin",
        Duration::from_secs(20),
        || async {
            let got = collector.bodies();
            (got.iter().any(|b| b == "ok.txt=allowed upload body")
                && got.iter().any(|b| b == "second.txt=second allowed body")
                && got.iter().any(|b| b == "doc.txt=shared folder body"))
            .then_some(())
        },
    )
    .await;
    // No canary reached the second origin, the page, or an answer.
    let page = k.ok("browser_get_text", json!({})).await;
    for body in collector.bodies().iter().chain([&page]) {
        assert!(
            !body.contains("CANARY"),
            "a canary left the machine: {body}"
        );
    }
    assert_eq!(collector.bodies().len(), 3, "{:?}", collector.bodies());

    let mut texts = std::collections::BTreeSet::new();
    for (path, out) in outcomes {
        assert!(out.is_error, "{path} was uploaded: {}", out.text);
        assert_eq!(
            out.code().as_deref(),
            Some("BAD_ARGS"),
            "{path}: {}",
            out.text
        );
        assert!(!out.text.contains("CANARY"), "{}", out.text);
        texts.insert(out.text);
    }
    assert_eq!(
        texts.len(),
        1,
        "existing and missing targets are refused alike: {texts:#?}"
    );
    let text = texts.into_iter().next().unwrap();
    assert!(
        text.contains(&show(&uploads)) && text.contains("--upload-dir"),
        "the refusal names the uploads folder and how to allow another: {text}"
    );
    k.stop().await;
}

/// The first path a PDF answer names.
fn pdf_path(answer: &str) -> PathBuf {
    PathBuf::from(
        answer
            .split("PDF: ")
            .nth(1)
            .and_then(|t| t.rsplit_once(" ("))
            .map(|(p, _)| p)
            .unwrap_or_else(|| panic!("no path in {answer}")),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pdfs_and_downloads_are_created_new_inside_the_download_folder_only() {
    let site = Site::start().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    let downloads = root.join("downloads");
    let outside = root.join("outside");
    write(&outside.join("victim.txt"), "PRECIOUS victim");
    write(&outside.join("target.txt"), "PRECIOUS target");
    write(&downloads.join("keep.pdf"), "PRECIOUS keep");
    std::os::unix::fs::symlink(outside.join("target.txt"), downloads.join("trap.pdf")).unwrap();
    std::os::unix::fs::symlink(outside.join("created.txt"), downloads.join("trap (2).pdf"))
        .unwrap();
    // A symlink planted at a download's name, to a file outside. (A dangling one is not
    // tried: a launched Chromium reserves the name by creating an empty file through it.)
    std::os::unix::fs::symlink(outside.join("target.txt"), downloads.join("invoice-7.csv"))
        .unwrap();
    let k = Kapture::start(start_in(
        &root,
        &["--download-dir".into(), show(&downloads)],
    ))
    .await;
    k.ok("browser_navigate", json!({"url": site.url("article.html")}))
        .await;

    for path in [
        show(&outside.join("victim.txt")),
        show(&outside.join("new.pdf")),
        "../outside/victim.txt".into(),
        format!("{}/../outside/victim.txt", show(&downloads)),
        "sub/x.pdf".into(),
        ".bashrc".into(),
    ] {
        let out = k.call("browser_pdf_save", json!({ "path": path })).await;
        assert!(out.is_error, "{path} was written: {}", out.text);
        assert_eq!(
            out.code().as_deref(),
            Some("BAD_ARGS"),
            "{path}: {}",
            out.text
        );
        assert!(out.text.contains(&show(&downloads)), "{}", out.text);
    }
    assert_eq!(
        std::fs::read_to_string(outside.join("victim.txt")).unwrap(),
        "PRECIOUS victim"
    );
    assert!(!outside.join("new.pdf").exists());

    // A taken name gets a numbered one; the answer says which.
    let kept = k.ok("browser_pdf_save", json!({"path": "keep.pdf"})).await;
    assert_eq!(pdf_path(&kept), downloads.join("keep (2).pdf"), "{kept}");
    assert_eq!(
        std::fs::read_to_string(downloads.join("keep.pdf")).unwrap(),
        "PRECIOUS keep"
    );
    assert!(std::fs::read(downloads.join("keep (2).pdf"))
        .unwrap()
        .starts_with(b"%PDF"));

    // Planted symlinks at the name (one to a file, one dangling) are neither followed nor
    // replaced.
    let trapped = k.ok("browser_pdf_save", json!({"path": "trap.pdf"})).await;
    assert_eq!(
        pdf_path(&trapped),
        downloads.join("trap (3).pdf"),
        "{trapped}"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("target.txt")).unwrap(),
        "PRECIOUS target"
    );
    assert!(!outside.join("created.txt").exists());
    assert!(downloads
        .join("trap.pdf")
        .symlink_metadata()
        .unwrap()
        .file_type()
        .is_symlink());

    // A relative name lands in the download folder, never in kapture's working folder.
    let relative = k
        .ok(
            "browser_pdf_save",
            json!({"path": "kapture-attack-relative.pdf"}),
        )
        .await;
    assert_eq!(
        pdf_path(&relative),
        downloads.join("kapture-attack-relative.pdf"),
        "{relative}"
    );
    assert!(!std::env::current_dir()
        .unwrap()
        .join("kapture-attack-relative.pdf")
        .exists());

    // The download lands beside the planted symlink, never through it.
    for name in ["invoice-7.csv"] {
        let got = k
            .ok(
                "browser_download",
                json!({"url": site.url(&format!("attachment/{name}"))}),
            )
            .await;
        let path = got
            .lines()
            .find_map(|l| l.strip_prefix("path: "))
            .unwrap_or_else(|| panic!("no path in {got}"));
        assert!(
            Path::new(path).starts_with(&downloads) && !path.ends_with(&format!("/{name}")),
            "{got}"
        );
        assert_eq!(
            std::fs::read_to_string(path).unwrap(),
            format!("attachment body of {name}\n")
        );
    }
    assert_eq!(
        std::fs::read_to_string(outside.join("target.txt")).unwrap(),
        "PRECIOUS target"
    );
    k.stop().await;
}
