//! The rest of what agents need from a browser: uploads, network, cookies and storage,
//! emulation, drag, scroll, coordinate input, highlighting an element.

use std::time::Duration;

use serde_json::{json, Value};

use super::input::{click_at, drag_between, mouse, point};
use super::world::{self, Located};
use super::{settle, text, CdpSession};
use crate::escape;
use crate::methods::{
    ActionOutcome, Cookies, Drag, ElementTarget, Emulate, FileUpload, MouseClickXy, MouseMoveXy,
    NetworkRequest, NetworkRequests, Resize, Scroll, Storage, StorageArea, StoreAction, Text,
};
use crate::platform;
use crate::protocol::{ErrorCode, WireError};

/// Headers whose values are secrets unless the user's configuration reveals them.
const SENSITIVE_HEADERS: &[&str] = &[
    "authorization",
    "cookie",
    "set-cookie",
    "proxy-authorization",
    "x-api-key",
];

/// Set files on a file input (or answer the file chooser the page opened).
pub async fn file_upload<S: CdpSession>(s: &S, p: &FileUpload) -> Result<Text, WireError> {
    let node = match p.target.get() {
        Some(t) => {
            let target = world::locate_target(s, &t).await?;
            let object = world::element_object(s, &target).await?;
            let kind = s
                .send(
                    "Runtime.callFunctionOn",
                    json!({"objectId": object, "returnByValue": true,
                           "functionDeclaration": "function() { return this.tagName === 'INPUT' && this.type === 'file' ? (this.multiple ? 'multi' : 'single') : 'no'; }"}),
                )
                .await?;
            match kind.pointer("/result/value").and_then(Value::as_str) {
                Some("single") if p.paths.len() > 1 => {
                    return Err(WireError::new(
                        ErrorCode::BadArgs,
                        "this file input takes one file",
                    ))
                }
                Some("single" | "multi") => {}
                _ => {
                    return Err(WireError::new(
                        ErrorCode::NotInteractable,
                        format!("{} is not a file input", target.label),
                    ))
                }
            }
            json!({"objectId": object})
        }
        None => {
            let chooser = s.events().borrow_mut().file_chooser.take();
            let id = chooser.ok_or_else(|| {
                WireError::new(
                    ErrorCode::BadArgs,
                    "name the file input (ref or selector); no file chooser is open",
                )
            })?;
            json!({"backendNodeId": id})
        }
    };
    let mut params = json!({"files": p.paths});
    if let (Some(obj), Value::Object(more)) = (params.as_object_mut(), node) {
        obj.extend(more);
    }
    s.send("DOM.setFileInputFiles", params).await?;
    Ok(text(
        s,
        format!("Set {} file(s) on the input", p.paths.len()),
    ))
}

fn redact(headers: &Value, reveal: bool) -> Vec<String> {
    let mut out: Vec<String> = headers
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            let v = v.as_str().unwrap_or_default();
            if !reveal && SENSITIVE_HEADERS.contains(&k.to_ascii_lowercase().as_str()) {
                format!("{}: <redacted {} chars>", escape::inline(k), v.len())
            } else {
                format!("{}: {}", escape::inline(k), escape::inline(v))
            }
        })
        .collect();
    out.sort();
    out
}

/// The tab's requests, newest first, within the character budget: each URL cut to
/// [`super::read::LIST_URL_MAX`], and a marker naming the call that shows the rest.
pub fn network_requests<S: CdpSession>(s: &S, p: &NetworkRequests) -> Text {
    let max = p.max.unwrap_or(50).clamp(1, 500) as usize;
    let (max_chars, offset) = super::read::budget(&p.budget);
    let state = s.events().borrow();
    let filter = p.filter.as_deref().unwrap_or("");
    // Requests of an origin (or made by a frame) that may not be read are never listed
    // nor matched against the filter: only how many, per origin and rule, in one line.
    let mut withheld: Vec<(String, usize)> = Vec::new();
    let matching: Vec<_> = state
        .requests()
        .filter(|r| match state.request_refusal(r) {
            Some(refusal) => {
                let why = refusal.reason();
                match withheld.iter_mut().find(|(w, _)| *w == why) {
                    Some((_, n)) => *n += 1,
                    None => withheld.push((why, 1)),
                }
                false
            }
            None => true,
        })
        .filter(|r| r.url.contains(filter))
        .collect();
    let withheld_lines: Vec<String> = withheld
        .iter()
        .map(|(why, n)| format!("({n} request(s) withheld: {why})"))
        .collect();
    if matching.is_empty() {
        let mut lines = vec!["No requests seen on this tab yet.".to_string()];
        lines.extend(withheld_lines);
        return text(s, lines.join("\n"));
    }
    let end = (offset + max).min(matching.len());
    let lines: Vec<String> = matching
        .iter()
        .take(end)
        .skip(offset)
        .map(|r| {
            let status = match (&r.failed, r.status) {
                (Some(f), _) => format!("failed {}", escape::inline_cut(f, 200)),
                (None, Some(st)) => st.to_string(),
                (None, None) => "pending".into(),
            };
            let size = r.size.map(|b| format!(" {b}B")).unwrap_or_default();
            let time = r
                .duration_ms
                .map(|t| format!(" {t:.0}ms"))
                .unwrap_or_default();
            format!(
                "[{}] {} {} → {status} {}{size}{time}",
                escape::inline_cut(&r.id, 60),
                escape::inline_cut(&r.method, 20),
                escape::inline_cut(&r.url, super::read::LIST_URL_MAX),
                escape::inline_cut(&r.kind, 40)
            )
        })
        .collect();
    let total = matching.len();
    let head = match (lines.len(), offset) {
        (0, _) => format!("0 of {total} requests: none after offset {offset}"),
        (n, 0) => format!("{n} of {total} requests, newest first:"),
        (n, _) => format!("{n} of {total} requests from offset {offset}, newest first:"),
    };
    // What was withheld is said once, under the head, inside the budget.
    let head = std::iter::once(head)
        .chain(withheld_lines)
        .collect::<Vec<_>>()
        .join("\n");
    let (mut out, cut) = escape::fit_lines(&head, &lines, max_chars, |i| {
        format!(
            "… cut at the {max_chars}-character budget. More: browser_network_requests {{offset: {}}} (same filter)",
            offset + i
        )
    });
    if !cut && end < total {
        let more = format!(
            "\n… {} more. More: browser_network_requests {{offset: {end}}} (same filter)",
            total - end
        );
        if out.chars().count() + more.chars().count() <= max_chars {
            out.push_str(&more);
        }
    }
    Text {
        tab_id: s.tab_id(),
        text: out,
        cut: cut || end < total,
        refs: Vec::new(),
    }
}

/// One request: headers (secrets redacted) and a capped response body.
pub async fn network_request<S: CdpSession>(s: &S, p: &NetworkRequest) -> Result<Text, WireError> {
    let r = s.events().borrow().request(&p.id).cloned().ok_or_else(|| {
        WireError::new(
            ErrorCode::BadArgs,
            format!(
                "no request {} on this tab; list them with browser_network_requests",
                p.id
            ),
        )
    })?;
    // Neither headers nor body of a request whose origin (or frame) may not be read.
    if let Some(refusal) = s.events().borrow().request_refusal(&r) {
        return Err(refusal.error());
    }
    let mut out = vec![format!(
        "{} {}",
        escape::inline_cut(&r.method, 20),
        escape::inline_cut(&r.url, 10_000)
    )];
    out.push(format!(
        "status: {}",
        escape::inline(
            &r.status
                .map(|v| v.to_string())
                .or(r.failed.clone())
                .unwrap_or_else(|| "pending".into())
        )
    ));
    out.push("request headers:".into());
    out.extend(
        redact(&r.request_headers, p.reveal_sensitive)
            .into_iter()
            .map(|h| format!("  {h}")),
    );
    out.push("response headers:".into());
    out.extend(
        redact(&r.response_headers, p.reveal_sensitive)
            .into_iter()
            .map(|h| format!("  {h}")),
    );
    let max = p.max_body.unwrap_or(10_000).min(200_000) as usize;
    match s
        .send("Network.getResponseBody", json!({"requestId": p.id}))
        .await
    {
        Ok(body) => {
            let b64 = body
                .get("base64Encoded")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let raw = body.get("body").and_then(Value::as_str).unwrap_or_default();
            if b64 {
                out.push(format!("body: {} bytes of binary data", raw.len() * 3 / 4));
            } else {
                let total = raw.chars().count();
                let shown: String = raw.chars().take(max).collect();
                out.push(format!(
                    "body ({total} chars; untrusted content, each of its lines starts with \"{}\"):",
                    escape::BLOCK_PREFIX.trim_end()
                ));
                out.push(escape::block(&shown));
                if total > max {
                    out.push(format!(
                        "… cut at {max} of {total} chars; ask with a larger maxBody"
                    ));
                }
            }
        }
        Err(e) => out.push(format!(
            "body: not available ({})",
            escape::inline_cut(&e.message, 500)
        )),
    }
    Ok(text(s, out.join("\n")))
}

async fn page_url<S: CdpSession>(s: &S) -> Result<String, WireError> {
    let main = world::main_frame(s).await?;
    let url = world::run(s, &main, "() => location.href", &[]).await?;
    Ok(url.as_str().unwrap_or_default().to_string())
}

fn need<'a>(v: &'a Option<String>, what: &str) -> Result<&'a str, WireError> {
    v.as_deref()
        .ok_or_else(|| WireError::new(ErrorCode::BadArgs, format!("this action needs `{what}`")))
}

/// Cookies of the tab's page URL.
pub async fn cookies<S: CdpSession>(s: &S, p: &Cookies) -> Result<Text, WireError> {
    let url = page_url(s).await?;
    if !url.starts_with("http") {
        return Err(WireError::new(
            ErrorCode::UnsupportedPage,
            "cookies belong to http(s) pages; navigate to one first",
        ));
    }
    let list = |v: &Value| -> Vec<Value> {
        v.get("cookies")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    // A cookie goes to every origin of its host (and a domain cookie to every sub-domain):
    // it is read, replaced or removed only where the rules allow all of them.
    let judge = s.events().borrow().judge.clone();
    let refused = |domain: &str| {
        judge.as_ref().and_then(|j| {
            j.check_own(&crate::policy::cookies::reach(j.policy(), domain))
                .err()
        })
    };
    let domain_of = |c: &Value| c["domain"].as_str().unwrap_or_default().to_string();
    let withheld_line = |n: usize, r: &crate::policy::Refusal| {
        format!(
            "({n} cookie{} withheld: also sent where {})",
            if n == 1 { "" } else { "s" },
            r.reason()
        )
    };
    match p.action {
        StoreAction::List | StoreAction::Get => {
            let all = list(&s.send("Network.getCookies", json!({"urls": [url]})).await?);
            let named: Vec<&Value> = all
                .iter()
                .filter(|c| p.name.as_deref().is_none_or(|n| c["name"] == n))
                .collect();
            let mut withheld = None;
            let mut kept = Vec::new();
            for c in named {
                match refused(&domain_of(c)) {
                    Some(r) => {
                        let n = withheld.as_ref().map_or(0, |(n, _)| *n);
                        withheld = Some((n + 1, r));
                    }
                    None => kept.push(c),
                }
            }
            let withheld = withheld.map(|(n, r)| withheld_line(n, &r));
            let shown: Vec<String> = kept
                .into_iter()
                .map(|c| {
                    let flags = [("httpOnly", "HttpOnly"), ("secure", "Secure")]
                        .iter()
                        .filter(|(k, _)| c[*k] == true)
                        .map(|(_, f)| *f)
                        .collect::<Vec<_>>()
                        .join(" ");
                    // Name and value are escaped apart: the joined line is checked again, so
                    // a name `[ref` and a value `e9]` cannot make a tag together.
                    escape::neutralise_tags(&format!(
                        "- {}={} (path {}{}{})",
                        escape::inline_cut(c["name"].as_str().unwrap_or(""), 200),
                        escape::inline_cut(c["value"].as_str().unwrap_or(""), 1_000),
                        escape::inline_cut(c["path"].as_str().unwrap_or("/"), 200),
                        if flags.is_empty() { "" } else { ", " },
                        flags
                    ))
                })
                .collect();
            if shown.is_empty() {
                let none = match &p.name {
                    Some(n) => format!(
                        "No cookie {} for {}",
                        escape::quoted_cut(n, 200),
                        escape::inline_cut(&url, 300)
                    ),
                    None => format!("No cookies for {}", escape::inline_cut(&url, 300)),
                };
                return Ok(text(
                    s,
                    match withheld {
                        Some(w) => format!("{none} {w}"),
                        None => none,
                    },
                ));
            }
            let (max_chars, offset) = super::read::budget(&p.budget);
            let total = shown.len();
            let rest: Vec<String> = shown.into_iter().skip(offset).collect();
            let head = format!(
                "{total} cookies for {}{}{}:",
                escape::inline_cut(&url, 300),
                if offset > 0 {
                    format!(", from {offset}")
                } else {
                    String::new()
                },
                withheld.map(|w| format!(" {w}")).unwrap_or_default()
            );
            let (out, cut) = escape::fit_lines(&head, &rest, max_chars, |i| {
                format!(
                    "… cut at the {max_chars}-character budget. More: browser_cookies {{action: \"list\", offset: {}}}",
                    offset + i
                )
            });
            Ok(Text {
                tab_id: s.tab_id(),
                text: out,
                cut,
                refs: Vec::new(),
            })
        }
        StoreAction::Set => {
            let name = need(&p.name, "name")?;
            // Set for the page's URL, the cookie is its host's: sent to (and replacing the
            // cookie of that name of) every origin on that host.
            let host = crate::policy::origin_of(&url)
                .map(|o| o.host)
                .unwrap_or_default();
            if let Some(r) = refused(&host) {
                return Err(cookie_refused(r, "set"));
            }
            let mut c = json!({"name": name, "value": p.value.clone().unwrap_or_default(), "url": url,
                               "path": p.path.clone().unwrap_or_else(|| "/".into()), "httpOnly": p.http_only, "secure": p.secure});
            if let Some(e) = p.expires {
                c["expires"] = json!(e);
            }
            let ok = s.send("Network.setCookie", c).await?;
            if ok.get("success").and_then(Value::as_bool) == Some(false) {
                return Err(WireError::new(
                    ErrorCode::BadArgs,
                    "the browser refused the cookie (check name, path and secure)",
                ));
            }
            Ok(text(
                s,
                format!("Set cookie {}", escape::quoted_cut(name, 200)),
            ))
        }
        StoreAction::Delete => {
            let name = need(&p.name, "name")?;
            let all = list(&s.send("Network.getCookies", json!({"urls": [url]})).await?);
            if let Some(r) = all
                .iter()
                .filter(|c| c["name"] == name)
                .find_map(|c| refused(&domain_of(c)))
            {
                return Err(cookie_refused(r, "delete"));
            }
            s.send("Network.deleteCookies", json!({"name": name, "url": url}))
                .await?;
            Ok(text(
                s,
                format!("Deleted cookie {}", escape::quoted_cut(name, 200)),
            ))
        }
        StoreAction::Clear => {
            let all = list(&s.send("Network.getCookies", json!({"urls": [url]})).await?);
            let mut withheld = None;
            let mut deleted = 0;
            for c in &all {
                if let Some(r) = refused(&domain_of(c)) {
                    let n = withheld.as_ref().map_or(0, |(n, _)| *n);
                    withheld = Some((n + 1, r));
                    continue;
                }
                s.send("Network.deleteCookies", json!({"name": c["name"], "url": url, "domain": c["domain"], "path": c["path"]})).await?;
                deleted += 1;
            }
            let kept = withheld.map(|(n, r)| format!(" {}", withheld_line(n, &r)));
            Ok(text(
                s,
                format!("Deleted {deleted} cookies{}", kept.unwrap_or_default()),
            ))
        }
    }
}

/// A cookie change refused because the cookie also reaches an origin the rules keep.
fn cookie_refused(r: crate::policy::Refusal, what: &str) -> WireError {
    let mut e = r.error();
    e.message = format!(
        "cannot {what} that cookie: it is also sent where {}",
        r.reason()
    );
    e
}

/// localStorage or sessionStorage of the tab's origin.
pub async fn storage<S: CdpSession>(s: &S, p: &Storage) -> Result<Text, WireError> {
    let area = match p.area {
        StorageArea::Local => "localStorage",
        StorageArea::Session => "sessionStorage",
    };
    let action = serde_json::to_value(p.action).unwrap_or_default();
    if matches!(
        p.action,
        StoreAction::Get | StoreAction::Set | StoreAction::Delete
    ) {
        need(&p.key, "key")?;
    }
    let script = r#"(area, action, key, value) => {
      let st;
      try { st = window[area]; } catch (e) { return { error: 'UNSUPPORTED_PAGE', message: area + ' is not available here: ' + e.message }; }
      switch (action) {
        case 'list': return { pairs: Object.keys(st).sort().map((k) => [k, st.getItem(k)]) };
        case 'get': { const v = st.getItem(key); return v === null ? { missing: true } : { pairs: [[key, v]] }; }
        case 'set': st.setItem(key, value ?? ''); return { done: 'Set' };
        case 'delete': st.removeItem(key); return { done: 'Deleted' };
        case 'clear': { const n = st.length; st.clear(); return { cleared: n }; }
      }
    }"#;
    let main = world::main_frame(s).await?;
    let v = world::run(
        s,
        &main,
        script,
        &[json!(area), action, json!(p.key), json!(p.value)],
    )
    .await?;
    // Keys and values are the page's: escaped, one `- key=value` line each.
    let key = escape::quoted_cut(p.key.as_deref().unwrap_or_default(), 200);
    if let Some(done) = v.get("done").and_then(Value::as_str) {
        return Ok(text(s, format!("{done} {area} key {key}")));
    }
    if let Some(n) = v.get("cleared").and_then(Value::as_u64) {
        return Ok(text(s, format!("Cleared {n} keys of {area}")));
    }
    if v.get("missing").is_some() {
        return Ok(text(s, format!("No key {key} in {area}")));
    }
    let pairs: Vec<(String, Option<String>)> = v
        .get("pairs")
        .and_then(|l| serde_json::from_value(l.clone()).ok())
        .unwrap_or_default();
    if pairs.is_empty() {
        return Ok(text(s, format!("{area} is empty")));
    }
    let (max_chars, offset) = super::read::budget(&p.budget);
    let total = pairs.len();
    let lines: Vec<String> = pairs
        .iter()
        .skip(offset)
        .map(|(k, v)| {
            // The joined line is checked again (a key `[ref` and a value `e9]`).
            escape::neutralise_tags(&format!(
                "- {}={}",
                escape::inline_cut(k, 200),
                escape::inline_cut(v.as_deref().unwrap_or_default(), 2_000)
            ))
        })
        .collect();
    let head = format!("{total} keys in {area}:");
    let (out, cut) = escape::fit_lines(&head, &lines, max_chars, |i| {
        format!(
            "… cut at the {max_chars}-character budget. More: browser_storage {{action: \"list\", offset: {}}}",
            offset + i
        )
    });
    Ok(Text {
        tab_id: s.tab_id(),
        text: out,
        cut,
        refs: Vec::new(),
    })
}

/// Resize the viewport.
pub async fn resize<S: CdpSession>(s: &S, p: &Resize) -> Result<Text, WireError> {
    if !(100..=10_000).contains(&p.width) || !(100..=10_000).contains(&p.height) {
        return Err(WireError::new(
            ErrorCode::BadArgs,
            "width and height are between 100 and 10000",
        ));
    }
    s.send(
        "Emulation.setDeviceMetricsOverride",
        json!({"width": p.width, "height": p.height, "deviceScaleFactor": 0, "mobile": false}),
    )
    .await?;
    Ok(text(s, format!("Viewport is {}x{}", p.width, p.height)))
}

/// Device presets: (name, width, height, scale, mobile, user agent).
const DEVICES: &[(&str, u32, u32, f64, bool, &str)] = &[
    ("iphone 13", 390, 844, 3.0, true, "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1"),
    ("pixel 7", 412, 915, 2.625, true, "Mozilla/5.0 (Linux; Android 14; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36"),
    ("ipad", 820, 1180, 2.0, true, "Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1"),
    ("desktop", 1280, 800, 1.0, false, ""),
];

/// Emulate a device, user agent, location, network state or color scheme.
pub async fn emulate<S: CdpSession>(s: &S, p: &Emulate) -> Result<Text, WireError> {
    let mut done = Vec::new();
    if let Some(name) = &p.device {
        let key = name.trim().to_ascii_lowercase();
        if key == "none" {
            s.send("Emulation.clearDeviceMetricsOverride", json!({}))
                .await?;
            s.send(
                "Emulation.setTouchEmulationEnabled",
                json!({"enabled": false}),
            )
            .await?;
            done.push("device emulation off".to_string());
        } else {
            let Some(&(label, w, h, scale, mobile, ua)) = DEVICES.iter().find(|d| d.0 == key)
            else {
                let names: Vec<&str> = DEVICES.iter().map(|d| d.0).collect();
                return Err(WireError::new(
                    ErrorCode::BadArgs,
                    format!("unknown device {name:?}; known: {}, none", names.join(", ")),
                ));
            };
            s.send(
                "Emulation.setDeviceMetricsOverride",
                json!({"width": w, "height": h, "deviceScaleFactor": scale, "mobile": mobile}),
            )
            .await?;
            s.send(
                "Emulation.setTouchEmulationEnabled",
                json!({"enabled": mobile}),
            )
            .await?;
            if !ua.is_empty() && p.user_agent.is_none() {
                s.send("Emulation.setUserAgentOverride", json!({"userAgent": ua}))
                    .await?;
            }
            done.push(format!("device {label} ({w}x{h})"));
        }
    }
    if let Some(ua) = &p.user_agent {
        s.send("Emulation.setUserAgentOverride", json!({"userAgent": ua}))
            .await?;
        done.push("user agent".into());
    }
    if let Some(g) = &p.geolocation {
        s.send("Emulation.setGeolocationOverride", json!({"latitude": g.latitude, "longitude": g.longitude, "accuracy": g.accuracy.unwrap_or(10.0)}))
            .await?;
        done.push(format!("location {},{}", g.latitude, g.longitude));
    }
    if let Some(off) = p.offline {
        s.send(
            "Network.emulateNetworkConditions",
            json!({"offline": off, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}),
        )
        .await?;
        done.push(if off { "offline" } else { "online" }.into());
    }
    if let Some(scheme) = p.color_scheme {
        let value = serde_json::to_value(scheme).unwrap_or_default();
        let value = if value == "none" { json!("") } else { value };
        s.send(
            "Emulation.setEmulatedMedia",
            json!({"features": [{"name": "prefers-color-scheme", "value": value}]}),
        )
        .await?;
        done.push(format!(
            "color scheme {}",
            value
                .as_str()
                .filter(|v| !v.is_empty())
                .unwrap_or("as the system")
        ));
    }
    if done.is_empty() {
        return Err(WireError::new(
            ErrorCode::BadArgs,
            "say what to emulate: device, userAgent, geolocation, offline or colorScheme",
        ));
    }
    Ok(text(s, format!("Emulating {}", done.join(", "))))
}

fn end_target(
    r: &Option<String>,
    sel: &Option<String>,
    which: &str,
) -> Result<ElementTarget, WireError> {
    match (r, sel) {
        (Some(_), Some(_)) | (None, None) => Err(WireError::new(
            ErrorCode::BadArgs,
            format!("name the {which} element with exactly one of {which}Ref or {which}Selector"),
        )),
        _ => Ok(ElementTarget {
            element_ref: r.clone(),
            selector: sel.clone(),
            element: None,
        }),
    }
}

/// Drag one element onto another (HTML drag and drop or pointer-driven).
pub async fn drag<S: CdpSession>(s: &S, p: &Drag) -> Result<ActionOutcome, WireError> {
    let from =
        world::locate_target(s, &end_target(&p.start_ref, &p.start_selector, "start")?).await?;
    let to = world::locate_target(s, &end_target(&p.end_ref, &p.end_selector, "end")?).await?;
    let before = s.events().borrow().nav.mark();
    let a = point(s, &from).await?;
    let b = point(s, &to).await?;
    drag_between(s, a, b).await?;
    settle(s, before, super::navigation::GRACE_MS).await
}

/// Scroll with the wheel over an element or the middle of the viewport.
pub async fn scroll<S: CdpSession>(s: &S, p: &Scroll) -> Result<ActionOutcome, WireError> {
    let at = match p.target.get() {
        Some(t) => {
            let target: Located = world::locate_target(s, &t).await?;
            point(s, &target).await?
        }
        None => {
            let m = s.send("Page.getLayoutMetrics", json!({})).await?;
            let w = m
                .pointer("/cssVisualViewport/clientWidth")
                .and_then(Value::as_f64)
                .unwrap_or(800.0);
            let h = m
                .pointer("/cssVisualViewport/clientHeight")
                .and_then(Value::as_f64)
                .unwrap_or(600.0);
            (w / 2.0, h / 2.0)
        }
    };
    let before = s.events().borrow().nav.mark();
    let (dx, dy) = (p.delta_x, p.delta_y.unwrap_or(600.0));
    // The wheel scrolls what is under it: judged there. With no element named, a refused
    // frame in the middle of the viewport does not stop the page from scrolling: the page
    // scrolls itself, no wheel event sent.
    match super::world::judge_point(s, at).await {
        Ok(at) => mouse(s, "mouseWheel", at, json!({"deltaX": dx, "deltaY": dy})).await?,
        Err(e) if e.code != ErrorCode::PolicyDenied || p.target.get().is_some() => return Err(e),
        Err(_) => {
            let main = super::world::main_frame(s).await?;
            super::world::run(
                s,
                &main,
                "(dx, dy) => { scrollBy(dx, dy); return true; }",
                &[json!(dx), json!(dy)],
            )
            .await?;
        }
    }
    scroll_seen(s).await;
    settle(s, before, 0.0).await
}

/// Let the page see the scroll just asked for before answering (see `js::SCROLL_SEEN`).
/// Best effort: a page that cannot be asked now (a dialog, a navigation) is not waited on.
async fn scroll_seen<S: CdpSession>(s: &S) {
    let Ok(main) = world::main_frame(s).await else {
        return;
    };
    let seen = world::run_unjudged(s, &main, super::js::SCROLL_SEEN, &[]);
    let _ = platform::timeout(Duration::from_millis(600), seen).await;
}

/// Click at viewport coordinates (canvas-like pages).
pub async fn mouse_click_xy<S: CdpSession>(
    s: &S,
    p: &MouseClickXy,
) -> Result<ActionOutcome, WireError> {
    let before = s.events().borrow().nav.mark();
    click_at(s, (p.x, p.y), None, p.button, p.double_click, 0).await?;
    settle(s, before, super::navigation::GRACE_MS).await
}

/// Move the mouse to viewport coordinates.
pub async fn mouse_move_xy<S: CdpSession>(
    s: &S,
    p: &MouseMoveXy,
) -> Result<ActionOutcome, WireError> {
    let before = s.events().borrow().nav.mark();
    let at = super::world::judge_point(s, (p.x, p.y)).await?;
    mouse(s, "mouseMoved", at, json!({})).await?;
    settle(s, before, 0.0).await
}

/// Outline an element for a moment so a person sees which one a ref names.
pub async fn highlight<S: CdpSession>(
    s: &S,
    p: &crate::methods::Highlight,
) -> Result<Text, WireError> {
    let target = world::locate_target(s, &p.target).await?;
    let script = r#"async (t) => {
      const f = await resolve(t, 0);
      if (f.error) return f;
      const el = f.el;
      el.scrollIntoView({ block: 'center', behavior: 'instant' });
      const old = el.style.outline;
      el.style.outline = '3px solid #d63384';
      setTimeout(() => { el.style.outline = old; }, 1500);
      return { what: describe(el) };
    }"#;
    let v = world::run(s, &target.frame, script, std::slice::from_ref(&target.js)).await?;
    Ok(text(
        s,
        format!(
            "Highlighted {}",
            escape::inline_cut(
                v.get("what")
                    .and_then(Value::as_str)
                    .unwrap_or("the element"),
                300
            )
        ),
    ))
}
