//! A remote browser pool for the tests: browserless from npm (`tests/browserless`, installed
//! by `cargo make setup`) serving the system Chromium over CDP on 127.0.0.1, each WebSocket
//! connection a browser of its own.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::{chromium, eventually, QUIET_CHROMIUM_FLAGS, RESOLVER_RULES};

/// Where `cargo make setup` installs browserless.
pub fn pool_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("browserless")
}

/// A running browserless; stopped (with every browser it started) when dropped.
pub struct Pool {
    child: Child,
    port: u16,
    _browsers: tempfile::TempDir,
}

impl Pool {
    /// Start browserless on a port the OS picked, serving the system Chromium; answers once
    /// its HTTP API does.
    pub async fn start() -> Pool {
        let dir = pool_dir();
        assert!(
            dir.join("node_modules/@browserless.io/browserless")
                .is_dir(),
            "browserless is not installed in {}: run `cargo make setup`",
            dir.display()
        );
        // playwright-core names the Chromium it expects under PLAYWRIGHT_BROWSERS_PATH: the
        // system one is linked there.
        let browsers = tempfile::tempdir().unwrap();
        let expected = Command::new("node")
            .current_dir(&dir)
            .env("PLAYWRIGHT_BROWSERS_PATH", browsers.path())
            .args([
                "-e",
                "process.stdout.write(require('playwright-core').chromium.executablePath())",
            ])
            .output()
            .expect("node runs");
        assert!(expected.status.success(), "{expected:?}");
        let expected = PathBuf::from(String::from_utf8(expected.stdout).unwrap());
        std::fs::create_dir_all(expected.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(chromium(), &expected).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap();
        let child = Command::new("node")
            .current_dir(&dir)
            .arg("pool.mjs")
            .env("PLAYWRIGHT_BROWSERS_PATH", browsers.path())
            .env("PORT", port.to_string())
            .env("HOST", "127.0.0.1")
            .env("CONCURRENT", "8")
            .env("DEBUG", "-*")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            // Its own process group: dropping the pool stops its browsers too.
            .process_group(0)
            .spawn()
            .expect("start browserless");
        let pool = Pool {
            child,
            port,
            _browsers: browsers,
        };
        let version = format!("127.0.0.1:{port}");
        eventually("browserless answers", Duration::from_secs(60), || {
            let version = version.clone();
            async move {
                let mut s = tokio::net::TcpStream::connect(&version).await.ok()?;
                use tokio::io::{AsyncReadExt, AsyncWriteExt};
                s.write_all(b"GET /json/version HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n")
                    .await
                    .ok()?;
                let mut out = String::new();
                s.read_to_string(&mut out).await.ok()?;
                out.contains("webSocketDebuggerUrl").then_some(())
            }
        })
        .await;
        pool
    }

    /// `http://127.0.0.1:PORT`, its HTTP API.
    pub fn http(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The CDP WebSocket URL that starts a browser of its own per connection: headless,
    /// quiet, resolving nothing but loopback.
    pub fn browser_endpoint(&self) -> String {
        let mut args: Vec<&str> = QUIET_CHROMIUM_FLAGS.to_vec();
        args.push(RESOLVER_RULES);
        let launch = serde_json::json!({"headless": true, "args": args}).to_string();
        let launch: String = url::form_urlencoded::byte_serialize(launch.as_bytes()).collect();
        format!("ws://127.0.0.1:{}/chromium?launch={launch}", self.port)
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        // Its browsers run detached: browserless closes them on SIGTERM (bounded wait).
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            if !matches!(self.child.try_wait(), Ok(None)) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
