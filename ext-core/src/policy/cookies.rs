//! A cookie's reach: the origins a browser sends it to (its host on every port and scheme,
//! and every sub-domain of a domain cookie's domain), reduced to one origin per class the
//! policy's rules can tell apart, so a cookie is judged on all of them and not only on
//! the page that shows it.

use std::collections::BTreeSet;

use super::{origin_of, Policy};

/// Schemes a cookie goes out with (pages and WebSocket handshakes).
const SCHEMES: [&str; 4] = ["http", "https", "ws", "wss"];

/// The label that stands for "any other sub-domain" of a domain cookie's domain.
const OTHER_LABEL: &str = "any-other-subdomain";

/// URLs, one per class of origins a cookie of `domain` reaches that `policy` can tell apart:
/// judged all allowed, every origin the cookie reaches is. `domain` as the browser gives
/// it: `.example.com` for a domain cookie (sent to sub-domains), `example.com` for a
/// host-only one.
pub fn reach(policy: &Policy, domain: &str) -> Vec<String> {
    let (host, sub_domains) = match domain.strip_prefix('.') {
        Some(d) => (d, true),
        None => (domain, false),
    };
    // The host as origins spell it (punycode, IP forms): a domain that is no host reaches
    // nothing that could be judged, and is judged as what it says.
    let Some(host) = origin_of(&format!("http://{host}/")).map(|o| o.host) else {
        return vec![domain.to_string()];
    };
    let rules = policy
        .rules
        .iter()
        .chain(&policy.person)
        .chain(&policy.grants)
        .map(|r| &r.origin);
    let mut hosts = BTreeSet::from([host.clone()]);
    let mut ports = BTreeSet::from([80, 443]);
    let inside = |h: &str| h == host || h.ends_with(&format!(".{host}"));
    for pattern in rules {
        ports.extend(pattern.port);
        if !sub_domains {
            continue;
        }
        // A rule on a host under the domain, or on all hosts under a name under it, sets
        // that part apart.
        match pattern.host.strip_prefix("*.") {
            Some(suffix) if inside(suffix) => {
                hosts.insert(suffix.to_string());
                hosts.insert(format!("{OTHER_LABEL}.{suffix}"));
            }
            None if inside(&pattern.host) => {
                hosts.insert(pattern.host.clone());
            }
            _ => {}
        }
    }
    if sub_domains {
        hosts.insert(format!("{OTHER_LABEL}.{host}"));
    }
    // And a port no rule names.
    if let Some(free) = (1..=u16::MAX).rev().find(|p| !ports.contains(p)) {
        ports.insert(free);
    }
    let mut out = Vec::new();
    for scheme in SCHEMES {
        for h in &hosts {
            // An IPv6 host is bracketed in a URL.
            let h = match h.contains(':') && !h.starts_with('[') {
                true => format!("[{h}]"),
                false => h.clone(),
            };
            for port in &ports {
                out.push(format!("{scheme}://{h}:{port}/"));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{Category, Judge};

    fn judge(rules: &[&str]) -> Judge {
        let mut policy = Policy::launched_default();
        for r in rules {
            let (verdict, origin) = r.split_once(' ').unwrap();
            let rule = match verdict {
                "deny" => crate::policy::rule(origin, None, crate::policy::Verdict::Deny, "test"),
                _ => crate::policy::rule(origin, None, crate::policy::Verdict::Allow, "test"),
            };
            policy.rules.push(rule);
        }
        Judge::new(std::rc::Rc::new(policy), Category::Storage, Vec::new())
    }

    fn allowed(j: &Judge, domain: &str) -> bool {
        j.check_own(&reach(j.policy(), domain)).is_ok()
    }

    #[test]
    fn a_cookie_is_judged_on_every_port_and_sub_domain_it_reaches() {
        let j = judge(&["deny 127.0.0.1:5000"]);
        // A host-only cookie of 127.0.0.1 goes to port 5000 too.
        assert!(!allowed(&j, "127.0.0.1"));
        let j = judge(&["deny bank.example.com"]);
        assert!(
            !allowed(&j, ".example.com"),
            "a parent domain's cookie reaches it"
        );
        assert!(
            allowed(&j, "example.com"),
            "a host-only cookie of the parent does not"
        );
        assert!(allowed(&j, "shop.example.com"));
        let j = judge(&["deny *.internal.example.com"]);
        assert!(!allowed(&j, ".example.com"));
        assert!(!allowed(&j, ".internal.example.com"));
        assert!(allowed(&j, ".shop.example.com"));
        let j = judge(&["deny https://example.com"]);
        assert!(
            !allowed(&j, "example.com"),
            "the same host over another scheme"
        );
        let j = judge(&[]);
        assert!(allowed(&j, ".example.com") && allowed(&j, "127.0.0.1"));
    }

    #[test]
    fn an_allow_list_covers_a_cookie_only_where_it_covers_its_whole_reach() {
        let j = judge(&[]);
        let mut policy = (**j.policy()).clone();
        policy.rules = vec![crate::policy::rule(
            "shop.example.com",
            None,
            crate::policy::Verdict::Allow,
            "test",
        )];
        let j = Judge::new(std::rc::Rc::new(policy), j.category(), Vec::new());
        assert!(allowed(&j, "shop.example.com"));
        assert!(
            !allowed(&j, ".example.com"),
            "other sub-domains are not allowed"
        );
        assert!(
            !allowed(&j, ".shop.example.com"),
            "nor are its own sub-domains"
        );
    }
}
