#!/usr/bin/env bash
# Build the Kapture extension (ext-core compiled to wasm, plus extension-shell) into
# target/extension: the folder `kapture` embeds when it is built (cargo install, release
# builds) and the one a build tree's kapture loads. Installs the wasm target and the pinned
# wasm-bindgen CLI when missing. A file whose content did not change keeps its time stamp,
# so kapture is not rebuilt for nothing; tools.json is kapture's own (`kapture panel-tools`).
set -euo pipefail
cd "$(dirname "$0")/.."
version="$(sed -n 's/^wasm-bindgen = "=\(.*\)"$/\1/p' Cargo.toml)"
rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
if ! wasm-bindgen --version 2>/dev/null | grep -q " ${version}"; then
  # --locked first; the registry mirror may lack a locked transitive version, then resolve afresh.
  cargo install wasm-bindgen-cli --version "=${version}" --locked \
    || cargo install wasm-bindgen-cli --version "=${version}" --force
fi
cargo build -p ext-core --target wasm32-unknown-unknown --profile wasm-release
# KAPTURE_EXTENSION_OUT: elsewhere (kapture's build script builds it into its own folder).
out="${KAPTURE_EXTENSION_OUT:-target/extension}"
new="$out.new"
rm -rf "$new"
mkdir -p "$new" "$out"
cp -r extension-shell/. "$new/"
# Function names are 28% of the module and only help stack traces: left out.
wasm-bindgen --target web --no-typescript --remove-name-section --remove-producers-section \
  --out-dir "$new" "${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/wasm-release/ext_core.wasm"
(cd "$new" && find . -type f) | while IFS= read -r f; do
  if ! cmp -s "$new/$f" "$out/$f"; then
    mkdir -p "$(dirname "$out/$f")"
    cp "$new/$f" "$out/$f"
  fi
done
(cd "$out" && find . -type f) | while IFS= read -r f; do
  [ "$f" = ./tools.json ] || [ -e "$new/$f" ] || rm -f "$out/$f"
done
rm -rf "$new"
echo "the extension is built in $out"
