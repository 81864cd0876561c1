//! The native-messaging face: Chrome starts `kapture chrome-extension://<id>/`, sends one
//! length-prefixed JSON request, and reads one answer: the live servers and their tokens.

use std::io::{Read, Write};
use std::path::Path;

use ext_core::protocol::{Discovered, NativeRequest, PROTOCOL_VERSION};

/// Requests are tiny; anything larger is not from our extension.
const MAX_REQUEST: u32 = 64 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum NativeMessagingError {
    #[error("native messaging I/O: {0}")]
    Io(#[from] std::io::Error),
    #[error("request of {0} bytes is too large")]
    TooLarge(u32),
    #[error("request is not a known message: {0}")]
    Malformed(String),
    #[error("called by {0}, which is not the Kapture extension")]
    ForeignCaller(String),
}

/// Does `arg` look like the caller origin Chrome passes to a native host?
pub fn is_native_messaging_call(arg: &str) -> bool {
    arg.starts_with("chrome-extension://")
}

/// Read one message: 32-bit length in native byte order, then that many bytes of JSON.
pub fn read_message(input: &mut impl Read) -> Result<Option<Vec<u8>>, NativeMessagingError> {
    let mut len = [0u8; 4];
    match input.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e.into()),
    }
    let len = u32::from_ne_bytes(len);
    if len > MAX_REQUEST {
        return Err(NativeMessagingError::TooLarge(len));
    }
    let mut body = vec![0u8; len as usize];
    input.read_exact(&mut body)?;
    Ok(Some(body))
}

pub fn write_message(output: &mut impl Write, body: &[u8]) -> Result<(), NativeMessagingError> {
    let len = u32::try_from(body.len()).map_err(|_| NativeMessagingError::TooLarge(u32::MAX))?;
    output.write_all(&len.to_ne_bytes())?;
    output.write_all(body)?;
    output.flush()?;
    Ok(())
}

/// Set by the launcher on the browser it starts (and so inherited by this host): the pid
/// of that kapture, which the extension repeats in `hello` to get the launched policy.
pub const LAUNCHED_BY_ENV: &str = "KAPTURE_LAUNCHED_BY";

/// The launching kapture's pid, when this host runs inside a browser kapture started.
pub fn launched_by_from_env() -> Option<u32> {
    std::env::var(LAUNCHED_BY_ENV).ok()?.parse().ok()
}

/// Which run of the browser started this host: the browser launches native hosts itself, so
/// it is our parent; its pid and start time (on Linux, from `/proc`) name that run.
pub fn browser_run() -> Option<String> {
    #[cfg(unix)]
    {
        let parent = std::os::unix::process::parent_id();
        let stat = std::fs::read_to_string(format!("/proc/{parent}/stat")).ok();
        // Field 22 (start time), counted after the parenthesised command name.
        let started = stat.as_deref().and_then(|s| {
            s.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(19))
                .map(str::to_string)
        });
        Some(match started {
            Some(t) => format!("{parent}@{t}"),
            None => parent.to_string(),
        })
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Answer the extension's requests until it closes the pipe.
pub fn serve(
    caller: &str,
    extension_id: &str,
    runtime_dir: &Path,
    (launched_by, browser_run): (Option<u32>, Option<String>),
    input: &mut impl Read,
    output: &mut impl Write,
) -> Result<(), NativeMessagingError> {
    if caller.trim_end_matches('/') != format!("chrome-extension://{extension_id}") {
        return Err(NativeMessagingError::ForeignCaller(caller.to_string()));
    }
    while let Some(body) = read_message(input)? {
        let request: NativeRequest = serde_json::from_slice(&body)
            .map_err(|e| NativeMessagingError::Malformed(e.to_string()))?;
        let answer = match request {
            NativeRequest::Discover => Discovered {
                v: PROTOCOL_VERSION,
                servers: crate::pairing::live_servers(runtime_dir),
                launched_by,
                browser_run: browser_run.clone(),
            },
        };
        write_message(output, &serde_json::to_vec(&answer).unwrap_or_default())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pairing::{HandshakeFile, Token};
    use std::os::unix::fs::PermissionsExt;

    fn framed(json: &str) -> Vec<u8> {
        let mut v = (json.len() as u32).to_ne_bytes().to_vec();
        v.extend_from_slice(json.as_bytes());
        v
    }

    #[test]
    fn discover_answers_with_live_servers() {
        let dir = tempfile::Builder::new()
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()
            .unwrap();
        let token = Token::generate().unwrap();
        let _file = HandshakeFile::create(dir.path(), 5555, &token).unwrap();
        let mut input = std::io::Cursor::new(framed(r#"{"type":"discover"}"#));
        let mut output = Vec::new();
        serve(
            "chrome-extension://abc/",
            "abc",
            dir.path(),
            (Some(42), Some("7@99".into())),
            &mut input,
            &mut output,
        )
        .unwrap();
        let answer = read_message(&mut std::io::Cursor::new(output))
            .unwrap()
            .unwrap();
        let found: Discovered = serde_json::from_slice(&answer).unwrap();
        assert_eq!(found.servers.len(), 1);
        assert_eq!(found.servers[0].port, 5555);
        assert_eq!(found.launched_by, Some(42));
        assert_eq!(found.browser_run.as_deref(), Some("7@99"));
        assert_eq!(found.servers[0].token, token.expose());
    }

    #[test]
    fn other_callers_and_garbage_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut out = Vec::new();
        let err = serve(
            "chrome-extension://evil/",
            "abc",
            dir.path(),
            (None, None),
            &mut std::io::Cursor::new(framed("{}")),
            &mut out,
        );
        assert!(matches!(err, Err(NativeMessagingError::ForeignCaller(_))));
        let err = serve(
            "chrome-extension://abc/",
            "abc",
            dir.path(),
            (None, None),
            &mut std::io::Cursor::new(framed("{\"type\":\"x\"}")),
            &mut out,
        );
        assert!(matches!(err, Err(NativeMessagingError::Malformed(_))));
        let huge = (MAX_REQUEST + 1).to_ne_bytes().to_vec();
        let err = serve(
            "chrome-extension://abc/",
            "abc",
            dir.path(),
            (None, None),
            &mut std::io::Cursor::new(huge),
            &mut out,
        );
        assert!(matches!(err, Err(NativeMessagingError::TooLarge(_))));
        assert!(out.is_empty());
    }
}
