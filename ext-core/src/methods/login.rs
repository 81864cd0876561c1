//! Saved logins: a site's sign-in state (its cookies and its origin's localStorage) read
//! out of a tab for kapture to seal, and written back into a tab, replacing what was there.
//! The values travel only between the browser and kapture's secret store: no answer to an
//! agent carries them.

use super::*;

/// One cookie as a saved login keeps it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SavedCookie {
    pub name: String,
    pub value: String,
    /// As the browser gives it: `.example.com` for a domain cookie, `example.com` for a
    /// host-only one.
    pub domain: String,
    pub path: String,
    /// Seconds since the Unix epoch; `None` for a session cookie.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<f64>,
    #[serde(default)]
    pub http_only: bool,
    #[serde(default)]
    pub secure: bool,
    /// Strict, Lax or None, when the cookie says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_site: Option<String>,
}

/// A site's sign-in state: every cookie its page's host gets and its origin's localStorage.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoginState {
    /// The page it was read on: where a load goes when the tab is elsewhere.
    pub url: String,
    /// That page's origin, the only one whose storage it holds.
    pub origin: String,
    pub cookies: Vec<SavedCookie>,
    /// localStorage of `origin`, as `(key, value)` pairs.
    pub local_storage: Vec<(String, String)>,
}

impl LoginState {
    /// The host its cookies must belong to (the origin's), if the origin is one.
    pub fn host(&self) -> Option<String> {
        crate::policy::origin_of(&self.url)
            .filter(|o| o.to_string() == self.origin)
            .map(|o| o.host)
    }
}

/// Whether a cookie of `domain` (as the browser gives it) is sent to `host`.
pub fn cookie_reaches(domain: &str, host: &str) -> bool {
    match domain.strip_prefix('.') {
        Some(d) => host == d || host.ends_with(&format!(".{d}")),
        None => host == domain,
    }
}

/// Read the tab's page's sign-in state (for `browser_login_save`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoginRead {}
method!(LoginRead, "login.read", LoginFound, Some(Category::Storage));

/// What [`LoginRead`] found: the state, and how many cookies the rules kept out of it
/// (cookies also sent to an origin the agent may not touch).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoginFound {
    pub tab_id: TabId,
    pub state: LoginState,
    #[serde(default)]
    pub withheld: usize,
}

/// Replace the tab's sign-in state for the saved login's site with `state`: the host's
/// cookies and the origin's localStorage become exactly the saved ones, then the page
/// loads again under them (the saved page first, when the tab is elsewhere).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoginWrite {
    /// The login's name, for the answer.
    pub name: String,
    /// The saved state; under a secret's name, so it is masked wherever the arguments are
    /// shown again (an approval, the feed).
    pub secret: LoginState,
}
method!(
    LoginWrite,
    "login.write",
    Text,
    Some(Category::Storage),
    timeout = LONG_TIMEOUT_MS,
    destination = LoginWrite::destination_url,
);

impl LoginWrite {
    /// A load may open the saved page: judged as a navigation there.
    fn destination_url(&self) -> Option<(Category, &str)> {
        Some((Category::Navigate, self.secret.url.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cookie_reaches_its_host_and_a_domain_cookie_its_sub_domains() {
        assert!(cookie_reaches("127.0.0.1", "127.0.0.1"));
        assert!(!cookie_reaches("a.example", "b.a.example"));
        assert!(cookie_reaches(".a.example", "b.a.example"));
        assert!(cookie_reaches(".a.example", "a.example"));
        assert!(!cookie_reaches(".a.example", "xa.example"));
    }

    #[test]
    fn a_state_names_its_host_only_when_its_origin_is_its_pages() {
        let mut s = LoginState {
            url: "http://127.0.0.1:8000/app".into(),
            origin: "http://127.0.0.1:8000".into(),
            ..LoginState::default()
        };
        assert_eq!(s.host().as_deref(), Some("127.0.0.1"));
        s.origin = "http://127.0.0.1:9000".into();
        assert_eq!(s.host(), None, "an origin not its page's");
    }

    #[test]
    fn a_loaded_state_is_masked_wherever_its_arguments_are_shown() {
        let w = LoginWrite {
            name: "shop".into(),
            secret: LoginState {
                cookies: vec![SavedCookie {
                    name: "sid".into(),
                    value: "s3cr3t-session".into(),
                    ..SavedCookie::default()
                }],
                ..LoginState::default()
            },
        };
        let shown = crate::mask::mask_params(LoginWrite::NAME, &serde_json::to_value(&w).unwrap());
        assert!(!shown.to_string().contains("s3cr3t"), "{shown}");
        assert_eq!(shown["name"], "shop");
    }
}
