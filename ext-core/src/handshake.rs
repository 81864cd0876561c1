//! The bridge handshake's proofs: each side proves it holds the server's token without
//! sending it. HMAC-SHA256 keyed by the token over a label, the server's port and both
//! fresh nonces; the labels differ per side, so one side's proof never serves as the other's.
//!
//! ```text
//! extension → hello     {nonce_e}
//! server    → challenge {nonce_s, proof_s = HMAC(token, "kapture-server"    | port | nonce_e | nonce_s)}
//! extension → proof     {proof_e = HMAC(token, "kapture-extension" | port | nonce_s | nonce_e)}
//! server    → welcome
//! ```
//!
//! The extension checks `proof_s` before it answers, so a program that took a dead kapture's
//! port learns nothing it could use; the server checks `proof_e` before it dispatches
//! anything. The port binds a proof to the socket it was made for (no relaying to another
//! port).

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// A nonce on the wire: 32 random bytes in lower-case hex.
pub const NONCE_HEX_LEN: usize = 64;

const SERVER_LABEL: &[u8] = b"kapture-server";
const EXTENSION_LABEL: &[u8] = b"kapture-extension";

/// The random source failed (no nonce, so no handshake).
#[derive(Debug, thiserror::Error)]
#[error("the random source failed: {0}")]
pub struct RandomError(String);

/// A fresh nonce (32 bytes from the OS, or the browser's `crypto.getRandomValues`).
pub fn new_nonce() -> Result<String, RandomError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| RandomError(e.to_string()))?;
    Ok(hex::encode(bytes))
}

/// Is `nonce` shaped like one of ours (so a peer cannot pick an empty or huge one)?
pub fn valid_nonce(nonce: &str) -> bool {
    nonce.len() == NONCE_HEX_LEN
        && nonce
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn mac(token: &str, label: &[u8], port: u16, first: &str, second: &str) -> Hmac<Sha256> {
    // HMAC takes keys of any length; `new_from_slice` cannot fail for it.
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(token.as_bytes())
        .unwrap_or_else(|_| unreachable!("HMAC accepts every key length"));
    // Fields separated by a byte no field contains (nonces are hex), so no two inputs meet.
    for part in [
        label,
        &port.to_be_bytes(),
        first.as_bytes(),
        second.as_bytes(),
    ] {
        mac.update(part);
        mac.update(&[0]);
    }
    mac
}

/// The server's proof for the extension's nonce `nonce_e` and its own `nonce_s`.
pub fn server_proof(token: &str, port: u16, nonce_e: &str, nonce_s: &str) -> String {
    hex::encode(
        mac(token, SERVER_LABEL, port, nonce_e, nonce_s)
            .finalize()
            .into_bytes(),
    )
}

/// The extension's proof, answering the server's `nonce_s` to its own `nonce_e`.
pub fn extension_proof(token: &str, port: u16, nonce_s: &str, nonce_e: &str) -> String {
    hex::encode(
        mac(token, EXTENSION_LABEL, port, nonce_s, nonce_e)
            .finalize()
            .into_bytes(),
    )
}

/// Constant-time check of a proof in hex.
fn verify(mac: Hmac<Sha256>, proof: &str) -> bool {
    match hex::decode(proof) {
        Ok(bytes) => mac.verify_slice(&bytes).is_ok(),
        Err(_) => false,
    }
}

/// The extension checks the server's challenge (its own nonce first).
pub fn verify_server_proof(
    token: &str,
    port: u16,
    nonce_e: &str,
    nonce_s: &str,
    proof: &str,
) -> bool {
    valid_nonce(nonce_s) && verify(mac(token, SERVER_LABEL, port, nonce_e, nonce_s), proof)
}

/// The server checks the extension's answer to its challenge.
pub fn verify_extension_proof(
    token: &str,
    port: u16,
    nonce_e: &str,
    nonce_s: &str,
    proof: &str,
) -> bool {
    valid_nonce(nonce_e) && verify(mac(token, EXTENSION_LABEL, port, nonce_s, nonce_e), proof)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    #[test]
    fn nonces_are_fresh_and_well_formed() {
        let (a, b) = (new_nonce().unwrap(), new_nonce().unwrap());
        assert!(valid_nonce(&a) && valid_nonce(&b));
        assert_ne!(a, b);
        for bad in ["", "00", &"g".repeat(64), &"A".repeat(64), &"0".repeat(65)] {
            assert!(!valid_nonce(bad), "{bad:?}");
        }
    }

    #[test]
    fn both_proofs_verify_with_the_token_and_nothing_else() {
        let (ne, ns) = (new_nonce().unwrap(), new_nonce().unwrap());
        let ps = server_proof(TOKEN, 61822, &ne, &ns);
        let pe = extension_proof(TOKEN, 61822, &ns, &ne);
        assert!(verify_server_proof(TOKEN, 61822, &ne, &ns, &ps));
        assert!(verify_extension_proof(TOKEN, 61822, &ne, &ns, &pe));
        // A wrong token, another port, or one side's proof offered as the other's: refused.
        let wrong = TOKEN.replace('0', "1");
        assert!(!verify_server_proof(&wrong, 61822, &ne, &ns, &ps));
        assert!(!verify_extension_proof(&wrong, 61822, &ne, &ns, &pe));
        assert!(!verify_server_proof(TOKEN, 61823, &ne, &ns, &ps));
        assert!(!verify_server_proof(TOKEN, 61822, &ne, &ns, &pe));
        assert!(!verify_extension_proof(TOKEN, 61822, &ne, &ns, &ps));
        // What a stranger without the token can make up.
        let forged = server_proof(&wrong, 61822, &ne, &ns);
        assert!(!verify_server_proof(TOKEN, 61822, &ne, &ns, &forged));
        for garbage in ["", "zz", &ps[..62], &format!("{ps}00"), TOKEN] {
            assert!(!verify_server_proof(TOKEN, 61822, &ne, &ns, garbage));
        }
    }

    #[test]
    fn a_replayed_challenge_fails_against_a_fresh_nonce() {
        // A stranger recorded a real server's challenge for an earlier hello…
        let (old_ne, ns) = (new_nonce().unwrap(), new_nonce().unwrap());
        let recorded = server_proof(TOKEN, 61822, &old_ne, &ns);
        // …and plays it back to the next hello, which carries a new nonce.
        let new_ne = new_nonce().unwrap();
        assert!(!verify_server_proof(TOKEN, 61822, &new_ne, &ns, &recorded));
        // Likewise an extension's recorded proof does not answer a new challenge.
        let answered = extension_proof(TOKEN, 61822, &ns, &old_ne);
        let new_ns = new_nonce().unwrap();
        assert!(!verify_extension_proof(
            TOKEN, 61822, &old_ne, &new_ns, &answered
        ));
        // A malformed nonce is refused even with a matching proof.
        let p = server_proof(TOKEN, 1, &old_ne, "x");
        assert!(!verify_server_proof(TOKEN, 1, &old_ne, "x", &p));
    }

    #[test]
    fn the_proof_never_contains_the_token() {
        let (ne, ns) = (new_nonce().unwrap(), new_nonce().unwrap());
        let p = server_proof(TOKEN, 1, &ne, &ns);
        assert!(!p.contains(TOKEN) && p.len() == 64);
    }
}
