#!/usr/bin/env bash
# Pack the npm packages of kapture: the launcher `kapture-mcp` (every platform package as an
# optional dependency, pinned to the same version) and one platform package holding BINARY.
#   bash npm/pack.sh BINARY OUT_DIR [PLATFORM]   (PLATFORM as node says it, e.g. "linux x64";
#                                                default: this machine's)
# The version is the workspace's (Cargo.toml). Writes OUT_DIR/*.tgz; the release workflow
# publishes them, the tests install them from the files.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
binary="$1"
out="$(mkdir -p "$2" && cd "$2" && pwd)"
platform="${3:-$(node -p 'process.platform + " " + process.arch')}"
version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' "$here/../Cargo.toml")"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT

cp -r "$here/kapture-mcp" "$stage/launcher"
cp "$here/platforms.json" "$stage/launcher/"
mkdir -p "$stage/platform/bin"
exe=kapture
case "$platform" in win32*) exe=kapture.exe ;; esac
cp "$binary" "$stage/platform/bin/$exe"
chmod 755 "$stage/platform/bin/$exe"

KAPTURE_VERSION="$version" KAPTURE_PLATFORM="$platform" KAPTURE_EXE="$exe" KAPTURE_STAGE="$stage" node -e '
const fs = require("node:fs");
const path = require("node:path");
const { KAPTURE_VERSION: version, KAPTURE_PLATFORM: key, KAPTURE_EXE: exe, KAPTURE_STAGE: stage } = process.env;
const platforms = JSON.parse(fs.readFileSync(path.join(stage, "launcher", "platforms.json"), "utf8"));
const entry = platforms[key];
if (!entry) { console.error(`no package for platform ${key}`); process.exit(1); }
const launcherFile = path.join(stage, "launcher", "package.json");
const launcher = JSON.parse(fs.readFileSync(launcherFile, "utf8"));
launcher.version = version;
launcher.optionalDependencies = Object.fromEntries(Object.values(platforms).map((p) => [p.package, version]));
fs.writeFileSync(launcherFile, JSON.stringify(launcher, null, 2) + "\n");
const [os, cpu] = key.split(" ");
const platform = {
  name: entry.package,
  version,
  description: `The kapture binary for ${key} (started by kapture-mcp)`,
  license: launcher.license,
  repository: launcher.repository,
  os: [os],
  cpu: [cpu],
  files: [`bin/${exe}`],
  preferUnplugged: true,
};
fs.writeFileSync(path.join(stage, "platform", "package.json"), JSON.stringify(platform, null, 2) + "\n");
'
(cd "$stage/launcher" && npm pack --silent --pack-destination "$out" >/dev/null)
(cd "$stage/platform" && npm pack --silent --pack-destination "$out" >/dev/null)
ls "$out"/*.tgz
