//! The pure half of the policy gate: what a command is judged on, the verdict before it is
//! queued (with the approvals people gave), and the re-check right before it runs. The
//! executor (`crate::exec`) supplies the URLs and asks a person when this says so.

use std::rc::Rc;

use super::{origin_of, strictest, Category, Judge, Origin, Policy, Verdict};
use crate::methods::{Command, ElementTarget};
use crate::wire::{ErrorCode, WireError};

/// What a command carries into its tab queue: the rules and any approval it got.
#[derive(Debug, Clone)]
pub struct Guard {
    pub policy: Rc<Policy>,
    pub approved: Option<(Category, Origin)>,
    /// What people allowed for the whole session when the command was admitted.
    pub granted: Vec<(Category, Origin)>,
}

impl Guard {
    /// The rules the command is held to while it runs, with every approval it carries.
    pub fn judge(&self, command: &Command) -> Option<Judge> {
        let category = command.category()?;
        Some(Judge::new(
            self.policy.clone(),
            category,
            self.granted
                .iter()
                .chain(self.approved.iter())
                .cloned()
                .collect(),
        ))
    }
}

/// Where a command lands, which is what it is judged on before it is queued.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// A URL it loads or fetches (a navigation, a download by URL).
    Url(String),
    /// The history entry this many steps away (back/forward), else the page.
    History(i64),
    /// The link a download clicks: its href, and the frame it is in.
    Link(ElementTarget),
    /// The document it acts in (a ref's frame, else the main frame).
    Page,
}

/// What `command` is judged on.
pub fn target(command: &Command) -> Target {
    match command {
        Command::Navigate(p) => Target::Url(p.url.clone()),
        Command::Download(p) => match (&p.url, p.target.get()) {
            (Some(url), _) => Target::Url(url.clone()),
            (None, Some(link)) => Target::Link(link),
            (None, None) => Target::Page,
        },
        Command::GoBack(_) => Target::History(-1),
        Command::GoForward(_) => Target::History(1),
        Command::StoreWrite(p) => Target::Url(p.url.clone()),
        _ => Target::Page,
    }
}

/// Whether leaving the current page is part of what `command` does: the page it leaves is
/// then checked too (navigating away from the approval window would close it under a person).
pub fn leaves_page(command: &Command) -> bool {
    matches!(
        command,
        Command::Navigate(_) | Command::GoBack(_) | Command::GoForward(_)
    )
}

/// The URL of the history entry `delta` steps from the current one, in the answer of
/// `Page.getNavigationHistory`.
pub fn history_entry(hist: &serde_json::Value, delta: i64) -> Option<String> {
    let current = hist.get("currentIndex")?.as_i64()?;
    let i = usize::try_from(current + delta).ok()?;
    Some(
        hist.pointer(&format!("/entries/{i}/url"))?
            .as_str()?
            .to_string(),
    )
}

/// The browser's own pages (settings, history, saved passwords, extensions, other
/// browsers' equivalents) and extension pages: none is a web page an agent may go to,
/// read or drive. `about:blank` and `about:srcdoc` are ordinary empty documents.
const BROWSER_PAGES: [&str; 11] = [
    "chrome://",
    "chrome-extension://",
    "chrome-untrusted://",
    "chrome-search://",
    "devtools://",
    "view-source:",
    "edge://",
    "brave://",
    "opera://",
    "vivaldi://",
    "about:",
];

/// Whether `url` is one of the browser's own pages (see [`BROWSER_PAGES`]).
pub fn is_browser_page(url: &str) -> bool {
    let lower = url.trim().to_ascii_lowercase();
    if lower == "about:blank" || lower.starts_with("about:blank#") || lower == "about:srcdoc" {
        return false;
    }
    BROWSER_PAGES.iter().any(|p| lower.starts_with(p))
}

/// The browser's own pages are never read or driven. The extension's debugger cannot
/// attach to them anyway; the native engine could, so the gate refuses them on both.
pub fn refuse_browser_page(url: &str) -> Result<(), WireError> {
    refuse_extension_page(url)?;
    if is_browser_page(url) {
        return Err(WireError::new(
            ErrorCode::UnsupportedPage,
            format!("{url} is one of the browser's own pages; agents cannot read or drive it"),
        ));
    }
    Ok(())
}

/// Extension pages are never driven: the approval window is one, and an agent must never
/// answer its own approvals.
pub fn refuse_extension_page(url: &str) -> Result<(), WireError> {
    let lower = url.trim_start().to_ascii_lowercase();
    if ["chrome-extension://", "devtools://"]
        .iter()
        .any(|p| lower.starts_with(p))
    {
        return Err(WireError::new(
            ErrorCode::PolicyDenied,
            format!("{url} is an extension's own page; agents cannot drive it"),
        ));
    }
    Ok(())
}

/// The verdict before a command is queued.
#[derive(Debug, Clone, PartialEq)]
pub enum Admission {
    /// The rules allow it.
    Allowed,
    /// The rules ask, and people already allowed this category on this origin for the
    /// session.
    Granted(Origin),
    /// The rules ask: a person must answer for this origin first.
    Ask(Origin),
}

/// Judge `category` on `urls` (what the command lands on) and `here` (the page it leaves,
/// if it leaves one): extension pages refused, writes refused in safe mode, the strictest
/// verdict over `urls` otherwise. `granted`: what people allowed for the session.
pub fn admit(
    policy: &Policy,
    category: Category,
    urls: &[String],
    here: &[String],
    safe_mode: bool,
    granted: &[(Category, Origin)],
) -> Result<Admission, WireError> {
    // What the command acts on or reads may not be a browser page; the page it leaves
    // may be one (a new tab's own page), unless it is an extension's.
    for u in urls {
        refuse_browser_page(u)?;
    }
    for u in here {
        refuse_extension_page(u)?;
    }
    safe_mode_allows(category, safe_mode)?;
    let (url, decision) = strictest(policy, category, urls);
    match decision.verdict {
        Verdict::Allow => Ok(Admission::Allowed),
        Verdict::Deny => Err(Policy::denied(category, &url, &decision)),
        Verdict::Ask => {
            let Some(origin) = origin_of(&url) else {
                return Err(Policy::denied(category, &url, &decision));
            };
            if granted.iter().any(|(c, o)| *c == category && *o == origin) {
                Ok(Admission::Granted(origin))
            } else {
                Ok(Admission::Ask(origin))
            }
        }
    }
}

/// Safe mode (the panel's switch) refuses every writing category.
pub fn safe_mode_allows(category: Category, safe_mode: bool) -> Result<(), WireError> {
    if category.writes() && safe_mode {
        return Err(WireError::new(
            ErrorCode::PolicyDenied,
            format!(
                "{} is refused: safe mode is on in the Kapture panel (turn it off there to allow changes)",
                category.name()
            ),
        ));
    }
    Ok(())
}

/// How a person answered an approval request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Allowed this one command.
    Once,
    /// Allowed this category on this origin for the session.
    Origin,
    /// Allowed this category on this origin from now on, for every agent ("Always allow
    /// here": kept by the host until a person revokes it).
    Always,
    /// Said no.
    Denied,
    /// The request went away unanswered (the panel closed it, the worker moved on).
    Withdrawn,
    /// Nobody answered in time.
    NoAnswer,
}

impl Answer {
    /// The panel's answer string (`once`, `origin`, anything else is a no).
    pub fn parse(said: &str) -> Answer {
        match said {
            "once" => Answer::Once,
            "origin" => Answer::Origin,
            "always" => Answer::Always,
            _ => Answer::Denied,
        }
    }

    /// How journals name it.
    pub fn name(&self) -> &'static str {
        match self {
            Answer::Once => "once",
            Answer::Origin => "origin",
            Answer::Always => "always",
            Answer::Denied => "deny",
            Answer::Withdrawn => "withdrawn",
            Answer::NoAnswer => "timeout",
        }
    }

    /// `Ok` when the command may go ahead; the coded refusal otherwise.
    pub fn verdict(
        &self,
        category: Category,
        origin: &Origin,
        waited_ms: u64,
    ) -> Result<(), WireError> {
        let denied = |why: &str| {
            Err(WireError::new(
                ErrorCode::ApprovalDenied,
                format!("{} on {origin} was not approved: {why}", category.name()),
            ))
        };
        match self {
            Answer::Once | Answer::Origin | Answer::Always => Ok(()),
            Answer::Denied => denied("a person denied it"),
            Answer::Withdrawn => denied("the approval was withdrawn"),
            Answer::NoAnswer => denied(&format!("nobody answered within {} s", waited_ms / 1000)),
        }
    }
}

/// Judge again right before execution, against the page as it is now (`judged_now`, what
/// the tab's document is judged on; `None` while unknown): a page that moved to another
/// origin since the approval (or the check) is refused.
pub fn recheck(
    guard: &Guard,
    command: &Command,
    judged_now: Option<&[String]>,
) -> Result<(), WireError> {
    let Some(category) = command.category() else {
        return Ok(());
    };
    let urls: Vec<String> = match target(command) {
        Target::Url(u) => vec![u],
        // Judged on the destination when it runs (`cdp::history`), with this guard's rules.
        Target::History(_) => return Ok(()),
        Target::Link(_) | Target::Page => match judged_now {
            Some(j) => j.to_vec(),
            None => return Ok(()),
        },
    };
    judge_urls(guard, category, &urls)
}

/// Whether `code` says a command was refused (by the rules, a person, a pause or a budget)
/// rather than that it failed.
pub fn is_refusal(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::PolicyDenied
            | ErrorCode::ApprovalDenied
            | ErrorCode::Paused
            | ErrorCode::BudgetExceeded
    )
}

/// Judge `urls` as the command runs, on the guard's rules and approval: the re-check's
/// verdict, also used for what a command reached that it could not name beforehand (the
/// URL a download really came from, after redirects).
pub fn judge_urls(guard: &Guard, category: Category, urls: &[String]) -> Result<(), WireError> {
    for u in urls {
        refuse_browser_page(u)?;
    }
    let (url, decision) = strictest(&guard.policy, category, urls);
    let url = url.as_str();
    // A deny the rules hold now outranks an approval given before it (a person who made the
    // site read-only meanwhile).
    if decision.verdict == Verdict::Deny {
        return Err(Policy::denied(category, url, &decision));
    }
    // Every other document it is judged on that needs an approval needs its own: one given
    // for one site never covers another (a download's redirect, a frame).
    let covered = |o: &Origin| {
        guard
            .approved
            .iter()
            .chain(guard.granted.iter())
            .any(|(c, a)| *c == category && a == o)
    };
    for other in urls.iter().filter(|u| u.as_str() != url) {
        if guard.policy.decide(category, other).verdict == Verdict::Ask
            && !origin_of(other).is_some_and(|o| covered(&o))
        {
            return Err(WireError::new(
                ErrorCode::ApprovalDenied,
                format!(
                    "it also reaches {}, which needs an approval of its own; ask again",
                    crate::escape::inline(other)
                ),
            ));
        }
    }
    // An approval binds to the origin it was given for, whatever the rules say elsewhere.
    if let Some((c, o)) = &guard.approved {
        return match origin_of(url) {
            Some(now) if *c == category && *o == now => Ok(()),
            _ => Err(WireError::new(
                ErrorCode::ApprovalDenied,
                format!(
                    "the page is now on {url}, not on {o} where the approval was given; ask again"
                ),
            )),
        };
    }
    match decision.verdict {
        Verdict::Allow => Ok(()),
        Verdict::Deny => Err(Policy::denied(category, url, &decision)),
        Verdict::Ask => Err(WireError::new(
            ErrorCode::ApprovalDenied,
            format!("the page moved to {url}, which needs an approval; ask again"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::policy::Rule;

    fn cmd(method: &str, params: serde_json::Value) -> Command {
        Command::decode(method, params).unwrap()
    }

    fn policy(rules: &[(&str, Option<Category>, Verdict)]) -> Policy {
        Policy {
            rules: rules
                .iter()
                .map(|(o, c, v)| Rule {
                    origin: crate::policy::OriginPattern::parse(o).unwrap(),
                    category: *c,
                    verdict: *v,
                    source: format!("test rule {o}"),
                })
                .collect(),
            ..Policy::default()
        }
    }

    fn urls(u: &[&str]) -> Vec<String> {
        u.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_command_is_judged_where_it_lands() {
        assert_eq!(
            target(&cmd("navigate", json!({"url": "https://a.test/"}))),
            Target::Url("https://a.test/".into())
        );
        assert_eq!(target(&cmd("go_back", json!({}))), Target::History(-1));
        assert_eq!(target(&cmd("go_forward", json!({}))), Target::History(1));
        assert!(matches!(
            target(&cmd("download", json!({"ref": "e3"}))),
            Target::Link(_)
        ));
        assert_eq!(
            target(&cmd("download", json!({"url": "https://a.test/f"}))),
            Target::Url("https://a.test/f".into())
        );
        assert_eq!(target(&cmd("click", json!({"ref": "e1"}))), Target::Page);
        assert!(leaves_page(&cmd("go_back", json!({}))));
        assert!(!leaves_page(&cmd("click", json!({"ref": "e1"}))));
    }

    #[test]
    fn admission_follows_the_strictest_rule_and_the_session_grants() {
        let p = policy(&[
            ("*", None, Verdict::Allow),
            ("b.test", Some(Category::Interact), Verdict::Ask),
            ("c.test", None, Verdict::Deny),
        ]);
        let a = urls(&["https://a.test/"]);
        assert_eq!(
            admit(&p, Category::Interact, &a, &[], false, &[]).unwrap(),
            Admission::Allowed
        );
        let denied = admit(
            &p,
            Category::Read,
            &urls(&["https://a.test/", "https://c.test/x"]),
            &[],
            false,
            &[],
        )
        .unwrap_err();
        assert_eq!(denied.code, ErrorCode::PolicyDenied);
        assert!(denied.message.contains("c.test"), "{}", denied.message);
        let b = urls(&["https://b.test/page"]);
        let origin = origin_of("https://b.test/").unwrap();
        assert_eq!(
            admit(&p, Category::Interact, &b, &[], false, &[]).unwrap(),
            Admission::Ask(origin.clone())
        );
        let granted = [(Category::Interact, origin.clone())];
        assert_eq!(
            admit(&p, Category::Interact, &b, &[], false, &granted).unwrap(),
            Admission::Granted(origin)
        );
        // A grant for another category is not one for this.
        let other = [(Category::Eval, origin_of("https://b.test/").unwrap())];
        assert!(matches!(
            admit(&p, Category::Interact, &b, &[], false, &other).unwrap(),
            Admission::Ask(_)
        ));
    }

    #[test]
    fn safe_mode_refuses_writes_and_extension_pages_are_never_driven() {
        let p = Policy::allow_all();
        let a = urls(&["https://a.test/"]);
        assert_eq!(
            admit(&p, Category::Interact, &a, &[], true, &[])
                .unwrap_err()
                .code,
            ErrorCode::PolicyDenied
        );
        assert_eq!(
            admit(&p, Category::Read, &a, &[], true, &[]).unwrap(),
            Admission::Allowed
        );
        let ext = urls(&["chrome-extension://abc/panel.html"]);
        assert_eq!(
            admit(&p, Category::Read, &ext, &[], false, &[])
                .unwrap_err()
                .code,
            ErrorCode::PolicyDenied
        );
        // Leaving an extension page is refused too (it would close the approval window).
        assert!(admit(&p, Category::Navigate, &a, &ext, false, &[]).is_err());
        // An unknown URL is denied, never allowed.
        assert!(admit(&p, Category::Read, &urls(&["not a url"]), &[], false, &[]).is_err());
    }

    #[test]
    fn the_browsers_own_pages_are_never_read_or_driven_even_when_everything_is_allowed() {
        let p = Policy::allow_all();
        for page in [
            "chrome://settings/passwords",
            "CHROME://history",
            "edge://settings",
            "brave://wallet",
            "view-source:https://a.test/",
            "about:settings",
            "chrome-untrusted://print",
        ] {
            for category in [Category::Read, Category::Interact] {
                let err = admit(&p, category, &urls(&[page]), &[], false, &[]).unwrap_err();
                assert_eq!(err.code, ErrorCode::UnsupportedPage, "{page}");
            }
        }
        // Ordinary empty documents are pages like any.
        for page in ["about:blank", "about:srcdoc"] {
            assert!(!is_browser_page(page), "{page}");
        }
        // Leaving a new tab's own page for a web page is fine.
        let a = urls(&["https://a.test/"]);
        let newtab = urls(&["chrome://newtab/"]);
        assert_eq!(
            admit(&p, Category::Navigate, &a, &newtab, false, &[]).unwrap(),
            Admission::Allowed
        );
    }

    #[test]
    fn answers_map_to_go_ahead_or_a_coded_refusal() {
        let o = origin_of("https://a.test/").unwrap();
        assert!(Answer::parse("once")
            .verdict(Category::Eval, &o, 1000)
            .is_ok());
        assert!(Answer::parse("origin")
            .verdict(Category::Eval, &o, 1000)
            .is_ok());
        for (a, why) in [
            (Answer::parse("deny"), "a person denied it"),
            (Answer::Withdrawn, "withdrawn"),
            (Answer::NoAnswer, "nobody answered within 60 s"),
        ] {
            let e = a.verdict(Category::Eval, &o, 60_000).unwrap_err();
            assert_eq!(e.code, ErrorCode::ApprovalDenied);
            assert!(e.message.contains(why), "{}", e.message);
        }
    }

    #[test]
    fn recheck_refuses_a_page_that_moved_since_the_check() {
        let p = Rc::new(policy(&[
            ("*", None, Verdict::Deny),
            ("a.test", None, Verdict::Allow),
            ("b.test", None, Verdict::Ask),
        ]));
        let guard = Guard {
            policy: p.clone(),
            approved: None,
            granted: vec![],
        };
        let click = cmd("click", json!({"ref": "e1"}));
        assert!(recheck(&guard, &click, Some(&urls(&["https://a.test/"]))).is_ok());
        // Unknown yet (never attached): nothing to judge again.
        assert!(recheck(&guard, &click, None).is_ok());
        let moved = recheck(&guard, &click, Some(&urls(&["https://c.test/"]))).unwrap_err();
        assert_eq!(moved.code, ErrorCode::PolicyDenied);
        let asks = recheck(&guard, &click, Some(&urls(&["https://b.test/"]))).unwrap_err();
        assert_eq!(asks.code, ErrorCode::ApprovalDenied);
        // An approval binds to its origin: on b.test it holds, elsewhere it does not, even
        // where the rules would allow.
        let approved = Guard {
            policy: p,
            approved: Some((Category::Interact, origin_of("https://b.test/").unwrap())),
            granted: vec![],
        };
        assert!(recheck(&approved, &click, Some(&urls(&["https://b.test/x"]))).is_ok());
        let e = recheck(&approved, &click, Some(&urls(&["https://a.test/"]))).unwrap_err();
        assert_eq!(e.code, ErrorCode::ApprovalDenied);
        // A deny made since the approval (the person made the site read-only) wins.
        let now_denied = Guard {
            policy: Rc::new(policy(&[("b.test", None, Verdict::Deny)])),
            ..approved.clone()
        };
        let e = recheck(&now_denied, &click, Some(&urls(&["https://b.test/x"]))).unwrap_err();
        assert_eq!(e.code, ErrorCode::PolicyDenied);
        // An approval for one site that asks never covers another that asks (a download
        // approved on b.test redirected to d.test).
        let asks = Guard {
            policy: Rc::new(policy(&[("*", None, Verdict::Ask)])),
            ..approved.clone()
        };
        assert!(judge_urls(&asks, Category::Interact, &urls(&["https://b.test/f"])).is_ok());
        let e = judge_urls(
            &asks,
            Category::Interact,
            &urls(&["https://b.test/f", "https://d.test/f"]),
        )
        .unwrap_err();
        assert_eq!(e.code, ErrorCode::ApprovalDenied);
        assert!(e.message.contains("d.test"), "{}", e.message);
        // A session grant for d.test covers it.
        let granted = Guard {
            granted: vec![(Category::Interact, origin_of("https://d.test/").unwrap())],
            ..asks
        };
        assert!(judge_urls(
            &granted,
            Category::Interact,
            &urls(&["https://b.test/f", "https://d.test/f"])
        )
        .is_ok());
        // A navigation is judged on its destination; back/forward on theirs, when they run.
        let nav = cmd("navigate", json!({"url": "https://c.test/"}));
        assert!(recheck(&guard, &nav, Some(&urls(&["https://a.test/"]))).is_err());
        assert!(recheck(&guard, &cmd("go_back", json!({})), None).is_ok());
    }

    #[test]
    fn the_judge_carries_every_approval_of_the_command() {
        let o = origin_of("https://b.test/").unwrap();
        let guard = Guard {
            policy: Rc::new(Policy::allow_all()),
            approved: Some((Category::Eval, o.clone())),
            granted: vec![(Category::Read, o.clone())],
        };
        let j = guard
            .judge(&cmd("evaluate", json!({"function": "1"})))
            .unwrap();
        assert_eq!(j.category(), Category::Eval);
        assert_eq!(j.approved().len(), 2);
        assert!(guard.judge(&cmd("tabs.list", json!({}))).is_none());
        assert_eq!(
            history_entry(
                &json!({"currentIndex": 1, "entries": [{"url": "https://a.test/"}, {"url": "https://b.test/"}]}),
                -1
            )
            .as_deref(),
            Some("https://a.test/")
        );
    }
}
