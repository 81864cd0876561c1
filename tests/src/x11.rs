//! A real X display for the tests that need the browser's own UI (the "is being debugged"
//! bar): an `Xvfb` server on a free display, screenshots of it read from `xwd`, and clicks
//! through `xdotool` — a person's mouse, on pixels they would see.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// An `Xvfb` server, stopped when dropped.
pub struct Display {
    child: Child,
    /// `:N`, for `DISPLAY`.
    pub name: String,
}

impl Display {
    /// Start `Xvfb` on a display number it picks itself (`-displayfd`), 1280×800.
    pub fn start() -> Result<Display, String> {
        let mut child = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "1280x800x24",
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start Xvfb (cargo make setup installs it): {e}"))?;
        let mut line = String::new();
        let stdout = child.stdout.take().ok_or("Xvfb has no stdout")?;
        BufReader::new(stdout)
            .read_line(&mut line)
            .map_err(|e| e.to_string())?;
        let number: u32 = line
            .trim()
            .parse()
            .map_err(|_| format!("Xvfb did not say its display: {line:?}"))?;
        Ok(Display {
            child,
            name: format!(":{number}"),
        })
    }

    /// The screen as RGB rows.
    pub fn screenshot(&self) -> Result<Image, String> {
        let out = Command::new("xwd")
            .args(["-root", "-silent", "-display", &self.name])
            .output()
            .map_err(|e| format!("cannot run xwd (cargo make setup installs it): {e}"))?;
        Image::from_xwd(&out.stdout)
    }

    /// Click at (x, y) with the left button.
    pub fn click(&self, x: u32, y: u32) -> Result<(), String> {
        let status = Command::new("xdotool")
            .args(["mousemove", &x.to_string(), &y.to_string(), "click", "1"])
            .env("DISPLAY", &self.name)
            .status()
            .map_err(|e| format!("cannot run xdotool (cargo make setup installs it): {e}"))?;
        status
            .success()
            .then_some(())
            .ok_or_else(|| format!("xdotool failed: {status}"))
    }
}

impl Drop for Display {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A screenshot: `width` × `height` pixels of (r, g, b).
pub struct Image {
    pub width: u32,
    pub height: u32,
    pixels: Vec<[u8; 3]>,
}

impl Image {
    /// Parse an XWD dump of a 24/32-bit TrueColor screen (what Xvfb gives).
    pub fn from_xwd(data: &[u8]) -> Result<Image, String> {
        let field = |i: usize| -> Result<u32, String> {
            data.get(i * 4..i * 4 + 4)
                .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
                .ok_or_else(|| "a truncated XWD header".to_string())
        };
        let (header, width, height) = (field(0)? as usize, field(4)?, field(5)?);
        let (byte_order, bpp, stride) = (field(7)?, field(11)?, field(12)? as usize);
        let ncolors = field(19)? as usize;
        if bpp != 32 {
            return Err(format!("{bpp} bits per pixel; only 32 is read"));
        }
        let start = header + ncolors * 12;
        let mut pixels = Vec::with_capacity((width * height) as usize);
        for y in 0..height as usize {
            for x in 0..width as usize {
                let at = start + y * stride + x * 4;
                let p = data.get(at..at + 4).ok_or("a truncated XWD image")?;
                // LSBFirst: B G R X; MSBFirst: X R G B.
                pixels.push(if byte_order == 0 {
                    [p[2], p[1], p[0]]
                } else {
                    [p[1], p[2], p[3]]
                });
            }
        }
        Ok(Image {
            width,
            height,
            pixels,
        })
    }

    pub fn pixel(&self, x: u32, y: u32) -> [u8; 3] {
        self.pixels[(y * self.width + x) as usize]
    }

    /// The centre of the pixels in `rows` that match `wanted`, if there are at least `min`
    /// of them.
    pub fn find(
        &self,
        rows: std::ops::Range<u32>,
        min: usize,
        wanted: impl Fn([u8; 3]) -> bool,
    ) -> Option<(u32, u32)> {
        let (mut n, mut sx, mut sy) = (0usize, 0u64, 0u64);
        for y in rows.start..rows.end.min(self.height) {
            for x in 0..self.width {
                if wanted(self.pixel(x, y)) {
                    n += 1;
                    sx += u64::from(x);
                    sy += u64::from(y);
                }
            }
        }
        (n >= min).then(|| ((sx / n as u64) as u32, (sy / n as u64) as u32))
    }
}

/// Write a Chromium launcher that drops `--silent-debugger-extension-api`, so the browser
/// shows the "is being debugged" bar as it does for a person.
pub fn chromium_with_debugging_bar(dir: &Path, chromium: &Path) -> std::path::PathBuf {
    let path = dir.join("chromium-with-bar");
    let script = format!(
        "#!/bin/bash\nargs=()\nfor a in \"$@\"; do [[ $a == --silent-debugger-extension-api ]] || args+=(\"$a\"); done\nexec {} \"${{args[@]}}\"\n",
        chromium.display()
    );
    std::fs::write(&path, script).expect("write the launcher");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
            .expect("make the launcher executable");
    }
    path
}
