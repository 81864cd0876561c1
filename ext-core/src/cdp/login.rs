//! Saved logins in the browser: read a site's cookies and localStorage out of a tab, and
//! replace them with saved ones — every cookie judged on every origin it reaches, and
//! everything checked before the first change, so a refused load changes nothing.

use serde_json::{json, Value};

use super::{text, world, CdpSession};
use crate::escape;
use crate::methods::{cookie_reaches, LoginFound, LoginState, LoginWrite, SavedCookie, Text};
use crate::policy::{self, Refusal};
use crate::protocol::{ErrorCode, WireError};

/// Every key and value of the page's localStorage, or an error naming why there is none.
const READ_LOCAL: &str = r#"() => {
  try { return { pairs: Object.keys(localStorage).sort().map((k) => [k, localStorage.getItem(k)]) }; }
  catch (e) { return { error: String(e && e.message || e) }; }
}"#;

/// Replace the page's localStorage with `pairs`; answers how many keys were there.
const WRITE_LOCAL: &str = r#"(pairs) => {
  try {
    const before = localStorage.length;
    localStorage.clear();
    for (const [k, v] of pairs) localStorage.setItem(k, v);
    return { before };
  } catch (e) { return { error: String(e && e.message || e) }; }
}"#;

/// The page's URL and origin, where a login can be kept (http and https pages only).
async fn page_site<S: CdpSession>(s: &S) -> Result<(String, policy::Origin), WireError> {
    let main = world::main_frame(s).await?;
    let url = world::run(s, &main, "() => location.href", &[]).await?;
    let url = url.as_str().unwrap_or_default().to_string();
    match policy::origin_of(&url) {
        Some(o) if url.starts_with("http") => Ok((url, o)),
        _ => Err(WireError::new(
            ErrorCode::UnsupportedPage,
            "a login belongs to an http(s) page; navigate to the site first",
        )),
    }
}

/// Every cookie the browser sends to some page of `host`.
async fn host_cookies<S: CdpSession>(s: &S, host: &str) -> Result<Vec<Value>, WireError> {
    let all = s.send("Network.getAllCookies", json!({})).await?;
    Ok(all["cookies"]
        .as_array()
        .map(|l| {
            l.iter()
                .filter(|c| cookie_reaches(c["domain"].as_str().unwrap_or_default(), host))
                .cloned()
                .collect()
        })
        .unwrap_or_default())
}

/// Why the rules keep a cookie of `domain` out of the agent's hands, if they do: it is
/// judged on every origin it is sent to, not only the page's.
fn refused<S: CdpSession>(s: &S, domain: &str) -> Option<Refusal> {
    let judge = s.events().borrow().judge.clone();
    judge.and_then(|j| {
        j.check_own(&policy::cookies::reach(j.policy(), domain))
            .err()
    })
}

/// The page's local storage pairs, read in Kapture's world (the same storage as the page's).
async fn local_pairs<S: CdpSession>(s: &S) -> Result<Vec<(String, String)>, WireError> {
    let main = world::main_frame(s).await?;
    let v = world::run(s, &main, READ_LOCAL, &[]).await?;
    if let Some(e) = v.get("error").and_then(Value::as_str) {
        return Err(WireError::new(
            ErrorCode::UnsupportedPage,
            format!(
                "localStorage is not available here: {}",
                escape::inline_cut(e, 200)
            ),
        ));
    }
    Ok(serde_json::from_value(v["pairs"].clone()).unwrap_or_default())
}

/// Read the tab's page's login: the host's cookies the rules let through, and the origin's
/// localStorage.
pub async fn login_read<S: CdpSession>(s: &S) -> Result<LoginFound, WireError> {
    let (url, origin) = page_site(s).await?;
    let mut withheld = 0;
    let mut cookies = Vec::new();
    for c in host_cookies(s, &origin.host).await? {
        let domain = c["domain"].as_str().unwrap_or_default();
        if refused(s, domain).is_some() {
            withheld += 1;
            continue;
        }
        let expires = c["expires"]
            .as_f64()
            .filter(|e| *e > 0.0 && c["session"] != true);
        cookies.push(SavedCookie {
            name: c["name"].as_str().unwrap_or_default().into(),
            value: c["value"].as_str().unwrap_or_default().into(),
            domain: domain.into(),
            path: c["path"].as_str().unwrap_or("/").into(),
            expires,
            http_only: c["httpOnly"] == true,
            secure: c["secure"] == true,
            same_site: c["sameSite"].as_str().map(str::to_string),
        });
    }
    Ok(LoginFound {
        tab_id: s.tab_id(),
        state: LoginState {
            url,
            origin: origin.to_string(),
            cookies,
            local_storage: local_pairs(s).await?,
        },
        withheld,
    })
}

fn bad(why: String) -> WireError {
    WireError::new(
        ErrorCode::BadArgs,
        format!(
            "{why}; save the login again from a signed-in page of its site (browser_login_save)"
        ),
    )
}

/// A refusal of the whole load: nothing was changed.
fn load_refused(r: Refusal, cookie: &str) -> WireError {
    let mut e = r.error();
    e.message = format!(
        "cannot load this login: cookie {} is also sent where {}; nothing was changed",
        escape::quoted_cut(cookie, 100),
        r.reason()
    );
    e
}

/// Replace the site's cookies and localStorage with the saved login's, and load the page
/// under them. Everything is checked first; a refusal changes nothing.
pub async fn login_write<S: CdpSession>(s: &S, p: &LoginWrite) -> Result<Text, WireError> {
    let state = &p.secret;
    let host = state.host().ok_or_else(|| {
        bad(format!(
            "the saved login's page {} is not of its origin {}",
            escape::inline_cut(&state.url, 200),
            escape::inline_cut(&state.origin, 200)
        ))
    })?;
    for c in &state.cookies {
        if c.name.is_empty() || !cookie_reaches(&c.domain, &host) {
            return Err(bad(format!(
                "the saved cookie {} does not belong to {host}",
                escape::quoted_cut(&c.name, 100)
            )));
        }
        if let Some(r) = refused(s, &c.domain) {
            return Err(load_refused(r, &c.name));
        }
    }
    // Replacing removes the host's cookies the rules may touch; one they keep blocks it.
    let present = host_cookies(s, &host).await?;
    for c in &present {
        if let Some(r) = refused(s, c["domain"].as_str().unwrap_or_default()) {
            return Err(load_refused(r, c["name"].as_str().unwrap_or_default()));
        }
    }
    for c in &present {
        s.send(
            "Network.deleteCookies",
            json!({"name": c["name"], "domain": c["domain"], "path": c["path"]}),
        )
        .await?;
    }
    let scheme = if state.origin.starts_with("https:") {
        "https"
    } else {
        "http"
    };
    let set: Vec<Value> = state
        .cookies
        .iter()
        .map(|c| {
            let mut v = json!({
                "name": c.name, "value": c.value, "domain": c.domain, "path": c.path,
                "httpOnly": c.http_only, "secure": c.secure,
                // Host-only cookies stay host-only: set by URL, not by domain.
                "url": format!("{scheme}://{}{}", c.domain.trim_start_matches('.'), c.path),
            });
            if !c.domain.starts_with('.') {
                v.as_object_mut().map(|o| o.remove("domain"));
            }
            if let Some(e) = c.expires {
                v["expires"] = json!(e);
            }
            if let Some(ss) = &c.same_site {
                v["sameSite"] = json!(ss);
            }
            v
        })
        .collect();
    if !set.is_empty() {
        s.send("Network.setCookies", json!({"cookies": set}))
            .await?;
    }
    // localStorage is written from a page of its origin: the saved page when the tab is
    // elsewhere.
    let here = page_site(s).await.ok().map(|(_, o)| o.to_string());
    if here.as_deref() != Some(state.origin.as_str()) {
        super::navigate(s, &state.url, Default::default()).await?;
    }
    let arrived = page_site(s).await.ok().map(|(_, o)| o.to_string());
    let storage = if arrived.as_deref() == Some(state.origin.as_str()) {
        let main = world::main_frame(s).await?;
        let v = world::run(s, &main, WRITE_LOCAL, &[json!(state.local_storage)]).await?;
        match v.get("error").and_then(Value::as_str) {
            Some(e) => format!("; localStorage not written: {}", escape::inline_cut(e, 200)),
            None => format!(
                ", {} localStorage keys (replacing {})",
                state.local_storage.len(),
                v["before"].as_u64().unwrap_or(0)
            ),
        }
    } else {
        "; localStorage not written: the page went to another site".to_string()
    };
    // The page reads its login when it loads: it loads again under the new state.
    let page = super::reload(s, Default::default()).await?;
    Ok(text(
        s,
        format!(
            "Loaded login {} for {}: {} cookies (replacing {}){storage}. Reloaded: {} {}",
            escape::quoted_cut(&p.name, 100),
            escape::inline_cut(&state.origin, 200),
            state.cookies.len(),
            present.len(),
            escape::quoted_cut(&page.title, 200),
            escape::inline_cut(&page.url, 300)
        ),
    ))
}
