//! Property-based fuzz target: the policy's URL handling (`origin_of`, origin patterns,
//! `decide`) on arbitrary strings and generated URL-like strings, and the recorder's
//! locators and the ref parser on arbitrary element descriptions.

mod fuzz_common;

use ext_core::policy::{origin_of, Category, OriginPattern, Policy, Rule, Verdict};
use ext_core::protocol::ErrorCode;
use ext_core::recorder::{locators, ElementDescriptor, Locator};
use ext_core::snapshot::{FrameKey, RefTable};
use fuzz_common::{any_string, fuzz};
use proptest::prelude::*;

const REGRESSIONS: &str = "tests/proptest-regressions/fuzz_policy.txt";

/// A URL built from parts, with the parts kept to state what must not matter.
#[derive(Debug, Clone)]
struct UrlParts {
    scheme: String,
    sep: &'static str,
    userinfo: Option<String>,
    host: String,
    port: Option<String>,
    rest: String,
}

impl UrlParts {
    fn text(&self, with_userinfo: bool) -> String {
        let user = match (&self.userinfo, with_userinfo) {
            (Some(u), true) => format!("{u}@"),
            _ => String::new(),
        };
        let port = self
            .port
            .as_ref()
            .map(|p| format!(":{p}"))
            .unwrap_or_default();
        format!(
            "{}{}{user}{}{port}{}",
            self.scheme, self.sep, self.host, self.rest
        )
    }
}

fn label() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[a-z][a-z0-9-]{0,10}",
        1 => "[A-Z][A-Za-z0-9]{0,6}",
        1 => prop::sample::select(vec![
            "bücher", "例え", "straße", "xn--bcher-kva", "münchen", "ß", "ǅ", "İ", "xn--", "-a",
            "a-", "\u{200d}", "🦀", "ａｂｃ", "a\u{301}",
        ]).prop_map(str::to_string),
        1 => "[a-z]{1,3}".prop_map(|l| {
            // A percent-encoded letter: the parser decodes it.
            l.bytes().map(|b| format!("%{b:02X}")).collect::<String>()
        }),
    ]
}

fn host() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => (prop::collection::vec(label(), 1..4), any::<bool>()).prop_map(|(ls, dot)| {
            let mut h = ls.join(".");
            if dot {
                h.push('.');
            }
            h
        }),
        1 => any::<[u8; 4]>().prop_map(|[a, b, c, d]| format!("{a}.{b}.{c}.{d}")),
        1 => any::<u32>().prop_map(|n| n.to_string()),
        1 => any::<u32>().prop_map(|n| format!("0x{n:x}")),
        1 => any::<[u16; 8]>().prop_map(|g| format!("[{}]", std::net::Ipv6Addr::from(g))),
        1 => any::<[u16; 8]>().prop_map(|g| {
            let parts: Vec<String> = g.iter().map(|x| format!("{x:X}")).collect();
            format!("[{}]", parts.join(":"))
        }),
        1 => prop::sample::select(vec![
            "localhost", "[::1]", "127.0.0.1", "[::ffff:127.0.0.1]", "", "[", "]", "[::1",
            "a..b", ".", "..", "*", "*.a", "%", "%zz", "%00", "a b", "a\tb", "a%2eb",
        ]).prop_map(str::to_string),
    ]
}

fn url_parts() -> impl Strategy<Value = UrlParts> {
    let scheme = prop::sample::select(vec![
        "http",
        "https",
        "HTTP",
        "HtTpS",
        "ws",
        "wss",
        "ftp",
        "file",
        "javascript",
        "data",
        "about",
        "blob",
        "blob:https",
        "chrome",
        "chrome-extension",
        "view-source",
        "foo",
        "",
        "1http",
        "ht tp",
    ]);
    let sep = prop::sample::select(vec!["://", ":", ":/", ":///", "://\\", ":\\\\", "//"]);
    let userinfo = prop::option::of(prop_oneof![
        "[a-z]{1,6}",
        "[a-z]{1,4}:[a-z0-9]{0,6}",
        Just("example.com".to_string()),
        Just("a%40b".to_string()),
        Just(":".to_string()),
    ]);
    let port = prop::option::of(prop_oneof![
        (0u32..70_000).prop_map(|p| p.to_string()),
        (0u16..100).prop_map(|p| format!("00{p}")),
        Just(String::new()),
        Just("x".to_string()),
    ]);
    let rest = prop_oneof![
        Just("/".to_string()),
        Just(String::new()),
        "/[a-z0-9/%?#@:.]{0,20}",
        Just("/?a=b#c".to_string()),
        Just(",<p>hi</p>".to_string()),
        Just("alert(1)".to_string()),
    ];
    (scheme, sep, userinfo, host(), port, rest).prop_map(
        |(scheme, sep, userinfo, host, port, rest)| UrlParts {
            scheme: scheme.to_string(),
            sep,
            userinfo,
            host,
            port,
            rest,
        },
    )
}

fn policy() -> impl Strategy<Value = Policy> {
    let rule = (
        prop_oneof![
            Just("*".to_string()),
            host(),
            host().prop_map(|h| format!("*.{h}")),
            (host(), 0u16..).prop_map(|(h, p)| format!("https://{h}:{p}"))
        ],
        prop::option::of(prop::sample::select(Category::ALL.to_vec())),
        prop::sample::select(vec![Verdict::Allow, Verdict::Ask, Verdict::Deny]),
    )
        .prop_filter_map("parses", |(origin, category, verdict)| {
            Some(Rule {
                origin: OriginPattern::parse(&origin).ok()?,
                category,
                verdict,
                source: "fuzz".into(),
            })
        });
    prop::collection::vec(rule, 0..5).prop_map(|rules| Policy {
        rules,
        ..Policy::default()
    })
}

const SPECIAL: [&str; 5] = ["http", "https", "ws", "wss", "ftp"];

/// What every URL, parsable or not, must satisfy.
fn judge(url: &str, generated: &Policy) -> Result<(), TestCaseError> {
    let origin = origin_of(url);
    let policies = [
        Policy::allow_all(),
        Policy::launched_default(),
        Policy::connected_default(),
        generated.clone(),
        Policy::allow_all().read_only("safe mode"),
    ];
    for c in Category::ALL {
        for (i, p) in policies.iter().enumerate() {
            let d = p.decide(c, url);
            if origin.is_none() {
                // The stated invariant: unparsable URLs are denied, never allowed.
                prop_assert_eq!(d.verdict, Verdict::Deny, "{:?} under policy {}", url, i);
            }
            if d.verdict == Verdict::Deny {
                prop_assert_eq!(Policy::denied(c, url, &d).code, ErrorCode::PolicyDenied);
            }
        }
        prop_assert_eq!(
            policies[0].decide(c, url).verdict == Verdict::Allow,
            origin.is_some(),
            "allow-all allows exactly the URLs it can judge: {:?}",
            url
        );
        if c.writes() {
            prop_assert_eq!(policies[4].decide(c, url).verdict, Verdict::Deny);
            let safe = generated.clone().read_only("safe");
            prop_assert_eq!(safe.decide(c, url).verdict, Verdict::Deny);
        } else {
            let safe = generated.clone().read_only("safe");
            prop_assert_eq!(safe.decide(c, url), generated.decide(c, url));
        }
    }
    prop_assert_eq!(
        Policy::connected_default()
            .decide(Category::Eval, url)
            .verdict,
        Verdict::Deny
    );
    if let Some(o) = origin {
        prop_assert!(!o.host.ends_with('.'), "{:?}", o);
        prop_assert!(!o.host.chars().any(|c| c.is_ascii_uppercase()), "{:?}", o);
        if SPECIAL.contains(&o.scheme.as_str()) {
            prop_assert!(o.host.is_ascii() && !o.host.is_empty(), "{:?}", o);
            prop_assert!(o.port.is_some(), "{:?}", o);
            // Normalised: the origin's own spelling parses to itself.
            prop_assert_eq!(origin_of(&o.to_string()), Some(o.clone()));
            // A pattern of that host (and of host, scheme and port) matches it (`*` is the
            // wildcard of patterns, so a host holding one cannot be named).
            if !o.host.contains('*') {
                let bare = OriginPattern::parse(&o.host);
                prop_assert!(
                    bare.as_ref().is_ok_and(|p| p.matches(&o)),
                    "{:?} {:?}",
                    o,
                    bare
                );
                let full = OriginPattern::parse(&o.to_string());
                prop_assert!(
                    full.as_ref().is_ok_and(|p| p.matches(&o)),
                    "{:?} {:?}",
                    o,
                    full
                );
            }
            if let (Some(port), false) = (o.port, o.host.contains('*')) {
                let other = format!("{}://{}:{}", o.scheme, o.host, port.wrapping_add(1));
                let other = OriginPattern::parse(&other);
                prop_assert!(
                    other.as_ref().is_ok_and(|p| !p.matches(&o)),
                    "another port's pattern {:?} matched {:?}",
                    other,
                    o
                );
            }
        }
    }
    Ok(())
}

#[test]
fn arbitrary_strings_are_judged_and_unparsable_ones_denied() {
    let text = prop_oneof![
        ".{0,60}",
        "[a-zA-Z0-9:/@.%\\[\\]#?\\\\ -]{0,40}",
        any_string(),
    ];
    fuzz(
        REGRESSIONS,
        "arbitrary_strings_are_judged_and_unparsable_ones_denied",
        (text, policy()),
        |(text, policy)| {
            judge(&text, &policy)?;
            // Patterns and flag rules from arbitrary text: an error or a pattern, never a panic.
            if let Ok(p) = OriginPattern::parse(&text) {
                prop_assert_eq!(OriginPattern::parse(&p.to_string()), Ok(p));
            }
            let _ = Policy::flag_rule(&text, Verdict::Allow, "--allow");
            Ok(())
        },
    );
}

#[test]
fn url_like_strings_are_normalised_and_judged() {
    fuzz(
        REGRESSIONS,
        "url_like_strings_are_normalised_and_judged",
        (url_parts(), policy()),
        |(parts, policy)| {
            let url = parts.text(true);
            judge(&url, &policy)?;
            let bare = parts.text(false);
            judge(&bare, &policy)?;
            let (with, without) = (origin_of(&url), origin_of(&bare));
            // Userinfo never changes the origin of a web URL (`https://bank.com@evil.org/`
            // is evil.org).
            if let (Some(a), Some(b)) = (&with, &without) {
                if SPECIAL.contains(&a.scheme.as_str()) {
                    prop_assert_eq!(a, b, "{} vs {}", url, bare);
                }
            }
            Ok(())
        },
    );
}

/// Patterns from parts: the port written is the port matched, whatever the host's form.
#[test]
fn patterns_keep_their_port_and_parse_to_themselves() {
    let case = (
        prop::option::of(prop::sample::select(vec!["http", "https", "HTTPS"])),
        prop_oneof![
            host(),
            host().prop_map(|h| format!("*.{h}")),
            Just("*".to_string())
        ],
        prop::option::of(any::<u16>()),
    );
    fuzz(
        REGRESSIONS,
        "patterns_keep_their_port_and_parse_to_themselves",
        case,
        |(scheme, host, port)| {
            let text = format!(
                "{}{host}{}",
                scheme.map(|s| format!("{s}://")).unwrap_or_default(),
                port.map(|p| format!(":{p}")).unwrap_or_default()
            );
            let Ok(p) = OriginPattern::parse(&text) else {
                return Ok(());
            };
            prop_assert_eq!(p.port, port, "{:?} -> {:?}", text, p);
            let lower = scheme.map(str::to_ascii_lowercase);
            prop_assert_eq!(p.scheme.as_deref(), lower.as_deref());
            prop_assert_eq!(OriginPattern::parse(&p.to_string()), Ok(p.clone()));
            // A named host is matched by whole labels only.
            if let Some(suffix) = p.host.strip_prefix("*.") {
                let glued = format!("https://x{suffix}/");
                if let Some(o) = origin_of(&glued) {
                    prop_assert!(
                        o.host == suffix || !p.matches(&o),
                        "{:?} matched {:?}",
                        p,
                        o
                    );
                }
            }
            Ok(())
        },
    );
}

/// A `blob:` document has the origin of the URL inside it (`blob:https://bank.com/…` is
/// bank.com's page): a rule about that site must apply there.
#[test]
fn blob_urls_are_judged_as_their_inner_origin() {
    fuzz(
        REGRESSIONS,
        "blob_urls_are_judged_as_their_inner_origin",
        ("[a-z]{1,10}\\.(com|org)", "[0-9a-f-]{1,36}"),
        |(domain, uuid)| {
            let inner = format!("https://{domain}");
            let blob = format!("blob:{inner}/{uuid}");
            prop_assert_eq!(origin_of(&blob), origin_of(&inner));
            let mut p = Policy::allow_all();
            p.rules
                .push(Policy::flag_rule(&domain, Verdict::Deny, "--deny").unwrap());
            prop_assert_eq!(p.decide(Category::Interact, &blob).verdict, Verdict::Deny);
            Ok(())
        },
    );
}

fn descriptor() -> impl Strategy<Value = ElementDescriptor> {
    let s = || {
        prop_oneof![
            2 => any_string(),
            1 => Just(String::new()),
            1 => Just("  ".to_string()),
            1 => "x{55,70}",
            1 => prop::sample::select(vec![":r1:", "ember12", "a1b2c3d4", "login", "input", "button"])
                .prop_map(str::to_string),
        ]
    };
    (
        (s(), s(), s(), s(), s(), s()),
        (s(), s(), s(), s(), any::<bool>()),
    )
        .prop_map(
            |(
                (tag, id, name, test_id, role, accessible_name),
                (label, text, css_path, xpath, fp),
            )| {
                ElementDescriptor {
                    tag,
                    id,
                    name,
                    test_id,
                    role,
                    accessible_name,
                    label,
                    text,
                    css_path,
                    xpath,
                    form_has_password: fp,
                    ..ElementDescriptor::default()
                }
            },
        )
}

fn rank(l: &Locator) -> usize {
    match l {
        Locator::TestId(_) => 0,
        Locator::Role(..) => 1,
        Locator::Label(_) => 2,
        Locator::Id(_) => 3,
        Locator::Name(_) => 4,
        Locator::Text(_) => 5,
        Locator::Css(_) => 6,
        Locator::XPath(_) => 7,
    }
}

/// Locators come best first, one of each kind at most, never empty values, and a
/// descriptor with a CSS path or XPath always has a locator.
#[test]
fn locators_are_ranked_and_never_empty() {
    fuzz(
        REGRESSIONS,
        "locators_are_ranked_and_never_empty",
        descriptor(),
        |e| {
            let ls = locators(&e);
            for w in ls.windows(2) {
                prop_assert!(rank(&w[0]) < rank(&w[1]), "{:?}", ls);
            }
            for l in &ls {
                let values: Vec<&String> = match l {
                    Locator::Role(r, n) => vec![r, n],
                    Locator::TestId(v)
                    | Locator::Label(v)
                    | Locator::Id(v)
                    | Locator::Name(v)
                    | Locator::Text(v)
                    | Locator::Css(v)
                    | Locator::XPath(v) => vec![v],
                };
                prop_assert!(values.iter().all(|v| !v.trim().is_empty()), "{:?}", l);
                // Stored and read back unchanged (scenario files hold them).
                let json = serde_json::to_string(l).unwrap();
                prop_assert_eq!(&serde_json::from_str::<Locator>(&json).unwrap(), l);
            }
            if !e.css_path.trim().is_empty() || !e.xpath.trim().is_empty() {
                prop_assert!(!ls.is_empty());
            }
            Ok(())
        },
    );
}

/// Any text given as a ref is resolved or refused with `REF_STALE` / `BAD_ARGS`; a ref
/// handed out resolves to its element while its document lives, and never after.
#[test]
fn refs_resolve_to_their_element_or_are_refused() {
    let text = prop_oneof![
        any_string(),
        "f?[0-9]{0,3}e[0-9]{0,4}",
        " ?e[0-9]{1,3} ?",
        Just("#button".to_string()),
    ];
    fuzz(
        REGRESSIONS,
        "refs_resolve_to_their_element_or_are_refused",
        (text, prop::collection::vec((0u8..3, 0u32..20), 1..20)),
        |(text, elements)| {
            let mut t = RefTable::new();
            t.set_main_frame("F0");
            let key = |f: u8| FrameKey {
                frame_id: format!("F{f}"),
                loader_id: "L".into(),
            };
            let mut given = Vec::new();
            for (f, local) in &elements {
                let r = t.ref_for(&key(*f), *local);
                given.push((r, *f, *local));
            }
            for (r, f, local) in &given {
                let got = t.resolve(r, |_| Some("L".into()));
                prop_assert_eq!(
                    got.map(|g| (g.frame, g.local)).ok(),
                    Some((key(*f), *local))
                );
                let gone = t.resolve(r, |_| Some("L2".into()));
                prop_assert_eq!(gone.err().map(|e| e.code), Some(ErrorCode::RefStale));
            }
            // Distinct elements, distinct refs.
            let mut names: Vec<&String> = given.iter().map(|(r, ..)| r).collect();
            names.sort();
            names.dedup();
            let mut elements = elements.clone();
            elements.sort();
            elements.dedup();
            prop_assert_eq!(names.len(), elements.len());
            match t.resolve(&text, |_| Some("L".into())) {
                Ok(target) => prop_assert!(given.iter().any(|(r, f, l)| r == text.trim()
                    && key(*f) == target.frame
                    && *l == target.local)),
                Err(e) => prop_assert!(matches!(e.code, ErrorCode::RefStale | ErrorCode::BadArgs)),
            }
            Ok(())
        },
    );
}
