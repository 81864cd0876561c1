//! The policy engine, the same code in the extension and in kapture: which action
//! categories are allowed, asked or denied on which origins. URLs are normalised by a real
//! URL parser (case, punycode, numeric IPs, userinfo, trailing dots) before matching.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::wire::{ErrorCode, WireError};

pub mod bound;
pub mod budget;
pub mod cookies;
pub mod frames;
pub mod gate;
pub mod person;
pub mod risk;
pub use frames::{judged_urls, strictest, Judge, Refusal};

/// What an action does, for the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    Navigate,
    Read,
    Interact,
    Submit,
    Eval,
    Upload,
    Download,
    Storage,
    /// Recording what a person does in a tab (the recorder): asked in a person's browser.
    Record,
}

impl Category {
    pub const ALL: [Category; 9] = [
        Category::Navigate,
        Category::Read,
        Category::Interact,
        Category::Submit,
        Category::Eval,
        Category::Upload,
        Category::Download,
        Category::Storage,
        Category::Record,
    ];

    /// Categories that change something (denied in safe mode).
    pub fn writes(self) -> bool {
        !matches!(self, Category::Read | Category::Navigate)
    }

    pub fn name(self) -> &'static str {
        match self {
            Category::Navigate => "navigate",
            Category::Read => "read",
            Category::Interact => "interact",
            Category::Submit => "submit",
            Category::Eval => "eval",
            Category::Upload => "upload",
            Category::Download => "download",
            Category::Storage => "storage",
            Category::Record => "record",
        }
    }

    pub fn parse(s: &str) -> Option<Category> {
        Category::ALL
            .into_iter()
            .find(|c| c.name() == s.trim().to_ascii_lowercase())
    }
}

/// How much could go wrong (rated in [`risk`]; methods say theirs in their facts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Risk {
    #[default]
    Low,
    Medium,
    High,
}

impl Risk {
    pub fn name(self) -> &'static str {
        match self {
            Risk::Low => "low",
            Risk::Medium => "medium",
            Risk::High => "high",
        }
    }
}

/// What the policy says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Allow,
    Ask,
    Deny,
}

/// The origin part of a rule: `*`, `example.com`, `*.example.com`, with an optional
/// scheme (`https://…`) and port (`…:8080`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OriginPattern {
    pub scheme: Option<String>,
    /// Lower-case host, or `*`, or `*.suffix`.
    pub host: String,
    pub port: Option<u16>,
}

/// A URL reduced to what rules match on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    pub scheme: String,
    pub host: String,
    pub port: Option<u16>,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.port {
            Some(p) => write!(f, "{}://{}:{p}", self.scheme, self.host),
            None => write!(f, "{}://{}", self.scheme, self.host),
        }
    }
}

/// Normalise a URL the way the browser would: scheme and host lower-cased, IDN hosts in
/// punycode, IPv4 in dotted decimal, userinfo dropped, a trailing dot removed.
pub fn origin_of(url: &str) -> Option<Origin> {
    let parsed = url::Url::parse(url.trim()).ok()?;
    // A `blob:` (or `filesystem:`) document has the origin of the URL inside it:
    // `blob:https://bank.com/…` is bank.com's page, not a page of no site. Any other inside
    // (`blob:null/…` of an opaque origin) is not judged, so denied.
    if matches!(parsed.scheme(), "blob" | "filesystem") {
        let inner = url::Url::parse(parsed.path()).ok()?;
        return match inner.scheme() {
            "http" | "https" | "file" => origin_of(inner.as_str()),
            _ => None,
        };
    }
    let raw = parsed.host_str().unwrap_or_default();
    let mut host = raw.trim_end_matches('.').to_ascii_lowercase();
    // What is left after the dots is read again, so a host has one spelling: `0..` is a
    // name to the URL parser, but `0` is the address 0.0.0.0.
    let special = matches!(
        parsed.scheme(),
        "http" | "https" | "ws" | "wss" | "ftp" | "file"
    );
    if host.len() != raw.len() && special {
        if let Ok(again) = url::Host::parse(&host) {
            host = again.to_string().trim_end_matches('.').to_string();
        }
    }
    // `http://./` names a host that is only dots: not a page of no site (empty host).
    if host.is_empty() && parsed.host_str().is_some_and(|h| !h.is_empty()) {
        return None;
    }
    Some(Origin {
        scheme: parsed.scheme().to_string(),
        host,
        port: parsed.port_or_known_default(),
    })
}

impl OriginPattern {
    /// Parse `*`, `example.com`, `*.example.com:8443`, `https://*.example.com`.
    pub fn parse(text: &str) -> Result<OriginPattern, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("an empty origin pattern".into());
        }
        let (scheme, rest) = match text.split_once("://") {
            Some((s, r)) => (Some(s.to_ascii_lowercase()), r),
            None => (None, text),
        };
        // A port follows a name, an IPv4 address or a bracketed IPv6 one (`[::1]:8080`); the
        // colons of an IPv6 address are not a port.
        let (host, port) = match rest.rsplit_once(':') {
            Some((h, p))
                if (h.ends_with(']') || !h.contains(':'))
                    && p.chars().all(|c| c.is_ascii_digit())
                    && !p.is_empty() =>
            {
                (
                    h,
                    Some(
                        p.parse::<u16>()
                            .map_err(|_| format!("bad port in {text:?}"))?,
                    ),
                )
            }
            _ => (rest, None),
        };
        let host = host
            .trim_end_matches('/')
            .trim_end_matches('.')
            .to_ascii_lowercase();
        // Only what can spell a host: a user part (`a.test@b.test` is b.test), a path,
        // query, fragment, backslash or escape would make the pattern mean another host
        // than it reads as.
        let foreign = |c: char| {
            matches!(c, '/' | '\\' | '@' | '?' | '#' | '%') || c.is_whitespace() || c.is_control()
        };
        if host.is_empty()
            || host.contains(foreign)
            || (host.contains('*') && host != "*" && !host.starts_with("*."))
        {
            return Err(format!(
                "{text:?} is not an origin pattern (use example.com, *.example.com or *)"
            ));
        }
        // Normalise the literal part through the URL parser too (punycode, IPs).
        let host = if host == "*" {
            host
        } else {
            let (wild, bare) = match host.strip_prefix("*.") {
                Some(b) => ("*.", b),
                None => ("", host.as_str()),
            };
            let normal = origin_of(&format!("http://{bare}/"))
                .map(|o| o.host)
                .ok_or_else(|| format!("{text:?} has no valid host"))?;
            format!("{wild}{normal}")
        };
        Ok(OriginPattern { scheme, host, port })
    }

    /// The pattern of pages that belong to no site (`about:blank`, `data:`).
    pub fn no_site() -> OriginPattern {
        OriginPattern {
            scheme: None,
            host: String::new(),
            port: None,
        }
    }

    pub fn matches(&self, o: &Origin) -> bool {
        if self.scheme.as_ref().is_some_and(|s| *s != o.scheme)
            || self.port.is_some_and(|p| Some(p) != o.port)
        {
            return false;
        }
        match self.host.strip_prefix("*.") {
            _ if self.host == "*" => true,
            // `*.example.com` covers sub-domains and example.com itself, never
            // `evilexample.com` nor `example.com.evil.org`.
            Some(suffix) => o.host == suffix || o.host.ends_with(&format!(".{suffix}")),
            None => o.host == self.host,
        }
    }
}

impl fmt::Display for OriginPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(s) = &self.scheme {
            write!(f, "{s}://")?;
        }
        write!(f, "{}", self.host)?;
        if let Some(p) = self.port {
            write!(f, ":{p}")?;
        }
        Ok(())
    }
}

/// One rule: on these origins, this category (or all), this verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    pub origin: OriginPattern,
    #[serde(default)]
    pub category: Option<Category>,
    pub verdict: Verdict,
    /// Where the rule comes from (default, policy file line, flag), for error messages.
    pub source: String,
}

/// Rules in order; the last matching rule decides. Over them, in the extension, what the
/// person set in the side panel (`person`, then `grants`), which decides wherever `rules`
/// do not deny; and the step budgets of both.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Policy {
    pub rules: Vec<Rule>,
    /// A person's own rules (the side panel): the last matching one decides, unless
    /// `rules` deny.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub person: Vec<Rule>,
    /// "Always allow here": turns an ask of that category on that origin into an allow.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grants: Vec<Rule>,
    /// Steps per hour per origin (kapture's policy file, the side panel).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub budgets: Vec<budget::Budget>,
    /// The largest download kept, in bytes (`download_max_bytes` in kapture's policy
    /// file); `None`: [`DOWNLOAD_MAX_BYTES`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub download_max_bytes: Option<u64>,
}

/// The default size cap of a download: larger files are cancelled and removed.
pub const DOWNLOAD_MAX_BYTES: u64 = 512 << 20;

impl Policy {
    /// The size cap downloads are held to.
    pub fn download_cap(&self) -> u64 {
        self.download_max_bytes.unwrap_or(DOWNLOAD_MAX_BYTES)
    }
}

/// A person's rule that decides for `category` on `origin`: the most specific matching one
/// (an exact host over `*.suffix`, a longer suffix over a shorter, `*` last; a scheme or
/// port, then a category, more specific than none), the later one on a tie. So making
/// `*.example` auto never undoes `bank.example` made read-only, whatever the order.
fn most_specific(rules: &[Rule], category: Category, origin: &Origin) -> Option<Decision> {
    let score = |r: &Rule| {
        let host = match r.origin.host.as_str() {
            "*" => 0,
            h if h.starts_with("*.") => 1_000 + h.len(),
            h => 100_000 + h.len(),
        };
        let named = usize::from(r.origin.scheme.is_some()) + usize::from(r.origin.port.is_some());
        (host, named, r.category.is_some())
    };
    let mut best: Option<&Rule> = None;
    for r in rules
        .iter()
        .filter(|r| r.category.is_none_or(|c| c == category) && r.origin.matches(origin))
    {
        if best.is_none_or(|b| score(r) >= score(b)) {
            best = Some(r);
        }
    }
    best.map(|r| Decision {
        verdict: r.verdict,
        because: r.source.clone(),
    })
}

/// A decision and the rule that made it.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub verdict: Verdict,
    pub because: String,
}

fn rule(origin: &str, category: Option<Category>, verdict: Verdict, source: &str) -> Rule {
    Rule {
        origin: OriginPattern::parse(origin).unwrap_or(OriginPattern {
            scheme: None,
            host: "*".into(),
            port: None,
        }),
        category,
        verdict,
        source: source.into(),
    }
}

const LOOPBACK: [&str; 3] = ["127.0.0.1", "localhost", "[::1]"];

impl Policy {
    /// A browser kapture launched (a throwaway profile): everything, but `eval` off
    /// loopback is asked.
    pub fn launched_default() -> Policy {
        let mut rules = vec![
            rule("*", None, Verdict::Allow, "default (launched browser)"),
            rule(
                "*",
                Some(Category::Eval),
                Verdict::Ask,
                "default: eval off loopback",
            ),
        ];
        rules.extend(LOOPBACK.iter().map(|h| {
            rule(
                h,
                Some(Category::Eval),
                Verdict::Allow,
                "default: eval on loopback",
            )
        }));
        // Pages of no site (about:blank, data:) hold nobody's data.
        rules.push(Rule {
            origin: OriginPattern::no_site(),
            category: Some(Category::Eval),
            verdict: Verdict::Allow,
            source: "default: eval on pages of no site".into(),
        });
        Policy {
            rules,
            ..Policy::default()
        }
    }

    /// The user's own browser: look freely, ask before changing anything, no `eval`.
    pub fn connected_default() -> Policy {
        let src = "default (your own browser)";
        let mut rules = vec![rule("*", None, Verdict::Ask, src)];
        rules.push(rule("*", Some(Category::Navigate), Verdict::Allow, src));
        rules.push(rule("*", Some(Category::Read), Verdict::Allow, src));
        rules.push(rule("*", Some(Category::Eval), Verdict::Deny, src));
        Policy {
            rules,
            ..Policy::default()
        }
    }

    /// Everything allowed (`--unsafe-allow-all`).
    pub fn allow_all() -> Policy {
        Policy {
            rules: vec![rule("*", None, Verdict::Allow, "--unsafe-allow-all")],
            ..Policy::default()
        }
    }

    /// Safe mode: every writing category denied everywhere, after all other rules.
    pub fn read_only(mut self, source: &str) -> Policy {
        for c in Category::ALL.into_iter().filter(|c| c.writes()) {
            self.rules.push(rule("*", Some(c), Verdict::Deny, source));
        }
        self
    }

    /// Parse a flag rule: `[category@]origin`, e.g. `eval@*.example.com` or `example.com`.
    pub fn flag_rule(text: &str, verdict: Verdict, flag: &str) -> Result<Rule, String> {
        let (category, origin) = match text.split_once('@') {
            Some((c, o)) => (Some(Category::parse(c).ok_or_else(|| format!("{flag} {text}: unknown category {c:?} (one of navigate, read, interact, submit, eval, upload, download, storage, record)"))?), o),
            None => (None, text),
        };
        Ok(Rule {
            origin: OriginPattern::parse(origin).map_err(|e| format!("{flag} {text}: {e}"))?,
            category,
            verdict,
            source: format!("{flag} {text}"),
        })
    }

    /// Decide for `category` on `url`.
    pub fn decide(&self, category: Category, url: &str) -> Decision {
        let Some(origin) = origin_of(url) else {
            return Decision {
                verdict: Verdict::Deny,
                because: format!("{url:?} is not a URL the policy can judge"),
            };
        };
        let last = |rules: &[Rule]| {
            rules
                .iter()
                .rev()
                .find(|r| r.category.is_none_or(|c| c == category) && r.origin.matches(&origin))
                .map(|r| Decision {
                    verdict: r.verdict,
                    because: r.source.clone(),
                })
        };
        // Browser-neutral pages (a new tab's about:blank) belong to no site: judged as `*`.
        let own = last(&self.rules).unwrap_or(Decision {
            verdict: Verdict::Deny,
            because: "no rule allows it (the policy denies by default)".into(),
        });
        // What kapture's configuration denies stays denied, whatever the person set.
        if own.verdict == Verdict::Deny {
            return own;
        }
        let decided = most_specific(&self.person, category, &origin).unwrap_or(own);
        match decided.verdict {
            Verdict::Ask => last(&self.grants).unwrap_or(decided),
            _ => decided,
        }
    }

    /// The coded error for a denied decision.
    pub fn denied(category: Category, url: &str, d: &Decision) -> WireError {
        let origin = origin_of(url)
            .map(|o| o.to_string())
            .unwrap_or_else(|| url.to_string());
        WireError::new(
            ErrorCode::PolicyDenied,
            format!(
                "{} on {origin} is denied by the policy ({}); allow it with --allow {}@{} or in the policy file",
                category.name(),
                d.because,
                category.name(),
                origin_of(url).map(|o| o.host).unwrap_or_default()
            ),
        )
    }
}

#[cfg(test)]
mod tests;
