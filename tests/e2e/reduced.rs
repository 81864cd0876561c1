//! Reduced mode end to end: the built extension loaded from a copy whose manifest lacks the
//! `debugger` permission (it is optional there, never granted) and has `scripting` and
//! host access, as a browser that refuses the debugger would run it. browser_status says
//! the mode; navigate, snapshot, click and type work on a real page with untrusted events,
//! each judged (a covered button is refused, a denied origin is refused and left
//! untouched); a tool that needs the debugger answers UNSUPPORTED with the reason and what
//! to do. The page is watched by the test's own CDP connection, not through kapture.

use std::path::Path;

use kapture_e2e::cdp::RawCdp;
use kapture_e2e::{target_dir, Kapture, Start};
use serde_json::{json, Value};
use www_test_pages::Site;

/// Copy `from` into `to`, folders included.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("make folder");
    for entry in std::fs::read_dir(from).expect("read folder") {
        let entry = entry.expect("entry");
        let dest = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), &dest).expect("copy file");
        }
    }
}

/// The built extension, its manifest asking for no debugger: `debugger` only optional (not
/// granted), `scripting` and every site instead.
fn extension_without_debugger() -> tempfile::TempDir {
    let built = target_dir().join("extension");
    assert!(
        built.join("reduced_page.js").is_file(),
        "{} lacks reduced_page.js: build the extension (cargo make build)",
        built.display()
    );
    let dir = tempfile::tempdir().expect("temp dir");
    copy_dir(&built, dir.path());
    let path = dir.path().join("manifest.json");
    let mut manifest: Value =
        serde_json::from_slice(&std::fs::read(&path).expect("manifest")).expect("manifest JSON");
    let permissions = manifest["permissions"].as_array_mut().expect("permissions");
    permissions.retain(|p| p != "debugger");
    permissions.push(json!("scripting"));
    manifest["optional_permissions"] = json!(["debugger"]);
    manifest["host_permissions"] = json!(["<all_urls>"]);
    std::fs::write(&path, serde_json::to_vec_pretty(&manifest).unwrap()).expect("write manifest");
    dir
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
    let ext = extension_without_debugger();
    let mut start = Start::debuggable();
    start.args.extend([
        "--extension-dir".to_string(),
        ext.path().display().to_string(),
        "--deny".to_string(),
        format!("interact@127.0.0.1:{}", denied.port()),
    ]);
    let k = Kapture::start(start).await;
    let mut raw = k.raw_cdp().await;

    // Navigate and read.
    let nav = k
        .ok("browser_navigate", json!({"url": site.url("input.html")}))
        .await;
    assert!(nav.contains("input.html"), "{nav}");
    let status = k.ok("browser_status", json!({})).await;
    assert!(status.contains("mode: reduced"), "{status}");
    let snap = k.ok("browser_snapshot", json!({})).await;
    assert!(snap.contains("Shift") && snap.contains("Covered"), "{snap}");

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
