//! Judging what a command reads or acts on beyond the page it was admitted for: a frame by
//! the security origin Chrome reports for its document (never a URL string such as
//! `about:srcdoc`), a request by its URL and the frame that made it, a tab by its URL. The
//! strictest verdict over everything a document is judged on wins.

use std::cell::RefCell;
use std::rc::Rc;

use super::{origin_of, Category, Decision, Origin, Policy, Verdict};
use crate::wire::{ErrorCode, WireError};

/// The origin of Kapture's own extension (its id is pinned by the manifest's `key`; the
/// native host checks the two agree).
pub const KAPTURE_EXTENSION_ORIGIN: &str = "chrome-extension://djjhjaffgifolhomiafbjplbhmfblamg";

/// Nested frames followed up to their creator at most this deep.
pub const MAX_FRAME_DEPTH: usize = 32;

/// A document with a real origin of its own (`http://host:port`, `file://`), as opposed to
/// an opaque one (sandboxed frames, `data:` documents: Chrome reports `null` or `://`).
fn tuple_origin(origin: &str) -> Option<Origin> {
    let o = origin_of(origin)?;
    (!o.host.is_empty() || o.scheme == "file").then_some(o)
}

/// What a document is judged on, from the security origin Chrome reports for it (`None`
/// while unknown), its URL and what its creator (the parent frame) is judged on.
///
/// - A real origin is judged as itself: a `srcdoc`, `about:blank` or `blob:` frame carries
///   its creator's origin, and that origin's rules apply to it.
/// - An opaque origin (sandboxed frame, `data:` document) holds what its creator put there
///   or what its URL served, and it belongs to no site: it is judged on all of these, and
///   the strictest verdict wins. A sandboxed frame of a denied origin stays denied; a
///   `data:` frame made by a page whose `eval` is denied is not a way around that rule.
/// - Not known yet: a URL with an origin of its own is judged on it; anything else
///   (`about:srcdoc`, `about:blank`) on its creator as well as on itself.
/// - A document without an origin of its own (`about:blank`) that took Kapture's extension's
///   origin was opened by Kapture (its new tab, or its navigation to `about:blank`: the
///   initiator's origin is inherited), never by a page: it is a blank page of no site,
///   judged as its URL (and its creator, if any), never as the extension. No agent script
///   runs in it (`TabEvents::extension_document`). Another extension's stays refused.
pub fn judged_urls(
    security_origin: Option<&str>,
    url: &str,
    creator: Option<&[String]>,
) -> Vec<String> {
    let opened_by_kapture =
        |o: &str| o.eq_ignore_ascii_case(KAPTURE_EXTENSION_ORIGIN) && tuple_origin(url).is_none();
    if let Some(o) = security_origin.filter(|o| tuple_origin(o).is_some() && !opened_by_kapture(o))
    {
        return vec![o.to_string()];
    }
    if security_origin.is_none() && tuple_origin(url).is_some() {
        return vec![url.to_string()];
    }
    let mut out = vec![if url.is_empty() { "about:blank" } else { url }.to_string()];
    out.extend(creator.into_iter().flatten().cloned());
    out
}

fn rank(v: Verdict) -> u8 {
    match v {
        Verdict::Allow => 0,
        Verdict::Ask => 1,
        Verdict::Deny => 2,
    }
}

/// The strictest decision for `category` over `urls` and the URL that made it (an empty
/// list is not a URL the policy can judge: denied).
pub fn strictest(policy: &Policy, category: Category, urls: &[String]) -> (String, Decision) {
    let mut worst: Option<(String, Decision)> = None;
    for url in urls {
        let d = policy.decide(category, url);
        if worst
            .as_ref()
            .is_none_or(|(_, w)| rank(d.verdict) > rank(w.verdict))
        {
            worst = Some((url.clone(), d));
        }
    }
    worst.unwrap_or_else(|| {
        (
            String::new(),
            Decision {
                verdict: Verdict::Deny,
                because: "a document of unknown origin".into(),
            },
        )
    })
}

/// Why something is left out of an answer or refused.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub category: Category,
    /// The origin refused (or the URL, when it has none).
    pub origin: String,
    pub verdict: Verdict,
    pub because: String,
}

impl Refusal {
    /// `read on http://127.0.0.1:4000 denied by --deny 127.0.0.1:4000`.
    pub fn reason(&self) -> String {
        match self.verdict {
            Verdict::Ask => format!(
                "{} on {} needs a person's approval ({}), not given for this command",
                self.category.name(),
                self.origin,
                self.because
            ),
            _ => format!(
                "{} on {} denied by {}",
                self.category.name(),
                self.origin,
                self.because
            ),
        }
    }

    /// The line that stands for withheld content.
    pub fn withheld(&self) -> String {
        format!("content withheld: {}", self.reason())
    }

    pub fn error(&self) -> WireError {
        let code = match self.verdict {
            Verdict::Ask => ErrorCode::ApprovalDenied,
            _ => ErrorCode::PolicyDenied,
        };
        WireError::new(code, format!("refused: {}", self.reason()))
    }
}

/// The rules a running command is held to, with the approvals it carries: whatever it
/// reaches beyond the page it was admitted for (a frame, a request, the document a wait
/// ends on) is judged here.
#[derive(Debug, Clone)]
pub struct Judge {
    policy: Rc<Policy>,
    /// The command's own category.
    category: Category,
    /// Approvals given (this command's and the session's).
    approved: Vec<(Category, Origin)>,
    /// Verdicts this command already reached: one answer judges many items of the same few
    /// documents (every console message, every request), and each verdict parses URLs.
    memo: RefCell<Vec<Memo>>,
}

/// One verdict of [`Judge::check`], kept for the command's life.
type Memo = (Category, Vec<String>, Result<(), Refusal>);

/// The most verdicts a judge keeps (a command reaches few documents; past this it judges
/// afresh each time).
const MEMO_MAX: usize = 32;

impl Judge {
    pub fn new(policy: Rc<Policy>, category: Category, approved: Vec<(Category, Origin)>) -> Self {
        Judge {
            policy,
            category,
            approved,
            memo: RefCell::default(),
        }
    }

    /// The rules judged by (fixed for the judge's life, so its verdicts can be kept).
    pub fn policy(&self) -> &Rc<Policy> {
        &self.policy
    }

    /// The command's own category.
    pub fn category(&self) -> Category {
        self.category
    }

    #[cfg(test)]
    pub(crate) fn approved(&self) -> &[(Category, Origin)] {
        &self.approved
    }

    /// `Err` when `category` on a document judged on `urls` is not allowed outright (an
    /// `ask` counts only where an approval was already given: nobody can be asked mid-answer).
    pub fn check(&self, category: Category, urls: &[String]) -> Result<(), Refusal> {
        let known = self.memo.borrow().iter().find_map(|(c, u, verdict)| {
            (*c == category && u.as_slice() == urls).then(|| verdict.clone())
        });
        if let Some(verdict) = known {
            return verdict;
        }
        let verdict = self.judge(category, urls);
        let mut memo = self.memo.borrow_mut();
        if memo.len() < MEMO_MAX {
            memo.push((category, urls.to_vec(), verdict.clone()));
        }
        verdict
    }

    fn judge(&self, category: Category, urls: &[String]) -> Result<(), Refusal> {
        let mut worst: Option<Refusal> = None;
        for url in urls {
            let d = self.policy.decide(category, url);
            let origin = origin_of(url);
            let ok = match d.verdict {
                Verdict::Allow => true,
                Verdict::Ask => origin
                    .as_ref()
                    .is_some_and(|o| self.approved.iter().any(|(c, a)| *c == category && a == o)),
                Verdict::Deny => false,
            };
            if ok
                || worst
                    .as_ref()
                    .is_some_and(|w| rank(w.verdict) >= rank(d.verdict))
            {
                continue;
            }
            worst = Some(Refusal {
                category,
                origin: origin.map(|o| o.to_string()).unwrap_or_else(|| url.clone()),
                verdict: d.verdict,
                because: d.because,
            });
        }
        if urls.is_empty() {
            return Err(Refusal {
                category,
                origin: "a document of unknown origin".into(),
                verdict: Verdict::Deny,
                because: "the policy (unknown documents are denied)".into(),
            });
        }
        worst.map_or(Ok(()), Err)
    }

    /// [`Judge::check`] for the command's own category.
    pub fn check_own(&self, urls: &[String]) -> Result<(), Refusal> {
        self.check(self.category, urls)
    }
}

/// A tab as a list may show it: `(url, title)`, or only its origin and why when `read` on
/// it is not allowed outright (a denied origin's path and title are its data).
pub fn tab_view(policy: &Policy, url: &str, title: &str) -> (String, String) {
    let (_, d) = strictest(policy, Category::Read, &[url.to_string()]);
    if d.verdict == Verdict::Allow {
        return (url.to_string(), title.to_string());
    }
    let origin = origin_of(url)
        .map(|o| o.to_string())
        .unwrap_or_else(|| "(a page of unknown origin)".into());
    let why = Refusal {
        category: Category::Read,
        origin: origin.clone(),
        verdict: d.verdict,
        because: d.because,
    };
    (origin, format!("(title withheld: {})", why.reason()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(flags: &[(&str, Verdict)]) -> Rc<Policy> {
        let mut p = Policy::launched_default();
        for (f, v) in flags {
            p.rules.push(Policy::flag_rule(f, *v, "--flag").unwrap());
        }
        Rc::new(p)
    }

    #[test]
    fn srcdoc_blank_and_blob_frames_are_judged_on_the_origin_chrome_reports() {
        let a = "http://127.0.0.1:4000";
        for url in [
            "about:srcdoc",
            "about:blank",
            "blob:http://127.0.0.1:4000/1-2",
        ] {
            assert_eq!(
                judged_urls(Some(a), url, None),
                vec![a.to_string()],
                "{url}"
            );
        }
        let p = policy(&[("eval@127.0.0.1:4000", Verdict::Deny)]);
        let judge = Judge::new(p.clone(), Category::Eval, vec![]);
        let r = judge
            .check_own(&judged_urls(Some(a), "about:srcdoc", None))
            .unwrap_err();
        assert_eq!(r.origin, a);
        assert!(
            r.reason().contains("--flag eval@127.0.0.1:4000"),
            "{}",
            r.reason()
        );
        // On the URL string alone it would have been a page of no site, where eval is allowed.
        assert!(judge.check_own(&["about:srcdoc".to_string()]).is_ok());
    }

    #[test]
    fn opaque_origins_take_the_strictest_of_their_creator_their_url_and_no_site() {
        let parent = vec!["http://127.0.0.1:4000".to_string()];
        for opaque in ["null", "://", ""] {
            let urls = judged_urls(Some(opaque), "data:text/html,x", Some(&parent));
            assert_eq!(
                urls,
                ["data:text/html,x", "http://127.0.0.1:4000"],
                "{opaque}"
            );
        }
        let p = policy(&[("eval@127.0.0.1:4000", Verdict::Ask)]);
        let (url, d) = strictest(
            &p,
            Category::Eval,
            &judged_urls(Some("null"), "data:text/html,x", Some(&parent)),
        );
        assert_eq!(
            (url.as_str(), d.verdict),
            ("http://127.0.0.1:4000", Verdict::Ask)
        );
        // A sandboxed frame served by a denied origin stays that origin's.
        let p = policy(&[("127.0.0.1:5000", Verdict::Deny)]);
        let urls = judged_urls(Some("null"), "http://127.0.0.1:5000/x", Some(&parent));
        assert_eq!(
            strictest(&p, Category::Read, &urls).1.verdict,
            Verdict::Deny
        );
        // Unknown origin: a real URL stands for itself, a URL of no origin also for its creator.
        assert_eq!(
            judged_urls(None, "http://b.test/", Some(&parent)),
            ["http://b.test/"]
        );
        assert_eq!(
            judged_urls(None, "about:srcdoc", Some(&parent)),
            ["about:srcdoc", "http://127.0.0.1:4000"]
        );
        assert_eq!(judged_urls(None, "", None), ["about:blank"]);
        // Opened by the extension (a new tab, a navigation to about:blank): a blank page.
        let ext = "chrome-extension://djjhjaffgifolhomiafbjplbhmfblamg";
        assert_eq!(judged_urls(Some(ext), "about:blank", None), ["about:blank"]);
        assert_eq!(judged_urls(Some(ext), "", None), ["about:blank"]);
        assert_eq!(
            judged_urls(Some(ext), "data:text/html,<p>x", None),
            ["data:text/html,<p>x"]
        );
        // An extension's own page stays the extension's, and so does another extension's
        // blank page.
        assert_eq!(
            judged_urls(Some(ext), &format!("{ext}/panel.html"), None),
            [ext]
        );
        let other = "chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        assert_eq!(judged_urls(Some(other), "about:blank", None), [other]);
    }

    #[test]
    fn an_ask_counts_only_where_approved_and_nothing_judged_is_denied() {
        let p = policy(&[("eval@127.0.0.1:4000", Verdict::Ask)]);
        let urls = vec!["http://127.0.0.1:4000".to_string()];
        let judge = Judge::new(p.clone(), Category::Eval, vec![]);
        let r = judge.check_own(&urls).unwrap_err();
        assert_eq!(r.error().code, ErrorCode::ApprovalDenied);
        let judge = Judge::new(
            p,
            Category::Eval,
            vec![(Category::Eval, origin_of(&urls[0]).unwrap())],
        );
        assert!(judge.check_own(&urls).is_ok());
        assert_eq!(
            judge.check_own(&[]).unwrap_err().error().code,
            ErrorCode::PolicyDenied
        );
    }

    #[test]
    fn a_denied_tab_shows_neither_title_nor_path() {
        let p = policy(&[("127.0.0.1:5000", Verdict::Deny)]);
        let (url, title) = tab_view(&p, "http://127.0.0.1:5000/secret/path?q=1", "Secret title");
        assert_eq!(url, "http://127.0.0.1:5000");
        assert!(!title.contains("Secret"), "{title}");
        assert!(title.contains("read on http://127.0.0.1:5000 denied by --flag 127.0.0.1:5000"));
        assert_eq!(
            tab_view(&p, "http://127.0.0.1:4000/a", "Mine"),
            ("http://127.0.0.1:4000/a".to_string(), "Mine".to_string())
        );
    }
}
