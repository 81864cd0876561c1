//! Who may open the bridge WebSocket: only our extension's exact Origin, addressed through a
//! loopback Host. Checked on the upgrade request, before any frame is read.

/// Why an upgrade request was refused (logged; the client just sees 403).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("no Origin header")]
    NoOrigin,
    #[error("foreign Origin {0:?}")]
    ForeignOrigin(String),
    #[error("missing or repeated Host header")]
    BadHostHeader,
    #[error("non-loopback Host {0:?}")]
    ForeignHost(String),
}

/// The Origin must be exactly `chrome-extension://<id>` (no path, no case games, no other
/// extension, no web page). A missing Origin is refused too: only a browser extension is a
/// legitimate client of this socket.
pub fn check_origin(origins: &[&str], allowed: &str) -> Result<(), Refusal> {
    match origins {
        [] => Err(Refusal::NoOrigin),
        [one] if *one == allowed => Ok(()),
        [one] => Err(Refusal::ForeignOrigin((*one).to_string())),
        _ => Err(Refusal::ForeignOrigin(origins.join(", "))),
    }
}

/// The Host must name a loopback address literally (`127.0.0.1`, `localhost`, `[::1]`),
/// with this server's port or none. Anything else is a DNS-rebinding attempt.
pub fn check_host(hosts: &[&str], port: u16) -> Result<(), Refusal> {
    let [host] = hosts else {
        return Err(Refusal::BadHostHeader);
    };
    let (name, host_port) = match host.rsplit_once(':') {
        Some((name, p)) if !name.is_empty() && !name.ends_with(':') => (name, Some(p)),
        _ => (*host, None),
    };
    let name_ok = matches!(name, "127.0.0.1" | "localhost" | "[::1]");
    let port_ok = match host_port {
        None => true,
        Some(p) => p.parse::<u16>().ok() == Some(port),
    };
    if name_ok && port_ok {
        Ok(())
    } else {
        Err(Refusal::ForeignHost((*host).to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OURS: &str = "chrome-extension://djjhjaffgifolhomiafbjplbhmfblamg";

    #[test]
    fn only_our_exact_origin_passes() {
        assert_eq!(check_origin(&[OURS], OURS), Ok(()));
        let refused = [
            "null",
            "http://evil.com",
            "https://127.0.0.1.evil.com",
            "http://127.0.0.1:9999",
            "chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "moz-extension://djjhjaffgifolhomiafbjplbhmfblamg",
            "CHROME-EXTENSION://djjhjaffgifolhomiafbjplbhmfblamg",
            "chrome-extension://djjhjaffgifolhomiafbjplbhmfblamg/x",
            "chrome-extension://djjhjaffgifolhomiafbjplbhmfblamg ",
            "",
        ];
        for origin in refused {
            assert!(
                check_origin(&[origin], OURS).is_err(),
                "{origin:?} accepted"
            );
        }
        assert_eq!(check_origin(&[], OURS), Err(Refusal::NoOrigin));
        assert!(check_origin(&[OURS, OURS], OURS).is_err());
    }

    #[test]
    fn only_loopback_hosts_pass() {
        for host in [
            "127.0.0.1:5000",
            "localhost:5000",
            "[::1]:5000",
            "127.0.0.1",
            "localhost",
        ] {
            assert_eq!(check_host(&[host], 5000), Ok(()), "{host}");
        }
        let refused = [
            "evil.com:5000",
            "evil.com",
            "127.0.0.1.nip.io:5000",
            "localhost.:5000",
            "[::ffff:7f00:1]:5000",
            "127.0.0.1:5001",
            "127.0.0.1:",
            "",
            "0.0.0.0:5000",
            "127.1:5000",
        ];
        for host in refused {
            assert!(check_host(&[host], 5000).is_err(), "{host:?} accepted");
        }
        assert_eq!(check_host(&[], 5000), Err(Refusal::BadHostHeader));
        assert_eq!(
            check_host(&["127.0.0.1:5000", "127.0.0.1:5000"], 5000),
            Err(Refusal::BadHostHeader)
        );
    }
}
