//! Loading a page in the tab — a URL (`Page.navigate`), a step through its history, a
//! reload — then the wait the caller chose (load, DOMContentLoaded, a quiet network), a
//! weaker wait when the chosen one cannot end before the command's deadline, and bounded
//! retries of a URL after transient network failures — each said in the answer's notes.
//!
//! Only `navigate` retries: `Page.navigate` is a GET, safe to send again. A reload or a
//! step through history may resubmit a form (a POST) and never retries.

use std::time::Duration;

use serde_json::{json, Value};

use super::{await_commit, check_url, js, read_page_info, CdpSession, MAX_WAKES};
use crate::cdp::events::NetQuiet;
use crate::methods::{PageInfo, WaitUntil};
use crate::platform;
use crate::protocol::{ErrorCode, WireError};

/// The network counts as quiet after this long without a request beginning or ending.
pub const QUIET_NETWORK_MS: f64 = 500.0;
/// Retries of a navigation that failed transiently, at most.
const RETRIES: u32 = 3;
/// The pause before the first retry, doubled for each next one: a local server restarting
/// or a network changing needs a moment, and a tight loop would only fail again.
const RETRY_BASE_MS: u64 = 500;
/// A wait that cannot finish ends this long before the command's deadline, so the answer
/// is a weaker wait's (said so) rather than a timeout.
const MARGIN_MS: f64 = 1_500.0;
/// The budget when no deadline is set (a command run outside the tab's queue).
const NO_DEADLINE_MS: f64 = 30_000.0;
/// Network errors that a second try may not meet: the connection, not the URL, failed.
const TRANSIENT: &[&str] = &[
    "net::ERR_CONNECTION_RESET",
    "net::ERR_CONNECTION_REFUSED",
    "net::ERR_CONNECTION_CLOSED",
    "net::ERR_CONNECTION_ABORTED",
    "net::ERR_CONNECTION_TIMED_OUT",
    "net::ERR_EMPTY_RESPONSE",
    "net::ERR_NETWORK_CHANGED",
    "net::ERR_NETWORK_IO_SUSPENDED",
    "net::ERR_TIMED_OUT",
];

/// Is the browser's error text one a retry may get past?
pub fn is_transient(error_text: &str) -> bool {
    TRANSIENT.contains(&error_text.trim())
}

/// Load `url` in the tab and wait for it as `until` says.
pub async fn navigate<S: CdpSession>(
    s: &S,
    url: &str,
    until: WaitUntil,
) -> Result<PageInfo, WireError> {
    check_url(url)?;
    let mut notes = Vec::new();
    let mut failures: Vec<String> = Vec::new();
    loop {
        let error_text = match attempt(s, url, until, &mut notes).await? {
            Ok(mut page) => {
                if let Some(last) = failures.last() {
                    let times = match failures.len() {
                        1 => "once".to_string(),
                        n => format!("{n} times"),
                    };
                    notes.insert(0, format!("retried {times} after {last}"));
                }
                page.notes = notes;
                return Ok(page);
            }
            Err(text) => text,
        };
        let pause = Duration::from_millis(RETRY_BASE_MS << failures.len());
        let retry = is_transient(&error_text)
            && failures.len() < RETRIES as usize
            && budget_ms(s) > pause.as_millis() as f64;
        failures.push(error_text.clone());
        if !retry {
            return Err(failed(url, &error_text, failures.len() - 1));
        }
        platform::sleep(pause).await;
    }
}

/// The error of a navigation that failed for good, after `retries` retries.
fn failed(url: &str, error_text: &str, retries: usize) -> WireError {
    // Chrome refuses a tab's navigation to a `data:` URL that an extension asks for. Its
    // document is not written into a blank page instead: a blank page the extension
    // opened carries the extension's origin, and the page's scripts would run with it.
    if is_data_url(url) {
        return WireError::new(
            ErrorCode::Unsupported,
            format!(
                "could not load {url}: {error_text}: Chrome does not let the extension open data: URLs in a tab; serve the page over http(s), or use the native engine (--engine native)"
            ),
        );
    }
    let retried = match retries {
        0 => String::new(),
        1 => " (retried once)".to_string(),
        n => format!(" (retried {n} times)"),
    };
    WireError::new(
        ErrorCode::NavigationFailed,
        format!("could not load {url}: {error_text}{retried}"),
    )
}

fn is_data_url(url: &str) -> bool {
    url.trim_start()
        .get(..5)
        .is_some_and(|p| p.eq_ignore_ascii_case("data:"))
}

/// One `Page.navigate` and the wait after it; `Ok(Err(text))`: the browser could not load
/// the URL (its error text, e.g. `net::ERR_CONNECTION_REFUSED`).
async fn attempt<S: CdpSession>(
    s: &S,
    url: &str,
    until: WaitUntil,
    notes: &mut Vec<String>,
) -> Result<Result<PageInfo, String>, WireError> {
    let commit = s.events().borrow_mut().wait_for_commit();
    let res = s.send("Page.navigate", json!({"url": url})).await?;
    if let Some(err) = res
        .get("errorText")
        .and_then(Value::as_str)
        .filter(|e| !e.is_empty())
    {
        return Ok(Err(err.to_string()));
    }
    if res.get("loaderId").is_some() {
        await_commit(commit, Duration::from_secs(10)).await?;
    }
    wait_page(s, until, notes).await.map(Ok)
}

/// Move `delta` entries through the tab's history (-1 back, +1 forward) and wait for the
/// page as `until` says.
pub async fn history<S: CdpSession>(
    s: &S,
    delta: i64,
    until: WaitUntil,
) -> Result<PageInfo, WireError> {
    let hist = s.send("Page.getNavigationHistory", json!({})).await?;
    let current = hist
        .get("currentIndex")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let entries = hist
        .get("entries")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let target = usize::try_from(current + delta)
        .ok()
        .and_then(|i| entries.get(i));
    let Some(entry_id) = target.and_then(|e| e.get("id")).and_then(Value::as_i64) else {
        let which = if delta < 0 { "previous" } else { "next" };
        return Err(WireError::new(
            ErrorCode::BadArgs,
            format!("there is no {which} page in this tab's history"),
        ));
    };
    // Judged on the page it goes to, not the one it leaves.
    let dest = target
        .and_then(|e| e.get("url"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let refused = s.events().borrow().judge.as_ref().and_then(|j| {
        j.check(
            crate::policy::Category::Navigate,
            std::slice::from_ref(&dest),
        )
        .err()
    });
    if let Some(r) = refused {
        return Err(r.error());
    }
    let commit = s.events().borrow_mut().wait_for_commit();
    s.send("Page.navigateToHistoryEntry", json!({"entryId": entry_id}))
        .await?;
    await_commit(commit, Duration::from_secs(10)).await?;
    waited(s, until).await
}

/// Reload the tab and wait for the page as `until` says.
pub async fn reload<S: CdpSession>(s: &S, until: WaitUntil) -> Result<PageInfo, WireError> {
    let commit = s.events().borrow_mut().wait_for_commit();
    s.send("Page.reload", json!({})).await?;
    await_commit(commit, Duration::from_secs(10)).await?;
    waited(s, until).await
}

/// The page once `until` holds, with the notes of a weaker wait.
async fn waited<S: CdpSession>(s: &S, until: WaitUntil) -> Result<PageInfo, WireError> {
    let mut notes = Vec::new();
    let mut page = wait_page(s, until, &mut notes).await?;
    page.notes = notes;
    Ok(page)
}

/// Milliseconds a wait may still take before the command must answer.
fn budget_ms<S: CdpSession>(s: &S) -> f64 {
    match s.events().borrow().deadline_ms {
        Some(deadline) => deadline - MARGIN_MS - platform::now_ms(),
        None => NO_DEADLINE_MS,
    }
}

fn seconds(ms: f64) -> String {
    format!("{:.1} s", ms.max(0.0) / 1000.0)
}

/// The page once `until` holds, or — when it cannot before the deadline — once a weaker
/// condition does, with a note saying which.
async fn wait_page<S: CdpSession>(
    s: &S,
    until: WaitUntil,
    notes: &mut Vec<String>,
) -> Result<PageInfo, WireError> {
    let began = platform::now_ms();
    if until == WaitUntil::DomContentLoaded {
        return ready(s, notes).await;
    }
    let limit = Duration::from_millis(budget_ms(s).max(0.0) as u64);
    let loaded = platform::timeout(limit, read_page_info(s, js::LOADED_PAGE_INFO)).await;
    let page = match loaded {
        Some(page) => page?,
        None => {
            notes.push(format!(
                "the page's load event did not come within {}; answered once its document was parsed",
                seconds(platform::now_ms() - began)
            ));
            return ready(s, notes).await;
        }
    };
    if until != WaitUntil::NetworkIdle {
        return Ok(page);
    }
    let until_ms = platform::now_ms() + budget_ms(s);
    match network_quiet(s, until_ms).await? {
        Ok(()) => super::page_info(s).await,
        Err(in_flight) => {
            notes.push(format!(
                "the network was not quiet within {} ({in_flight} request(s) still in flight); answered on load",
                seconds(platform::now_ms() - began)
            ));
            Ok(page)
        }
    }
}

/// The page once its document is parsed; at the deadline, as it is (still loading).
async fn ready<S: CdpSession>(s: &S, notes: &mut Vec<String>) -> Result<PageInfo, WireError> {
    // Half the margin is kept for the plain read that follows a wait that ran out.
    let limit = budget_ms(s) + MARGIN_MS / 2.0;
    let limit = Duration::from_millis(limit.max(0.0) as u64);
    match platform::timeout(limit, read_page_info(s, js::READY_PAGE_INFO)).await {
        Some(page) => page,
        None => {
            notes.push("the document was still being parsed when the time ran out".into());
            super::page_info(s).await
        }
    }
}

/// Wait until no request has begun or ended for [`QUIET_NETWORK_MS`], woken by the
/// network's own events; at `until_ms`, `Err` with the requests still in flight.
async fn network_quiet<S: CdpSession>(
    s: &S,
    until_ms: f64,
) -> Result<Result<(), usize>, WireError> {
    for _ in 0..MAX_WAKES {
        let news = s
            .events()
            .borrow_mut()
            .wait_for(|method, _| NetQuiet::EVENTS.contains(&method));
        let now = platform::now_ms();
        let left = s.events().borrow().quiet.quiet_in(QUIET_NETWORK_MS, now);
        if left == Some(0.0) {
            return Ok(Ok(()));
        }
        if now >= until_ms {
            break;
        }
        let wait = left.unwrap_or(f64::MAX).min(until_ms - now).max(1.0);
        if let Some(Err(_)) =
            platform::timeout(Duration::from_millis(wait.ceil() as u64), news).await
        {
            return Err(WireError::new(
                ErrorCode::TabClosed,
                "the tab went away while waiting for the network to go quiet",
            ));
        }
    }
    Ok(Err(s.events().borrow().quiet.in_flight()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_connection_failures_are_retried() {
        assert!(is_transient("net::ERR_CONNECTION_REFUSED"));
        assert!(is_transient("net::ERR_NETWORK_CHANGED"));
        assert!(!is_transient("net::ERR_NAME_NOT_RESOLVED"));
        assert!(!is_transient("net::ERR_ABORTED"));
        assert!(!is_transient("net::ERR_CERT_AUTHORITY_INVALID"));
    }

    #[test]
    fn a_final_failure_says_how_often_it_was_retried() {
        let e = failed("http://127.0.0.1:1/", "net::ERR_CONNECTION_REFUSED", 3);
        assert_eq!(e.code, ErrorCode::NavigationFailed);
        assert!(e.message.ends_with("(retried 3 times)"), "{}", e.message);
        let e = failed("data:text/html,x", "net::ERR_ABORTED", 0);
        assert_eq!(e.code, ErrorCode::Unsupported);
    }
}
