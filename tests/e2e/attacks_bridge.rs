//! Attacks on the bridge from the other side: a program listening on a port that the
//! runtime folder announces (as if it took a dead kapture's port) tries to learn the token
//! and to run commands; a kapture that did not launch the browser tries to loosen that
//! browser's rules; runtime folders and handshake files others can touch are refused.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use kapture_e2e::panel::Panel;
use kapture_e2e::{eventually, handshakes_in, kapture_bin, tab_of, Kapture, Start};
use serde_json::{json, Value};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;
use www_test_pages::Site;

/// A folder only this user may use, as kapture requires of its runtime folder.
fn private_dir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt;
    tempfile::Builder::new()
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()
        .unwrap()
}

/// Write a handshake file announcing `port` with `token`, with the given mode.
fn announce(path: &Path, v: u64, port: u16, token: &str, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    let hs = json!({"v": v, "pid": std::process::id(), "port": port, "token": token, "started": 1});
    std::fs::write(path, hs.to_string()).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// What a rogue WebSocket server saw.
#[derive(Default)]
struct Seen {
    connections: usize,
    closed: usize,
    frames: Vec<String>,
}

/// A WebSocket server that accepts anyone and, on every connection, fires commands before
/// the `hello`, after it (and waits a moment for them to run), then a made-up challenge, a
/// welcome with an allow-all policy and more commands: what an attacker without the token
/// can try.
async fn rogue(v: u64, canary: String) -> (u16, Arc<Mutex<Seen>>) {
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let log = seen.clone();
    tokio::spawn(async move {
        // Bounded: a handful of connections is all a test makes.
        for _ in 0..20 {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let (log, canary) = (log.clone(), canary.clone());
            tokio::spawn(async move {
                let Ok(mut ws) = tokio_tungstenite::accept_async(tcp).await else {
                    return;
                };
                log.lock().unwrap().connections += 1;
                let command = |id: u64, method: &str, params: Value| {
                    Message::text(json!({"v": v, "type": "command", "id": id, "method": method, "params": params, "timeout_ms": 10000}).to_string())
                };
                let pwn = json!({"function": "document.title = 'pwned'"});
                // Before anything: commands a connected default would allow (tabs, navigate).
                let _ = ws
                    .send(command(
                        1,
                        "tabs.new",
                        json!({"url": format!("{canary}?before-hello")}),
                    ))
                    .await;
                let _ = ws
                    .send(command(
                        2,
                        "navigate",
                        json!({"url": format!("{canary}?before-hello")}),
                    ))
                    .await;
                let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
                while let Ok(Some(Ok(msg))) = tokio::time::timeout_at(deadline, ws.next()).await {
                    let Message::Text(text) = msg else { continue };
                    let hello = text.contains("\"hello\"");
                    log.lock().unwrap().frames.push(text.to_string());
                    if !hello {
                        continue;
                    }
                    // Commands before any challenge, given time to run (a slow rogue): a
                    // worker that ran them would answer here and the canary would change.
                    for frame in [
                        command(
                            3,
                            "navigate",
                            json!({"url": format!("{canary}?after-hello")}),
                        ),
                        command(
                            7,
                            "tabs.new",
                            json!({"url": format!("{canary}?after-hello")}),
                        ),
                        command(8, "evaluate", pwn.clone()),
                        Message::text(json!({"v": v, "type": "ping"}).to_string()),
                    ] {
                        let _ = ws.send(frame).await;
                    }
                    tokio::time::sleep(Duration::from_millis(1500)).await;
                    let burst = [
                        Message::text(json!({"v": v, "type": "challenge", "nonce": "ab".repeat(32), "proof": "cd".repeat(32)}).to_string()),
                        // After its (failed) proof: a welcome granting everything, then commands.
                        command(4, "tabs.new", json!({"url": format!("{canary}?after-proof")})),
                        Message::text(json!({"v": v, "type": "welcome", "session": "rogue", "heartbeat_ms": 20000, "approval_timeout_ms": 1000,
                            "policy": {"rules": [{"origin": {"scheme": null, "host": "*", "port": null}, "category": null, "verdict": "allow", "source": "rogue"}]}}).to_string()),
                        command(5, "evaluate", pwn.clone()),
                        command(6, "navigate", json!({"url": format!("{canary}?after-welcome")})),
                    ];
                    for frame in burst {
                        let _ = ws.send(frame).await;
                    }
                }
                log.lock().unwrap().closed += 1;
            });
        }
    });
    (port, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rogue_on_an_announced_port_learns_no_token_and_runs_nothing() {
    let site = Site::start().unwrap();
    let runtime = private_dir();
    let k = Kapture::start(Start {
        runtime_dir: Some(runtime.path().to_path_buf()),
        ..Start::default()
    })
    .await;
    k.ok("browser_navigate", json!({"url": site.url("page-a.html")}))
        .await;
    let real = handshakes_in(runtime.path())[0].clone();
    let (v, token) = (
        real["v"].as_u64().unwrap(),
        real["token"].as_str().unwrap().to_string(),
    );
    let canary = site.url("page-b.html");

    // Two files discovery must not even read: readable by others, and a symlink.
    let (loose_port, loose_seen) = rogue(v, canary.clone()).await;
    announce(
        &runtime.path().join(format!("server-1-{loose_port}.json")),
        v,
        loose_port,
        &token,
        0o644,
    );
    let (linked_port, linked_seen) = rogue(v, canary.clone()).await;
    let elsewhere = private_dir();
    let target = elsewhere.path().join("hs.json");
    announce(&target, v, linked_port, &token, 0o600);
    std::os::unix::fs::symlink(
        &target,
        runtime.path().join(format!("server-2-{linked_port}.json")),
    )
    .unwrap();
    // The attack proper: a well-formed private file for the rogue's port, a wrong token.
    let (port, seen) = rogue(v, canary.clone()).await;
    announce(
        &runtime.path().join(format!("server-3-{port}.json")),
        v,
        port,
        &"0f".repeat(32),
        0o600,
    );

    eventually(
        "the extension to dial the rogue and hang up on it",
        Duration::from_secs(40),
        || {
            let seen = seen.clone();
            async move {
                let s = seen.lock().unwrap();
                (s.connections > 0 && s.closed == s.connections).then_some(())
            }
        },
    )
    .await;
    let frames = seen.lock().unwrap().frames.clone();
    assert!(!frames.is_empty(), "the rogue heard a hello");
    for f in &frames {
        assert!(!f.contains(&token), "the real token reached the rogue: {f}");
        assert!(
            !f.contains(&"0f".repeat(32)),
            "the announced token was sent: {f}"
        );
        let frame: Value = serde_json::from_str(f).unwrap();
        assert_eq!(
            frame["type"], "hello",
            "only a hello, never a proof or an answer: {f}"
        );
        assert!(frame.get("token").is_none(), "{f}");
    }
    // Files others can read, or reached through a symlink, were never dialed.
    assert_eq!(
        loose_seen.lock().unwrap().connections,
        0,
        "a 0644 file was used"
    );
    assert_eq!(
        linked_seen.lock().unwrap().connections,
        0,
        "a symlinked file was used"
    );
    // None of the rogue's commands ran: the page and the tabs are as they were.
    assert_eq!(k.eval("document.title").await, "Page A");
    let tabs = k.ok("browser_tabs", json!({"action": "list"})).await;
    assert!(
        !tabs.contains("page-b") && !tabs.contains("Page B"),
        "{tabs}"
    );
    // The real kapture works on, and the rogue is not dialed again.
    let before = seen.lock().unwrap().connections;
    assert_eq!(k.eval("1 + 2").await, 3);
    k.ok("browser_navigate", json!({"url": site.url("form.html")}))
        .await;
    assert_eq!(seen.lock().unwrap().connections, before);
    k.stop().await;
}

/// The handshake file of the kapture with this pid, in `dir`.
fn port_of(dir: &Path, pid: u32) -> u64 {
    handshakes_in(dir)
        .into_iter()
        .find(|h| h["pid"].as_u64() == Some(u64::from(pid)))
        .and_then(|h| h["port"].as_u64())
        .expect("its handshake file")
}

/// A kapture in connect mode with `flags`, on `runtime`.
async fn connecting(runtime: &Path, flags: &[&str]) -> Kapture {
    let mut args: Vec<String> = ["--browser", "connect", "--browser-wait-ms", "40000"]
        .into_iter()
        .map(String::from)
        .collect();
    args.extend(flags.iter().map(|f| f.to_string()));
    Kapture::start(Start {
        args,
        runtime_dir: Some(runtime.to_path_buf()),
        ..Start::default()
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kapture_that_did_not_launch_the_browser_cannot_loosen_its_rules_unless_a_person_accepts()
{
    let site = Site::start().unwrap();
    let runtime = private_dir();
    let mut start = Start::debuggable();
    start.runtime_dir = Some(runtime.path().to_path_buf());
    let launcher = Kapture::start(start).await;
    let tab = tab_of(
        &launcher
            .ok("browser_navigate", json!({"url": site.url("page-a.html")}))
            .await,
    );
    let eval = json!({"function": "document.title", "tabId": tab});

    // Allow-all from a kapture that did not launch this browser: the browser's defaults
    // still hold (eval denied, reads allowed).
    let loose = connecting(runtime.path(), &["--unsafe-allow-all"]).await;
    loose.ok("browser_tabs", json!({"action": "list"})).await;
    let out = loose.call("browser_evaluate", eval.clone()).await;
    assert_eq!(out.code().as_deref(), Some("POLICY_DENIED"), "{}", out.text);
    assert!(out.text.contains("Kapture panel"), "{}", out.text);
    assert!(loose
        .ok("browser_snapshot", json!({"tabId": tab}))
        .await
        .contains("Page A"));
    // The kapture that launched the browser keeps its own rules.
    assert_eq!(launcher.eval("document.title").await, "Page A");

    // The person sees what is asked, keeps the defaults first, then accepts.
    let port = port_of(runtime.path(), loose.pid);
    let mut panel = Panel::open(&launcher, tab).await;
    let block = format!("document.querySelector('.looser[data-port=\"{port}\"]')");
    let asked = panel
        .until(
            "the question about looser rules",
            &format!("{block}?.dataset.agreed === 'asked' && {block}.textContent"),
        )
        .await;
    let asked = asked.as_str().unwrap().to_string();
    assert!(
        asked.contains("eval on *: allow (this browser: deny)"),
        "{asked}"
    );
    panel.shot("bridge-1-looser-rules-asked").await;
    panel
        .click(&format!(
            "button[data-agree=\"keep\"][data-port=\"{port}\"]"
        ))
        .await;
    panel
        .until(
            "the defaults kept",
            &format!("{block}?.dataset.agreed === 'declined'"),
        )
        .await;
    let out = loose.call("browser_evaluate", eval.clone()).await;
    assert_eq!(out.code().as_deref(), Some("POLICY_DENIED"), "{}", out.text);
    panel
        .click(&format!(
            "button[data-agree=\"accept\"][data-port=\"{port}\"]"
        ))
        .await;
    panel
        .until(
            "the looser rules accepted",
            &format!("{block}?.dataset.agreed === 'accepted'"),
        )
        .await;
    panel.shot("bridge-2-looser-rules-accepted").await;
    let title = eventually(
        "eval allowed after the person accepted",
        Duration::from_secs(10),
        || async {
            let out = loose.call("browser_evaluate", eval.clone()).await;
            (!out.is_error).then_some(out.text)
        },
    )
    .await;
    assert!(title.contains("Page A"), "{title}");
    loose.stop().await;

    // Another rule set is another question: `--allow eval@*` stays bounded until accepted.
    let other = connecting(runtime.path(), &["--allow", "eval@*"]).await;
    other.ok("browser_tabs", json!({"action": "list"})).await;
    let out = other.call("browser_evaluate", eval.clone()).await;
    assert_eq!(out.code().as_deref(), Some("POLICY_DENIED"), "{}", out.text);
    other.stop().await;
    launcher.stop().await;
}

/// Run `kapture` with `args` (no stdin) and give its exit success and stderr + stdout.
async fn run_kapture(args: &[&str], env: &[(&str, &Path)]) -> (bool, String) {
    let mut cmd = tokio::process::Command::new(kapture_bin());
    cmd.args(args).stdin(std::process::Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = tokio::time::timeout(Duration::from_secs(30), cmd.output())
        .await
        .expect("kapture answers in time")
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    (out.status.success(), text)
}

/// Ask kapture's native-messaging face (as Chrome would) which servers it announces.
async fn discover(runtime: &Path) -> Value {
    use tokio::io::AsyncWriteExt;
    let mut child = tokio::process::Command::new(kapture_bin())
        .arg(format!(
            "chrome-extension://{}/",
            kapture_e2e::panel::EXTENSION_ID
        ))
        .env("KAPTURE_RUNTIME_DIR", runtime)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let body = br#"{"type":"discover"}"#;
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(&(body.len() as u32).to_ne_bytes())
        .await
        .unwrap();
    stdin.write_all(body).await.unwrap();
    drop(stdin);
    let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    serde_json::from_slice(&out.stdout[4..]).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runtime_folders_and_handshake_files_others_can_touch_are_refused() {
    use std::os::unix::fs::PermissionsExt;
    let base = private_dir();
    // A runtime folder kapture will not use: a symlink (to a private folder), and folders
    // group or others may write to. Each is an error naming the folder, and nothing is
    // written into it.
    let real = base.path().join("real");
    std::fs::create_dir(&real).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o700)).unwrap();
    let link = base.path().join("link");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let mut refused: Vec<(PathBuf, &str)> = vec![(link.clone(), "symbolic link")];
    for mode in [0o770, 0o777, 0o755] {
        let open = base.path().join(format!("open-{mode:o}"));
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(mode)).unwrap();
        refused.push((open, "not private"));
    }
    for (dir, why) in &refused {
        let dir_text = dir.display().to_string();
        let (ok, text) = run_kapture(
            &[
                "--browser",
                "connect",
                "--port",
                "0",
                "--runtime-dir",
                &dir_text,
            ],
            &[],
        )
        .await;
        assert!(!ok, "kapture used {dir_text}: {text}");
        assert!(
            text.contains(&dir_text) && text.contains(why),
            "the error names the folder and why: {text}"
        );
        let (_, doctor) = run_kapture(&["doctor", "--runtime-dir", &dir_text], &[]).await;
        assert!(
            doctor.contains(&format!("BAD  the runtime directory {dir_text}")),
            "{doctor}"
        );
    }
    assert_eq!(
        std::fs::read_dir(&real).unwrap().count(),
        0,
        "nothing written"
    );

    // Handshake files discovery skips (and `kapture doctor` names): readable by others, a
    // symlink, and (as root) someone else's. A private one of ours is announced.
    let runtime = private_dir();
    let (_, doctor) = run_kapture(&["doctor", "--runtime-dir", "/nonexistent"], &[]).await;
    let v: u64 = doctor
        .split("bridge protocol v")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .and_then(|n| n.parse().ok())
        .expect("doctor names the protocol version");
    announce(
        &runtime.path().join("server-1-1001.json"),
        v,
        1001,
        "good",
        0o600,
    );
    announce(
        &runtime.path().join("server-2-1002.json"),
        v,
        1002,
        "loose",
        0o644,
    );
    let elsewhere = private_dir();
    announce(&elsewhere.path().join("hs.json"), v, 1003, "linked", 0o600);
    std::os::unix::fs::symlink(
        elsewhere.path().join("hs.json"),
        runtime.path().join("server-3-1003.json"),
    )
    .unwrap();
    let foreign = runtime.path().join("server-4-1004.json");
    announce(&foreign, v, 1004, "foreign", 0o600);
    let root = {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(&foreign).unwrap().uid() == 0
    };
    if root {
        std::os::unix::fs::chown(&foreign, Some(65534), Some(65534)).unwrap();
    } else {
        std::fs::remove_file(&foreign).unwrap();
    }
    let found = discover(runtime.path()).await;
    let ports: Vec<u64> = found["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["port"].as_u64().unwrap())
        .collect();
    assert_eq!(ports, [1001], "{found}");
    let runtime_text = runtime.path().display().to_string();
    let (ok, doctor) = run_kapture(&["doctor", "--runtime-dir", &runtime_text], &[]).await;
    assert!(!ok, "skipped files are problems: {doctor}");
    assert!(doctor.contains("ok   runtime folder:"), "{doctor}");
    assert!(
        doctor.contains("server-2-1002.json: others may read it (mode 644"),
        "{doctor}"
    );
    assert!(
        doctor.contains("server-3-1003.json: it is a symbolic link"),
        "{doctor}"
    );
    if root {
        assert!(
            doctor.contains("server-4-1004.json: it belongs to user id 65534"),
            "{doctor}"
        );
    }
}
