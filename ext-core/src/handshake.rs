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

const PAIR_SERVER_LABEL: &[u8] = b"kapture-pair-server";
const PAIR_EXTENSION_LABEL: &[u8] = b"kapture-pair-extension";
const PAIR_SEAL_LABEL: &[u8] = b"kapture-pair-seal";

/// The letters of a pairing code: no 0/O, 1/I/L or U, so what a person reads they can type.
const CODE_ALPHABET: &[u8] = b"23456789ABCDEFGHJKMNPQRSTVWXYZ";
/// Letters of a pairing code's secret (30^8, about 39 bits: enough for a code that lives
/// minutes and voids itself after a few wrong tries).
pub const CODE_LETTERS: usize = 8;

/// A manual pairing code (`kapture pair`): the server's port and a one-time secret, shown as
/// `61822-ABCD-EFGH`. It stands in for the token in a pairing handshake (its own labels, so
/// a pairing proof never serves as a token proof) and seals the token the server sends back.
#[derive(Clone, PartialEq, Eq)]
pub struct PairingCode {
    pub port: u16,
    secret: String,
}

impl std::fmt::Debug for PairingCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PairingCode({}-<redacted>)", self.port)
    }
}

impl PairingCode {
    /// A fresh code for the server on `port`.
    pub fn generate(port: u16) -> Result<Self, RandomError> {
        let mut secret = String::with_capacity(CODE_LETTERS);
        while secret.len() < CODE_LETTERS {
            let mut byte = [0u8; 1];
            getrandom::fill(&mut byte).map_err(|e| RandomError(e.to_string()))?;
            // Rejection sampling: no letter more likely than another.
            let n = CODE_ALPHABET.len() as u8;
            if byte[0] < (u8::MAX / n) * n {
                secret.push(CODE_ALPHABET[(byte[0] % n) as usize] as char);
            }
        }
        Ok(Self { port, secret })
    }

    /// Read a code as a person typed it: case, spaces and dashes do not matter.
    pub fn parse(text: &str) -> Result<Self, String> {
        let bad = || {
            format!("a pairing code looks like 61822-ABCD-EFGH (the port, then {CODE_LETTERS} letters): run `kapture pair` to get one")
        };
        let text = text.trim();
        let (port, rest) = text.split_once('-').ok_or_else(bad)?;
        let port: u16 = port.trim().parse().map_err(|_| bad())?;
        let secret: String = rest
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '-')
            .map(|c| c.to_ascii_uppercase())
            .collect();
        if port == 0
            || secret.len() != CODE_LETTERS
            || !secret.bytes().all(|b| CODE_ALPHABET.contains(&b))
        {
            return Err(bad());
        }
        Ok(Self { port, secret })
    }

    /// As a person reads it: `61822-ABCD-EFGH`.
    pub fn shown(&self) -> String {
        let (a, b) = self.secret.split_at(CODE_LETTERS / 2);
        format!("{}-{a}-{b}", self.port)
    }

    /// The secret's letters, the key of the pairing handshake.
    pub fn secret(&self) -> &str {
        &self.secret
    }

    /// The server's proof of the code over both nonces.
    pub fn server_proof(&self, nonce_e: &str, nonce_s: &str) -> String {
        let mac = mac(&self.secret, PAIR_SERVER_LABEL, self.port, nonce_e, nonce_s);
        hex::encode(mac.finalize().into_bytes())
    }

    /// The extension's proof of the code.
    pub fn extension_proof(&self, nonce_s: &str, nonce_e: &str) -> String {
        let mac = mac(
            &self.secret,
            PAIR_EXTENSION_LABEL,
            self.port,
            nonce_s,
            nonce_e,
        );
        hex::encode(mac.finalize().into_bytes())
    }

    pub fn verify_server_proof(&self, nonce_e: &str, nonce_s: &str, proof: &str) -> bool {
        valid_nonce(nonce_s)
            && verify(
                mac(&self.secret, PAIR_SERVER_LABEL, self.port, nonce_e, nonce_s),
                proof,
            )
    }

    /// Constant time, like the token's.
    pub fn verify_extension_proof(&self, nonce_e: &str, nonce_s: &str, proof: &str) -> bool {
        valid_nonce(nonce_e)
            && verify(
                mac(
                    &self.secret,
                    PAIR_EXTENSION_LABEL,
                    self.port,
                    nonce_s,
                    nonce_e,
                ),
                proof,
            )
    }

    /// The token (64 hex digits) sealed for this handshake: XOR with a key only the code and
    /// both nonces give, so the token never crosses the socket in the clear.
    pub fn seal(&self, nonce_e: &str, nonce_s: &str, token: &str) -> Option<String> {
        self.xor(nonce_e, nonce_s, token)
    }

    /// The token from what [`Self::seal`] made.
    pub fn unseal(&self, nonce_e: &str, nonce_s: &str, sealed: &str) -> Option<String> {
        self.xor(nonce_e, nonce_s, sealed)
    }

    fn xor(&self, nonce_e: &str, nonce_s: &str, hex_in: &str) -> Option<String> {
        let bytes = hex::decode(hex_in).ok().filter(|b| b.len() == 32)?;
        let pad = mac(&self.secret, PAIR_SEAL_LABEL, self.port, nonce_e, nonce_s)
            .finalize()
            .into_bytes();
        let out: Vec<u8> = bytes.iter().zip(pad.iter()).map(|(a, b)| a ^ b).collect();
        Some(hex::encode(out))
    }
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

    #[test]
    fn a_pairing_code_reads_as_typed_proves_and_seals_only_with_itself() {
        let code = PairingCode::generate(61822).unwrap();
        let shown = code.shown();
        assert_eq!(PairingCode::parse(&shown).unwrap(), code);
        let sloppy = format!(" {} ", shown.to_lowercase().replacen('-', " - ", 2));
        assert_eq!(PairingCode::parse(&sloppy).unwrap(), code);
        for bad in [
            "",
            "61822",
            "x-ABCD-EFGH",
            "61822-ABCD",
            "61822-ABCD-EFG0",
            "0-ABCD-EFGH",
        ] {
            assert!(PairingCode::parse(bad).is_err(), "{bad:?}");
        }
        assert!(!format!("{code:?}").contains(code.secret()));
        let (ne, ns) = (new_nonce().unwrap(), new_nonce().unwrap());
        let other = PairingCode::generate(61822).unwrap();
        let ps = code.server_proof(&ne, &ns);
        assert!(code.verify_server_proof(&ne, &ns, &ps));
        assert!(!other.verify_server_proof(&ne, &ns, &ps));
        let pe = code.extension_proof(&ns, &ne);
        assert!(code.verify_extension_proof(&ne, &ns, &pe));
        assert!(!code.verify_extension_proof(&ne, &ns, &ps));
        // A pairing proof is never a token proof (other labels), even with the code as key.
        assert!(!verify_extension_proof(code.secret(), 61822, &ne, &ns, &pe));
        let sealed = code.seal(&ne, &ns, TOKEN).unwrap();
        assert_ne!(sealed, TOKEN);
        assert_eq!(code.unseal(&ne, &ns, &sealed).unwrap(), TOKEN);
        assert_ne!(other.unseal(&ne, &ns, &sealed).unwrap(), TOKEN);
    }

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
