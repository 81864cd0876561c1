//! Reduced mode end to end: the extension as `kapture install --without-debugger` writes it
//! for people whose browser blocks the `debugger` permission (no `debugger`; `scripting` and
//! host access instead; the same id), loaded into a launched browser. browser_status and
//! the options page say the mode; navigate, snapshot, click and type work on a real page
//! with untrusted events, each judged (a covered button is refused, a denied origin is
//! refused and left untouched); a tool that needs the debugger answers UNSUPPORTED with the
//! reason and what to do. The page is watched by the test's own CDP connection, not through
//! kapture.

use std::path::PathBuf;

use kapture_e2e::cdp::RawCdp;
use kapture_e2e::panel::{Panel, EXTENSION_ID};
use kapture_e2e::{kapture_bin, target_dir, Kapture, Start};
use serde_json::{json, Value};
use www_test_pages::Site;

/// The extension without the debugger as a person gets it: `kapture install
/// --without-debugger` (native messaging registered in a scratch config folder), from the
/// built extension; the scratch folder and the folder it printed to load.
fn extension_without_debugger() -> (tempfile::TempDir, PathBuf) {
    let built = target_dir().join("extension");
    assert!(
        built.join("reduced_page.js").is_file(),
        "{} lacks reduced_page.js: build the extension (cargo make build)",
        built.display()
    );
    let scratch = tempfile::tempdir().expect("temp dir");
    let out = std::process::Command::new(kapture_bin())
        .args(["install", "--without-debugger", "--for", "chromium"])
        .arg("--extension-dir")
        .arg(&built)
        .arg("--data-dir")
        .arg(scratch.path().join("data"))
        .env("XDG_CONFIG_HOME", scratch.path().join("config"))
        .env("HOME", scratch.path())
        .output()
        .expect("kapture install runs");
    let said = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The folder to load is the first one it names under the data folder's own.
    let folder = said
        .lines()
        .map(str::trim)
        .find(|l| l.contains("extension-without-debugger"))
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("no folder to load in:\n{said}"));
    assert!(said.contains(EXTENSION_ID), "the same id: {said}");
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(folder.join("manifest.json")).expect("manifest"))
            .expect("manifest JSON");
    let permissions = manifest["permissions"].as_array().expect("permissions");
    assert!(!permissions.iter().any(|p| p == "debugger"), "{manifest:#}");
    assert!(permissions.iter().any(|p| p == "scripting"), "{manifest:#}");
    (scratch, folder)
}

/// `expression` evaluated in the page whose URL has `url_part`, seen by the test's own CDP.
async fn in_page(raw: &mut RawCdp, url_part: &str, expression: &str) -> Value {
    let session = raw.attach_page(url_part).await.expect("the page's target");
    let out = raw
        .send(
            Some(&session),
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        )
        .await
        .expect("evaluate");
    let _ = raw
        .send(
            None,
            "Target.detachFromTarget",
            json!({"sessionId": session}),
        )
        .await;
    out["result"]["value"].clone()
}

/// The extension's options page, opened as a person opens it, says the mode: `full`, with
/// `words` in its text; a screenshot of it is kept.
async fn options_page_says(k: &Kapture, full: bool, words: &str) {
    let mut raw = k.raw_cdp().await;
    let url = format!("chrome-extension://{EXTENSION_ID}/options.html");
    raw.send(None, "Target.createTarget", json!({"url": url}))
        .await
        .expect("open the options page");
    let session = raw.attach_page("options.html").await.expect("its target");
    let mut page = Panel { raw, session };
    let said = page
        .until(
            "the options page saying the mode",
            &format!("(() => {{ const m = document.getElementById('mode'); return m && m.dataset.full === '{full}' ? m.textContent : null; }})()"),
        )
        .await;
    let said = said.as_str().unwrap_or_default().to_string();
    assert!(said.contains(words), "{said}");
    if !full {
        assert!(
            said.contains("kapture install") && said.contains("UNSUPPORTED"),
            "{said}"
        );
    }
    page.shot(if full {
        "options-full"
    } else {
        "options-reduced"
    })
    .await;
}

/// The ref a snapshot line with `needle` carries.
fn ref_on(snapshot: &str, needle: &str) -> String {
    let line = snapshot
        .lines()
        .find(|l| l.contains(needle) && l.contains("[ref="))
        .unwrap_or_else(|| panic!("no line with {needle} and a ref in:\n{snapshot}"));
    let start = line.find("[ref=").unwrap() + 5;
    line[start..]
        .split(']')
        .next()
        .expect("ref end")
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_debugger_the_basics_work_judged_and_the_rest_says_unsupported() {
    let site = Site::start().unwrap();
    let denied = Site::start().unwrap();
    let (_scratch, ext) = extension_without_debugger();
    let mut start = Start::debuggable();
    start.args.extend([
        "--extension-dir".to_string(),
        ext.display().to_string(),
        "--deny".to_string(),
        format!("interact@127.0.0.1:{}", denied.port()),
    ]);
    let k = Kapture::start(start).await;

    // Navigate and read (the browser is launched by then, for the test's own CDP).
    let nav = k
        .ok("browser_navigate", json!({"url": site.url("input.html")}))
        .await;
    assert!(nav.contains("input.html"), "{nav}");
    let mut raw = k.raw_cdp().await;
    let status = k.ok("browser_status", json!({})).await;
    assert!(status.contains("mode: reduced"), "{status}");
    let snap = k.ok("browser_snapshot", json!({})).await;
    assert!(snap.contains("Shift") && snap.contains("Covered"), "{snap}");

    // The options page says the mode, and how to get the full one.
    options_page_says(&k, false, "Reduced mode").await;

    // Type by ref: the page's own input events see it.
    let field = ref_on(&snap, "textbox");
    k.ok(
        "browser_type",
        json!({"ref": field, "text": "typed without a debugger"}),
    )
    .await;
    assert_eq!(
        in_page(
            &mut raw,
            "input.html",
            "document.getElementById('keys').value"
        )
        .await,
        "typed without a debugger"
    );

    // Click by ref: the page's handler runs.
    let shift = ref_on(&snap, "\"Shift\"");
    k.ok("browser_click", json!({"ref": shift})).await;
    assert_eq!(
        in_page(
            &mut raw,
            "input.html",
            "document.getElementById('shift').textContent"
        )
        .await,
        "plain click"
    );

    // The hit test still decides: a covered button is not clicked through its cover.
    let covered = k.call("browser_click", json!({"selector": "#under"})).await;
    assert_eq!(
        covered.code().as_deref(),
        Some("NOT_INTERACTABLE"),
        "{}",
        covered.text
    );
    assert!(covered.text.contains("covered"), "{}", covered.text);

    // A tool that needs the debugger says so, and what to do instead.
    let shot = k.call("browser_take_screenshot", json!({})).await;
    assert_eq!(shot.code().as_deref(), Some("UNSUPPORTED"), "{}", shot.text);
    assert!(
        shot.text.contains("debugger") && shot.text.contains("native engine"),
        "{}",
        shot.text
    );

    // The policy holds as on every transport: input on a denied origin is refused and the
    // page is left alone.
    k.ok("browser_navigate", json!({"url": denied.url("input.html")}))
        .await;
    let refused = k.call("browser_click", json!({"selector": "#shift"})).await;
    assert_eq!(
        refused.code().as_deref(),
        Some("POLICY_DENIED"),
        "{}",
        refused.text
    );
    let port = format!("127.0.0.1:{}", denied.port());
    assert_eq!(
        in_page(
            &mut raw,
            &port,
            "document.getElementById('shift').textContent"
        )
        .await,
        "Shift",
        "no click happened"
    );
    k.stop().await;
}
