//! Embeds the assembled extension (target/extension, tools.json aside) into kapture, so the
//! binary alone can write it out wherever it is copied. A release build without it fails at
//! once with the command that builds it; a debug build goes on without it (kapture then
//! needs the extension beside its folder, as a build tree has it).

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
    let dir = std::env::var_os("KAPTURE_EMBED_EXTENSION_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest_dir.join("../target/extension"));
    let built = dir.join("manifest.json").is_file() && dir.join("ext_core_bg.wasm").is_file();
    let mut files = Vec::new();
    if built {
        collect(&dir, &dir, &mut files);
        files.sort();
    } else {
        // Missing: looked at again on every build until it is there (a path that never
        // exists always reruns; the built files' time stamps may predate this run when
        // the folder is moved into place).
        println!(
            "cargo:rerun-if-changed={}",
            dir.join(".not-built-when-kapture-was").display()
        );
        if std::env::var("PROFILE").as_deref() == Ok("release") {
            eprintln!(
                "\nkapture's release build carries the Kapture extension, and it is not built yet\n\
                 (looked in {}).\nBuild it once with:\n\n    bash scripts/build-extension.sh\n\n\
                 (or `cargo make build`), then run this command again.\n",
                dir.display()
            );
            std::process::exit(1);
        }
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
