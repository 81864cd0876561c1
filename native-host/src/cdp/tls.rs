//! TLS for `https://` and `wss://` DevTools endpoints (hosted browser pools): one rustls
//! client configuration, the system's trusted roots, used by the discovery GET and the
//! WebSocket alike.

use std::sync::Arc;

use rustls::pki_types::ServerName;
use rustls::ClientConfig;

/// A client configuration trusting the system's roots (`SSL_CERT_FILE` and `SSL_CERT_DIR`
/// are honoured, for a private CA). Built per connection: connections are rare.
pub fn client_config() -> Result<Arc<ClientConfig>, String> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = rustls::RootCertStore::empty();
    let (added, _) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        let why = found
            .errors
            .first()
            .map(|e| format!(": {e}"))
            .unwrap_or_default();
        return Err(format!(
            "no trusted root certificates were found on this system{why} (set SSL_CERT_FILE to a PEM bundle)"
        ));
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// Open a TLS stream over `tcp` to `host` (a DNS name or an IP address, as in the URL).
pub async fn connect(
    host: &str,
    tcp: tokio::net::TcpStream,
) -> Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>, String> {
    let name = ServerName::try_from(host.trim_matches(['[', ']']).to_string())
        .map_err(|e| format!("{host:?} cannot be checked against a certificate: {e}"))?;
    tokio_rustls::TlsConnector::from(client_config()?)
        .connect(name, tcp)
        .await
        .map_err(|e| format!("TLS: {e}"))
}
