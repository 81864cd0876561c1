//! The DevTools pipe of a browser kapture launches (`--remote-debugging-pipe`, unix only):
//! the browser reads CDP messages on its fd 3 and writes them on its fd 4, each one JSON text
//! ended by a NUL byte. [`open`] makes the two pipes; the launcher hands the browser its ends,
//! and [`OurEnds::transport`] turns kapture's into the connection's [`Transport`].
//!
//! Closing kapture's ends makes the browser exit (Chromium 156: within a second), so the
//! connection must live as long as the browser is wanted.

use std::os::fd::OwnedFd;

use futures::StreamExt;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::unix::pipe;
use tokio_tungstenite::tungstenite::Utf8Bytes;

use super::connection::{Frame, Transport, MAX_MESSAGE};

/// The browser's ends: it reads on `reads` (to become its fd 3), writes on `writes` (fd 4).
pub struct ChildEnds {
    pub reads: OwnedFd,
    pub writes: OwnedFd,
}

/// kapture's ends of the same pipes.
pub struct OurEnds {
    to_browser: OwnedFd,
    from_browser: OwnedFd,
}

/// Two fresh pipes (close-on-exec: only the mapped fds reach the browser).
pub fn open() -> std::io::Result<(ChildEnds, OurEnds)> {
    let (reads, to_browser) = cloexec_pipe()?;
    let (from_browser, writes) = cloexec_pipe()?;
    Ok((
        ChildEnds { reads, writes },
        OurEnds {
            to_browser,
            from_browser,
        },
    ))
}

/// A pipe whose ends no other child inherits: atomically where `pipe2` exists (another
/// thread may spawn a process meanwhile), else flagged right after (macOS).
fn cloexec_pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    #[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
    {
        Ok(nix::unistd::pipe2(nix::fcntl::OFlag::O_CLOEXEC)?)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
    {
        use nix::fcntl::{fcntl, FcntlArg, FdFlag};
        let (read, write) = nix::unistd::pipe()?;
        for fd in [&read, &write] {
            fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))?;
        }
        Ok((read, write))
    }
}

impl OurEnds {
    /// NUL-framed messages over the pipes (needs a tokio runtime).
    pub fn transport(self) -> std::io::Result<Transport> {
        let writer = pipe::Sender::from_owned_fd(self.to_browser)?;
        let reader = pipe::Receiver::from_owned_fd(self.from_browser)?;
        let incoming = futures::stream::unfold(
            Some(BufReader::with_capacity(1 << 16, reader)),
            |reader| async move {
                let mut reader = reader?;
                let mut message = Vec::new();
                // One byte over the cap tells a message that is too large from one that fits.
                let read = (&mut reader)
                    .take(MAX_MESSAGE as u64 + 1)
                    .read_until(0, &mut message)
                    .await;
                let frame = match read {
                    Ok(0) => return None,
                    Err(e) => Err(e.to_string()),
                    Ok(_) if message.last() == Some(&0) => {
                        message.pop();
                        Utf8Bytes::try_from(message)
                            .map(Frame::Text)
                            .map_err(|e| format!("a DevTools message that is not UTF-8: {e}"))
                    }
                    Ok(n) if n > MAX_MESSAGE => {
                        Err(format!("a DevTools message over {} MiB", MAX_MESSAGE >> 20))
                    }
                    Ok(_) => Err("the DevTools pipe ended inside a message".to_string()),
                };
                let next = frame.is_ok().then_some(reader);
                Some((frame, next))
            },
        )
        .boxed();
        let outgoing = futures::sink::unfold(writer, |mut writer, text: String| async move {
            let mut bytes = text.into_bytes();
            bytes.push(0);
            writer
                .write_all(&bytes)
                .await
                .map_err(|e| format!("writing to the DevTools pipe: {e}"))?;
            Ok::<_, String>(writer)
        });
        Ok(Transport {
            incoming,
            outgoing: Box::pin(outgoing),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::cdp::Browser;

    /// A call goes out NUL-ended on the browser's read end; the answer written back on its
    /// write end (split across writes, beside an event) comes back to the caller; the
    /// browser closing its end ends the connection.
    #[tokio::test]
    async fn messages_cross_the_pipe_nul_framed() {
        let (child, ours) = open().unwrap();
        let browser = Browser::over(ours.transport().unwrap());
        let mut events = browser.browser_events();
        let call = tokio::spawn({
            let b = browser.clone();
            async move { b.call(None, "Browser.getVersion", json!({})).await }
        });
        let mut reads = std::fs::File::from(child.reads);
        let sent = tokio::task::spawn_blocking(move || {
            let mut got = Vec::new();
            let mut byte = [0u8];
            while reads.read_exact(&mut byte).is_ok() && byte[0] != 0 {
                got.push(byte[0]);
            }
            (String::from_utf8(got).unwrap(), reads)
        });
        let (sent, _reads) = tokio::time::timeout(Duration::from_secs(5), sent)
            .await
            .unwrap()
            .unwrap();
        let sent: serde_json::Value = serde_json::from_str(&sent).unwrap();
        assert_eq!(sent["method"], "Browser.getVersion");
        let mut writes = std::fs::File::from(child.writes);
        let event = json!({"method": "Target.targetCreated", "params": {"n": 1}}).to_string();
        let answer = json!({"id": sent["id"], "result": {"product": "Chrome/156"}}).to_string();
        let all = format!("{event}\0{answer}\0");
        let (a, b) = all.as_bytes().split_at(all.len() / 2);
        writes.write_all(a).unwrap();
        writes.flush().unwrap();
        writes.write_all(b).unwrap();
        let answer = tokio::time::timeout(Duration::from_secs(5), call)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(answer["product"], "Chrome/156");
        let event = events.recv().await.unwrap();
        assert_eq!(event.method, "Target.targetCreated");
        drop(writes);
        tokio::time::timeout(Duration::from_secs(5), browser.closed())
            .await
            .expect("the connection ends with the pipe");
        let late = browser.call(None, "Browser.getVersion", json!({})).await;
        assert_eq!(
            late.unwrap_err().code,
            ext_core::protocol::ErrorCode::NoBrowser
        );
    }
}
