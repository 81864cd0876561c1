//! Embeds the assembled extension (target/extension, tools.json aside) into kapture, so the
//! binary alone can write it out wherever it is copied. A release build without it (a
//! `cargo install` from a fresh clone) builds it first with the one script that does; a
//! debug build goes on without it (kapture then needs the extension beside its folder, as a
//! build tree has it).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Written by kapture itself from its own tool list, never embedded (it would be stale).
const GENERATED: &str = "tools.json";

fn main() {
    let manifest_dir =
        PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    println!("cargo:rerun-if-env-changed=KAPTURE_EMBED_EXTENSION_DIR");
    println!("cargo:rerun-if-changed=build.rs");
    // A new shell file appears here first; the assembled files are watched one by one below
    // (not their folder, where tools.json is rewritten by every `cargo make build`).
    println!(
        "cargo:rerun-if-changed={}",
        manifest_dir.join("../extension-shell").display()
    );
    let given = std::env::var_os("KAPTURE_EMBED_EXTENSION_DIR").map(PathBuf::from);
    let mut dir = given
        .clone()
        .unwrap_or_else(|| manifest_dir.join("../target/extension"));
    let mut files = Vec::new();
    if !is_built(&dir) {
        if std::env::var("PROFILE").as_deref() == Ok("release") {
            // `cargo install` or a release build from a fresh clone: the extension is built
            // here, into this build's own folder, with the one script that builds it.
            dir = build_extension(&manifest_dir, given.is_some());
        } else {
            // Missing: looked at again on every build until it is there (a path that never
            // exists always reruns; the built files' time stamps may predate this run when
            // the folder is moved into place).
            println!(
                "cargo:rerun-if-changed={}",
                dir.join(".not-built-when-kapture-was").display()
            );
        }
    }
    if is_built(&dir) {
        collect(&dir, &dir, &mut files);
        files.sort();
    }
    let mut code = String::from(
        "/// The assembled extension's files (path relative to its root, bytes); empty when it\n\
         /// was not built before this binary.\n\
         pub(crate) static FILES: &[(&str, &[u8])] = &[\n",
    );
    for rel in &files {
        let path = dir.join(rel);
        println!("cargo:rerun-if-changed={}", path.display());
        writeln!(
            code,
            "    ({rel:?}, include_bytes!({:?})),",
            path.display().to_string()
        )
        .expect("writing to a String");
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    std::fs::write(out.join("embedded_extension.rs"), code).expect("OUT_DIR is writable");
}

fn is_built(dir: &Path) -> bool {
    dir.join("manifest.json").is_file() && dir.join("ext_core_bg.wasm").is_file()
}

/// Build the extension into this build's `OUT_DIR` with `scripts/build-extension.sh`
/// (which installs the wasm target and the pinned wasm-bindgen when missing), or stop
/// with the command that does. Its own cargo runs on a target folder of its own (this
/// build holds the lock of the outer one), without the outer build's flags.
fn build_extension(manifest_dir: &Path, was_given: bool) -> PathBuf {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    let script = manifest_dir.join("../scripts/build-extension.sh");
    let fail = |why: &str| -> ! {
        eprintln!(
            "\nkapture's release build carries the Kapture extension, which is not built\n\
             ({why}).\nBuild it once with:\n\n    bash scripts/build-extension.sh\n\n\
             (or `cargo make build`), then run this command again.\n"
        );
        std::process::exit(1);
    };
    if was_given {
        fail("KAPTURE_EMBED_EXTENSION_DIR names a folder without it");
    }
    if !script.is_file() {
        fail("its build script is not beside these sources");
    }
    println!("cargo:warning=building the Kapture extension first (scripts/build-extension.sh)");
    let ext = out.join("extension");
    let mut cmd = std::process::Command::new("bash");
    cmd.arg(&script)
        .env("KAPTURE_EXTENSION_OUT", &ext)
        .env("CARGO_TARGET_DIR", out.join("wasm-target"))
        // The script's words go to the build log, never to cargo's directives on stdout.
        .stdout(std::io::stderr());
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_TARGET",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
    ] {
        cmd.env_remove(var);
    }
    match cmd.status() {
        Ok(status) if status.success() && is_built(&ext) => {}
        Ok(status) => fail(&format!("building it here failed: {status}")),
        Err(e) => fail(&format!("bash could not run its build script: {e}")),
    }
    // What it was built from: a change there builds it again.
    for source in [
        "../ext-core/src",
        "../ext-core/Cargo.toml",
        "../extension-shell",
    ] {
        println!(
            "cargo:rerun-if-changed={}",
            manifest_dir.join(source).display()
        );
    }
    ext
}

/// Every file under `dir` as a `/`-separated path relative to `root`, tools.json aside.
fn collect(root: &Path, dir: &Path, files: &mut Vec<String>) {
    let entries = std::fs::read_dir(dir).expect("the extension folder is readable");
    for entry in entries {
        let path = entry.expect("a readable folder entry").path();
        if path.is_dir() {
            collect(root, &path, files);
        } else {
            let rel = path.strip_prefix(root).expect("under its root");
            let rel = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            if rel != GENERATED {
                files.push(rel);
            }
        }
    }
}
