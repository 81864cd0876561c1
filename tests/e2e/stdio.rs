//! MCP over stdio against the real binary, no browser needed: bad input gets JSON-RPC's
//! answers (parse error for garbage, invalid UTF-8 and deep nesting; invalid request for an
//! oversized line or a batch; method not found), the process stays alive with bounded
//! memory, and the end of stdin ends it within 2 s.

use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

async fn next(lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>) -> Value {
    let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .expect("an answer within 10 s")
        .expect("stdout readable")
        .expect("a line");
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_on_stdin_is_answered_and_survived() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(kapture_e2e::kapture_bin())
        .args([
            "--browser",
            "connect",
            "--port",
            "0",
            "--browser-wait-ms",
            "100",
        ])
        .arg("--runtime-dir")
        .arg(dir.path().join("run"))
        .arg("--audit-dir")
        .arg(dir.path().join("audit"))
        .arg("--data-dir")
        .arg(dir.path().join("data"))
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"0\"}}}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n")
        .await
        .unwrap();
    assert_eq!(next(&mut lines).await["id"], 1);

    let deep = "[".repeat(100_000);
    for (bad, code) in [
        (&b"this is not json"[..], -32700),
        (
            &b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"\xff}"[..],
            -32700,
        ),
        (deep.as_bytes(), -32700),
        (
            &b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"no/such\"}"[..],
            -32601,
        ),
        (
            &b"[{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}]"[..],
            -32600,
        ),
    ] {
        stdin.write_all(bad).await.unwrap();
        stdin.write_all(b"\n").await.unwrap();
        let answer = next(&mut lines).await;
        assert_eq!(answer["error"]["code"], code, "{answer}");
    }
    // A line far past the cap is dropped as it streams, not kept.
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..24 {
        stdin.write_all(&chunk).await.unwrap();
    }
    stdin.write_all(b"\n").await.unwrap();
    let answer = next(&mut lines).await;
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    let pid = child.id().unwrap();
    let peak_kib: u64 = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap();
    assert!(
        peak_kib < 64 * 1024,
        "peak RSS {peak_kib} KiB after a 24 MiB line"
    );

    // Still serving.
    stdin
        .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"ping\"}\n")
        .await
        .unwrap();
    assert_eq!(next(&mut lines).await["id"], 42);

    // End of input: gone within 2 s.
    drop(stdin);
    let started = Instant::now();
    let status = tokio::time::timeout(Duration::from_secs(2), child.wait())
        .await
        .expect("kapture exits within 2 s of stdin's end")
        .unwrap();
    assert!(status.success(), "{status:?} after {:?}", started.elapsed());
}
