//! MCP's stdio, hardened in front of rmcp: lines are read with a length cap (an oversized
//! one is skipped, not buffered), and a line that is not JSON (garbage, invalid UTF-8, nesting
//! deeper than the parser allows) is answered with JSON-RPC's parse error (-32700, id null)
//! instead of silence. Everything else goes to rmcp unchanged; its answers and ours share
//! stdout line by line.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// The longest line accepted (rmcp's own limit is the same).
pub const MAX_LINE: usize = 16 << 20;
/// Buffer between the filter and rmcp.
const PIPE: usize = 1 << 16;

/// What to do with one line from the client.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Hand it to rmcp.
    Pass,
    /// Nothing to do (an empty line).
    Skip,
    /// Answer this JSON-RPC error and drop the line.
    Reply(String),
}

fn error(code: i64, message: &str) -> String {
    serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}})
        .to_string()
}

/// Judge one complete line (without its newline). `too_long` marks a line cut at the cap.
pub fn judge(line: &[u8], too_long: bool) -> Verdict {
    if too_long {
        return Verdict::Reply(error(
            -32600,
            &format!("Invalid Request: a message longer than {MAX_LINE} bytes was dropped"),
        ));
    }
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Skip;
    }
    let Ok(text) = std::str::from_utf8(line) else {
        return Verdict::Reply(error(-32700, "Parse error: the message is not UTF-8"));
    };
    match serde_json::from_str::<serde::de::IgnoredAny>(text) {
        Ok(_) => Verdict::Pass,
        Err(e) => Verdict::Reply(error(-32700, &format!("Parse error: {e}"))),
    }
}

/// Read `input` line by line (each at most `MAX_LINE`), hand the good ones to `to_rmcp`,
/// and the answers for the bad ones to `replies`. Ends at end of input.
async fn filter(
    input: impl AsyncRead + Unpin,
    mut to_rmcp: DuplexStream,
    replies: mpsc::Sender<String>,
) {
    let mut reader = BufReader::with_capacity(1 << 16, input);
    let mut line: Vec<u8> = Vec::new();
    let mut too_long = false;
    loop {
        let (done, used, ended) = {
            let buf = match reader.fill_buf().await {
                Ok(b) => b,
                Err(_) => break,
            };
            if buf.is_empty() {
                (false, 0, true)
            } else {
                match buf.iter().position(|b| *b == b'\n') {
                    Some(at) => {
                        if !too_long && line.len() + at <= MAX_LINE {
                            line.extend_from_slice(&buf[..at]);
                        } else {
                            too_long = true;
                        }
                        (true, at + 1, false)
                    }
                    None => {
                        if !too_long && line.len() + buf.len() <= MAX_LINE {
                            line.extend_from_slice(buf);
                        } else {
                            // Past the cap: keep nothing more of this line.
                            too_long = true;
                            line.clear();
                        }
                        (false, buf.len(), false)
                    }
                }
            }
        };
        reader.consume(used);
        if ended {
            break;
        }
        if !done {
            continue;
        }
        match judge(&line, too_long) {
            Verdict::Pass => {
                line.push(b'\n');
                if to_rmcp.write_all(&line).await.is_err() {
                    break;
                }
            }
            Verdict::Skip => {}
            Verdict::Reply(answer) => {
                if replies.send(answer).await.is_err() {
                    break;
                }
            }
        }
        line.clear();
        too_long = false;
    }
    // End of input: rmcp sees it too and shuts down.
    let _ = to_rmcp.shutdown().await;
}

/// Write rmcp's lines and our replies to `output`, one whole line at a time.
async fn merge(
    from_rmcp: DuplexStream,
    mut replies: mpsc::Receiver<String>,
    mut output: impl AsyncWrite + Unpin,
) {
    let mut lines = BufReader::new(from_rmcp).lines();
    let mut rmcp_open = true;
    loop {
        let line = tokio::select! {
            l = lines.next_line(), if rmcp_open => match l {
                Ok(Some(l)) => l,
                _ => { rmcp_open = false; continue; }
            },
            r = replies.recv() => match r {
                Some(r) => r,
                None if rmcp_open => continue,
                None => break,
            },
            else => break,
        };
        if output.write_all(line.as_bytes()).await.is_err()
            || output.write_all(b"\n").await.is_err()
            || output.flush().await.is_err()
        {
            break;
        }
        if !rmcp_open && replies.is_closed() && replies.is_empty() {
            break;
        }
    }
}

/// The transport rmcp serves on: the process's stdin and stdout behind the filter.
pub fn transport() -> (DuplexStream, DuplexStream) {
    wrap(tokio::io::stdin(), tokio::io::stdout())
}

/// The same over any input and output (tests).
pub fn wrap(
    input: impl AsyncRead + Unpin + Send + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
) -> (DuplexStream, DuplexStream) {
    let (to_rmcp, rmcp_reads) = tokio::io::duplex(PIPE);
    let (rmcp_writes, from_rmcp) = tokio::io::duplex(PIPE);
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(filter(input, to_rmcp, tx));
    tokio::spawn(merge(from_rmcp, rx, output));
    (rmcp_reads, rmcp_writes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_lines_get_a_parse_error_and_good_ones_pass() {
        assert_eq!(
            judge(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, false),
            Verdict::Pass
        );
        assert_eq!(judge(b"  \t", false), Verdict::Skip);
        for bad in [&b"not json"[..], b"{\"a\":\xff}", b"{\"a\": 1"] {
            match judge(bad, false) {
                Verdict::Reply(r) => {
                    let v: serde_json::Value = serde_json::from_str(&r).unwrap();
                    assert_eq!(v["error"]["code"], -32700, "{r}");
                    assert!(v["id"].is_null());
                }
                other => panic!("{other:?}"),
            }
        }
        let deep = "[".repeat(100_000);
        assert!(matches!(judge(deep.as_bytes(), false), Verdict::Reply(r) if r.contains("-32700")));
        assert!(matches!(judge(b"{}", true), Verdict::Reply(r) if r.contains("-32600")));
    }

    #[tokio::test]
    async fn lines_flow_through_and_an_oversized_one_is_dropped_with_bounded_memory() {
        let (mut client, server_side) = tokio::io::duplex(1 << 16);
        let (out_w, out_r) = tokio::io::duplex(1 << 16);
        let (server_in, server_out) = tokio::io::split(server_side);
        let (mut rmcp_in, mut rmcp_out) = wrap(server_in, out_w);
        // The "rmcp" side echoes what it reads.
        tokio::spawn(async move {
            let mut lines = BufReader::new(&mut rmcp_in).lines();
            while let Ok(Some(l)) = lines.next_line().await {
                rmcp_out
                    .write_all(format!("{l}\n").as_bytes())
                    .await
                    .unwrap();
            }
        });
        drop(server_out);
        let writer = tokio::spawn(async move {
            client.write_all(b"{\"id\":1}\n").await.unwrap();
            let chunk = vec![b'x'; 1 << 20];
            for _ in 0..(MAX_LINE / chunk.len() + 2) {
                client.write_all(&chunk).await.unwrap();
            }
            client.write_all(b"\n garbage\n{\"id\":2}\n").await.unwrap();
            client.shutdown().await.unwrap();
        });
        let mut lines = BufReader::new(out_r).lines();
        let mut got = Vec::new();
        while let Ok(Ok(Some(l))) =
            tokio::time::timeout(std::time::Duration::from_secs(10), lines.next_line()).await
        {
            got.push(l);
            if got.len() == 4 {
                break;
            }
        }
        writer.await.unwrap();
        assert_eq!(got.len(), 4, "{got:?}");
        assert!(got.contains(&"{\"id\":1}".to_string()) && got.contains(&"{\"id\":2}".to_string()));
        assert!(got.iter().any(|l| l.contains("-32600")), "{got:?}");
        assert!(got.iter().any(|l| l.contains("-32700")), "{got:?}");
    }
}
