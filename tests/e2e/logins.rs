//! Saved logins: a server's sign-in (an HttpOnly session cookie) and the page's
//! localStorage, saved sealed in one run and loaded into a fresh browser of a later run —
//! replacing what was there, never showing a value, refused where the rules say so.

use kapture_e2e::{Engine, Kapture};
use serde_json::json;
use www_test_pages::Site;

kapture_e2e::on_both_engines! {
    a_saved_login_signs_a_fresh_browser_in_on => a_saved_login_signs_a_fresh_browser_in, a_saved_login_signs_a_fresh_browser_in_natively;
    saving_and_loading_logins_is_judged_on => saving_and_loading_logins_is_judged, saving_and_loading_logins_is_judged_natively;
}

const WHO: &str = "document.getElementById('who').textContent";
const THEME: &str = "document.getElementById('theme').textContent";

/// Sign in to the site's `/account` as `user` (a server-set HttpOnly cookie) with a theme
/// kept in localStorage, and save it as the login `site`.
async fn sign_in_and_save(k: &Kapture, site: &Site, user: &str) -> String {
    k.ok(
        "browser_navigate",
        json!({"url": site.url(&format!("signin?user={user}"))}),
    )
    .await;
    assert_eq!(k.eval(WHO).await, format!("Signed in as {user}"));
    k.ok(
        "browser_storage",
        json!({"area": "local", "action": "set", "key": "theme", "value": "dark"}),
    )
    .await;
    k.ok("browser_login_save", json!({"name": "site"})).await
}

async fn a_saved_login_signs_a_fresh_browser_in_on(engine: Engine) {
    let site = Site::start().unwrap();
    let data = tempfile::tempdir().unwrap();
    let k = Kapture::launch_on_in(engine, data.path(), &[]).await;
    let saved = sign_in_and_save(&k, &site, "ada").await;
    assert!(
        saved.starts_with("Saved login \"site\" for http://127.0.0.1:")
            && saved.contains("1 cookies, 1 localStorage keys"),
        "{saved}"
    );
    assert!(
        !saved.contains("session-of") && !saved.contains("dark"),
        "{saved}"
    );
    let file = std::fs::read_to_string(data.path().join("logins/site.json")).unwrap();
    assert!(
        !file.contains("session-of") && !file.contains("dark"),
        "sealed on disk: {file}"
    );
    k.stop().await;

    // A fresh browser over the same data folder, signed out and with state of its own:
    // the load replaces that state, it does not merge into it.
    let k = Kapture::launch_on_in(engine, data.path(), &[]).await;
    k.ok("browser_navigate", json!({"url": site.url("account")}))
        .await;
    assert_eq!(k.eval(WHO).await, "Signed out");
    k.eval("() => { document.cookie = 'extra=1; path=/'; localStorage.setItem('stale', 'x'); }")
        .await;
    let loaded = k.ok("browser_login_load", json!({"name": "site"})).await;
    assert!(
        loaded.starts_with("Loaded login \"site\" for http://127.0.0.1:")
            && loaded.contains("1 cookies (replacing 1), 1 localStorage keys (replacing 1)"),
        "{loaded}"
    );
    assert!(!loaded.contains("session-of"), "{loaded}");
    assert_eq!(
        k.eval(WHO).await,
        "Signed in as ada",
        "the page reloaded signed in"
    );
    assert_eq!(k.eval(THEME).await, "Theme: dark");
    assert_eq!(
        k.eval("document.cookie").await,
        "",
        "the page's own cookie went"
    );
    assert_eq!(k.eval("localStorage.getItem('stale')").await, json!(null));
    let unknown = k.call("browser_login_load", json!({"name": "bank"})).await;
    assert!(
        unknown.is_error && unknown.text.contains("saved: site"),
        "{}",
        unknown.text
    );
    assert_eq!(
        k.fails("browser_login_save", json!({"name": "../up"}))
            .await,
        "BAD_ARGS"
    );
    k.stop().await;

    // From the blank tab of a fresh browser, the load opens the saved page itself.
    let k = Kapture::launch_on_in(engine, data.path(), &[]).await;
    let loaded = k.ok("browser_login_load", json!({"name": "site"})).await;
    assert!(loaded.contains("/account"), "{loaded}");
    assert_eq!(k.eval(WHO).await, "Signed in as ada");
    assert_eq!(k.eval(THEME).await, "Theme: dark");
    k.ok("browser_login_delete", json!({"name": "site"})).await;
    assert!(!data.path().join("logins/site.json").exists());
    k.stop().await;
}

async fn saving_and_loading_logins_is_judged_on(engine: Engine) {
    let site = Site::start().unwrap();
    let data = tempfile::tempdir().unwrap();
    let k = Kapture::launch_on_in(engine, data.path(), &[]).await;
    sign_in_and_save(&k, &site, "ada").await;
    k.stop().await;

    // Read-only: nothing is saved or deleted, the saved login stays.
    let ro = Kapture::launch_on_in(engine, data.path(), &["--read-only"]).await;
    ro.ok("browser_navigate", json!({"url": site.url("account")}))
        .await;
    assert_eq!(
        ro.fails("browser_login_save", json!({"name": "other"}))
            .await,
        "POLICY_DENIED"
    );
    assert_eq!(
        ro.fails("browser_login_delete", json!({"name": "site"}))
            .await,
        "POLICY_DENIED"
    );
    assert_eq!(
        ro.fails("browser_login_load", json!({"name": "site"}))
            .await,
        "POLICY_DENIED"
    );
    let page = ro.ok("browser_get_text", json!({"selector": "#who"})).await;
    assert!(page.contains("Signed out"), "nothing was loaded: {page}");
    ro.stop().await;
    assert!(data.path().join("logins/site.json").exists());
    assert!(!data.path().join("logins/other.json").exists());

    // A site the rules deny is never loaded into, from any page.
    let origin = format!("127.0.0.1:{}", site.port());
    let denied = Kapture::launch_on_in(engine, data.path(), &["--deny", &origin]).await;
    assert_eq!(
        denied
            .fails("browser_login_load", json!({"name": "site"}))
            .await,
        "POLICY_DENIED"
    );
    denied.stop().await;
}
