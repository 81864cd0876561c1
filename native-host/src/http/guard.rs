//! Who may use kapture's HTTP port (pure): which address it may listen on, which Host and
//! Origin a request may carry (DNS rebinding, cross-site pages), and the bearer token.
//!
//! The lessons of 2025's MCP CVEs: the Inspector's proxy (CVE-2025-49596) ran for any page
//! that could reach it, without a token; the TypeScript SDK (CVE-2025-66414) left Host and
//! Origin unchecked unless asked, and an empty allowlist let everything in. Here every check
//! is on, with no allowlist to leave empty: the Host must name this very port through an
//! address literal (a rebinding page's Host is its own domain name), a present Origin must
//! be this server's own (`null` included in the refused), and the token is still required.

use std::net::{IpAddr, SocketAddr};

/// Why a request was refused before anything ran (logged; the client sees the status).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("missing or repeated Host header")]
    BadHostHeader,
    #[error("Host {0:?} is not this server's address (DNS rebinding?)")]
    ForeignHost(String),
    #[error("repeated Origin header")]
    BadOriginHeader,
    #[error("Origin {0:?} is not this server's own page")]
    ForeignOrigin(String),
}

/// Where kapture may listen: loopback, or anywhere the person said `--http-allow-remote` for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BindRefusal {
    #[error("--http wants ADDRESS:PORT, e.g. 127.0.0.1:8931 (PORT 0: any free port); got {0:?}")]
    Malformed(String),
    #[error("refusing to serve MCP on {0}, which is not a loopback address: whoever reaches it could drive this browser (with the token). Use 127.0.0.1:PORT, or pass --http-allow-remote if that is what you want")]
    NotLoopback(SocketAddr),
}

/// `--http` as given: `IP:PORT`, `[IPv6]:PORT` or `localhost:PORT` (→ 127.0.0.1).
pub fn parse_bind(text: &str, allow_remote: bool) -> Result<SocketAddr, BindRefusal> {
    let addr = match text.strip_prefix("localhost:") {
        Some(port) => port
            .parse::<u16>()
            .map(|p| SocketAddr::from(([127, 0, 0, 1], p)))
            .map_err(|_| BindRefusal::Malformed(text.into()))?,
        None => text
            .parse::<SocketAddr>()
            .map_err(|_| BindRefusal::Malformed(text.into()))?,
    };
    if addr.ip().is_loopback() || allow_remote {
        Ok(addr)
    } else {
        Err(BindRefusal::NotLoopback(addr))
    }
}

/// The authorities requests may name, fixed once the port is known.
#[derive(Debug, Clone)]
pub struct Authorities {
    port: u16,
    /// Bound to loopback: only the loopback names. Bound elsewhere (`--http-allow-remote`):
    /// any IP literal too, never a DNS name (a rebinding page's Host is its domain).
    remote: bool,
    /// `127.0.0.1` and `[::1]` name this server only when it listens there: `[::1]` on a
    /// machine without IPv6 loopback is no name of ours.
    v4: bool,
    v6: bool,
}

impl Authorities {
    /// One listening address.
    pub fn new(bound: SocketAddr) -> Self {
        Self::serving(&[bound])
    }

    /// The addresses listened on (one port; the first is the one asked for).
    pub fn serving(bound: &[SocketAddr]) -> Self {
        Self {
            port: bound.first().map_or(0, SocketAddr::port),
            remote: bound.iter().any(|a| !a.ip().is_loopback()),
            v4: bound.iter().any(SocketAddr::is_ipv4),
            v6: bound.iter().any(SocketAddr::is_ipv6),
        }
    }

    /// `name:port` with this port (the port is required: a Host without one means 80).
    fn accepts(&self, authority: &str) -> bool {
        let Some((name, port)) = authority.rsplit_once(':') else {
            return false;
        };
        if port.parse::<u16>().ok() != Some(self.port) || port.starts_with('+') {
            return false;
        }
        let name = name.to_ascii_lowercase();
        match name.as_str() {
            "localhost" => return true,
            "127.0.0.1" if self.v4 => return true,
            "[::1]" if self.v6 => return true,
            _ => {}
        }
        if !self.remote {
            return false;
        }
        // An IP literal, written the one canonical way (no `0x7f.1`, no `127.1`).
        let literal = name
            .strip_prefix('[')
            .and_then(|n| n.strip_suffix(']'))
            .unwrap_or(&name);
        match literal.parse::<IpAddr>() {
            Ok(IpAddr::V4(ip)) => name == ip.to_string(),
            Ok(IpAddr::V6(ip)) => name.starts_with('[') && literal == ip.to_string(),
            Err(_) => false,
        }
    }

    /// The Host header: exactly one, naming this server.
    pub fn check_host(&self, hosts: &[&str]) -> Result<(), Refusal> {
        match hosts {
            [one] if self.accepts(one) => Ok(()),
            [one] => Err(Refusal::ForeignHost((*one).to_string())),
            _ => Err(Refusal::BadHostHeader),
        }
    }

    /// The Origin header: absent (a program, not a page), or `http://` + an authority this
    /// server answers to. `null` (sandboxed frames, file pages, some redirects) is refused.
    pub fn check_origin(&self, origins: &[&str]) -> Result<(), Refusal> {
        match origins {
            [] => Ok(()),
            [one] => match one.strip_prefix("http://") {
                Some(authority) if self.accepts(authority) => Ok(()),
                _ => Err(Refusal::ForeignOrigin((*one).to_string())),
            },
            _ => Err(Refusal::BadOriginHeader),
        }
    }

    pub fn port(&self) -> u16 {
        self.port
    }
}

/// The token a request shows: `Authorization: Bearer T`, else (`query_allowed`, on /mcp
/// only, for clients that cannot set a header) a `token=T` query parameter.
pub fn presented_token<'a>(
    authorization: &[&'a str],
    query: Option<&'a str>,
    query_allowed: bool,
) -> Option<&'a str> {
    if let [one] = authorization {
        let (scheme, value) = one.split_once(' ')?;
        return scheme
            .eq_ignore_ascii_case("bearer")
            .then(|| value.trim())
            .filter(|v| !v.is_empty());
    }
    if !authorization.is_empty() || !query_allowed {
        return None;
    }
    query?
        .split('&')
        .find_map(|pair| pair.strip_prefix("token="))
        .filter(|v| !v.is_empty())
}

/// Constant-time comparison of the presented token with the boot's.
pub fn token_matches(presented: Option<&str>, expected: &str) -> bool {
    use subtle::ConstantTimeEq;
    presented.is_some_and(|p| {
        p.len() == expected.len() && bool::from(p.as_bytes().ct_eq(expected.as_bytes()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both loopbacks held, as `bind` leaves a machine with IPv6.
    fn local() -> Authorities {
        Authorities::serving(&[
            "127.0.0.1:5000".parse().unwrap(),
            "[::1]:5000".parse().unwrap(),
        ])
    }

    #[test]
    fn a_loopback_not_listened_on_is_no_name_of_ours() {
        // No IPv6 loopback on the machine: only 127.0.0.1 held.
        let v4 = Authorities::new("127.0.0.1:5000".parse().unwrap());
        assert_eq!(v4.check_host(&["127.0.0.1:5000"]), Ok(()));
        assert_eq!(v4.check_host(&["localhost:5000"]), Ok(()));
        assert!(v4.check_host(&["[::1]:5000"]).is_err());
        assert!(v4.check_origin(&["http://[::1]:5000"]).is_err());
        let v6 = Authorities::new("[::1]:5000".parse().unwrap());
        assert_eq!(v6.check_host(&["[::1]:5000"]), Ok(()));
        assert!(v6.check_host(&["127.0.0.1:5000"]).is_err());
    }

    #[test]
    fn binds_loopback_unless_remote_is_wanted() {
        assert_eq!(
            parse_bind("127.0.0.1:0", false),
            Ok("127.0.0.1:0".parse().unwrap())
        );
        assert_eq!(
            parse_bind("localhost:8931", false),
            Ok("127.0.0.1:8931".parse().unwrap())
        );
        assert_eq!(parse_bind("[::1]:9", false), Ok("[::1]:9".parse().unwrap()));
        assert!(matches!(
            parse_bind("0.0.0.0:8931", false),
            Err(BindRefusal::NotLoopback(_))
        ));
        assert!(matches!(
            parse_bind("192.168.1.5:80", false),
            Err(BindRefusal::NotLoopback(_))
        ));
        assert!(parse_bind("0.0.0.0:8931", true).is_ok());
        for bad in ["8931", "example.com:80", "127.0.0.1", "127.0.0.1:99999", ""] {
            assert!(
                matches!(parse_bind(bad, true), Err(BindRefusal::Malformed(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn only_this_ports_loopback_hosts_pass() {
        let a = local();
        for host in [
            "127.0.0.1:5000",
            "localhost:5000",
            "[::1]:5000",
            "LOCALHOST:5000",
        ] {
            assert_eq!(a.check_host(&[host]), Ok(()), "{host}");
        }
        for host in [
            "evil.example:5000",
            "127.0.0.1.nip.io:5000",
            "localhost.:5000",
            "127.0.0.1",
            "localhost",
            "127.0.0.1:5001",
            "127.0.0.1:+5000",
            "0.0.0.0:5000",
            "127.1:5000",
            "[::ffff:7f00:1]:5000",
            "192.168.1.5:5000",
            "",
        ] {
            assert!(a.check_host(&[host]).is_err(), "{host:?} accepted");
        }
        assert_eq!(a.check_host(&[]), Err(Refusal::BadHostHeader));
        assert_eq!(
            a.check_host(&["127.0.0.1:5000", "127.0.0.1:5000"]),
            Err(Refusal::BadHostHeader)
        );
    }

    #[test]
    fn remote_binding_takes_ip_literals_never_names() {
        let a = Authorities::new("0.0.0.0:5000".parse().unwrap());
        for host in ["192.168.1.5:5000", "127.0.0.1:5000", "[fe80::1]:5000"] {
            assert_eq!(a.check_host(&[host]), Ok(()), "{host}");
        }
        for host in [
            "evil.example:5000",
            "192.168.1.5:5001",
            "0x7f.1:5000",
            "fe80::1:5000",
        ] {
            assert!(a.check_host(&[host]).is_err(), "{host:?} accepted");
        }
    }

    #[test]
    fn only_our_own_page_is_an_origin() {
        let a = local();
        assert_eq!(a.check_origin(&[]), Ok(()));
        for origin in [
            "http://127.0.0.1:5000",
            "http://localhost:5000",
            "http://[::1]:5000",
        ] {
            assert_eq!(a.check_origin(&[origin]), Ok(()), "{origin}");
        }
        for origin in [
            "null",
            "https://evil.example",
            "http://evil.example:5000",
            "https://127.0.0.1:5000",
            "http://127.0.0.1:5001",
            "http://127.0.0.1",
            "http://127.0.0.1:5000/",
            "http://127.0.0.1.nip.io:5000",
            "chrome-extension://djjhjaffgifolhomiafbjplbhmfblamg",
            "",
        ] {
            assert!(a.check_origin(&[origin]).is_err(), "{origin:?} accepted");
        }
        assert_eq!(
            a.check_origin(&["http://127.0.0.1:5000", "null"]),
            Err(Refusal::BadOriginHeader)
        );
    }

    #[test]
    fn the_token_comes_from_the_header_else_the_query_where_allowed() {
        assert_eq!(presented_token(&["Bearer abc"], None, false), Some("abc"));
        assert_eq!(presented_token(&["bearer abc"], None, false), Some("abc"));
        assert_eq!(presented_token(&["Basic abc"], Some("token=x"), true), None);
        assert_eq!(presented_token(&["Bearer "], None, true), None);
        assert_eq!(
            presented_token(&[], Some("a=1&token=xyz"), true),
            Some("xyz")
        );
        assert_eq!(presented_token(&[], Some("token=xyz"), false), None);
        assert_eq!(presented_token(&[], Some("token="), true), None);
        assert_eq!(presented_token(&["Bearer a", "Bearer b"], None, true), None);
        assert!(token_matches(Some("abc"), "abc"));
        assert!(!token_matches(Some("abd"), "abc"));
        assert!(!token_matches(Some("ab"), "abc"));
        assert!(!token_matches(None, "abc"));
    }
}
