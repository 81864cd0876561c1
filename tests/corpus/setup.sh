#!/usr/bin/env bash
# Installs the real-app corpus into <corpus dir> (idempotent; `cargo make setup` passes the
# user's cache folder, kapture/corpus, shared by every clone): every folder here with a
# requirements.txt (pinned PyPI packages) gets a venv of its own at <corpus dir>/<app>/venv,
# rebuilt only when its requirements change; the TodoMVC examples come from npm, checked
# against a pinned digest. Usage: setup.sh <corpus dir>
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
corpus="$1"
mkdir -p "$corpus"
# One setup at a time in a folder that several clones share.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$corpus/.setup.lock"
  flock 9
fi

TODOMVC_VERSION="0.1.1"
TODOMVC_SHA256="fd6f05a878cddee9b987ee449d8defa447d087d6b6ffc1d816bbb2cd64a6705f"
if [ ! -f "$corpus/todomvc/.complete" ]; then
  tmp="$(mktemp -d)"
  (cd "$tmp" && npm pack --silent "todomvc@${TODOMVC_VERSION}" >/dev/null)
  echo "${TODOMVC_SHA256}  $tmp/todomvc-${TODOMVC_VERSION}.tgz" | sha256sum -c --quiet
  rm -rf "$corpus/todomvc" && mkdir -p "$corpus/todomvc"
  tar xzf "$tmp/todomvc-${TODOMVC_VERSION}.tgz" -C "$corpus/todomvc" --strip-components=1
  rm -rf "$tmp"
  touch "$corpus/todomvc/.complete"
fi

# One venv per app, installed side by side (the downloads overlap); each install's log is
# kept and shown when it fails.
install() {
  local req="$1" app dir stamp
  app="$(basename "$(dirname "$req")")"
  dir="$corpus/$app"
  stamp="$(sha256sum "$req" | cut -c1-32)"
  if [ "$(cat "$dir/.stamp" 2>/dev/null)" = "$stamp" ] && [ -x "$dir/venv/bin/python" ]; then
    return 0
  fi
  echo "corpus: installing $app" >&2
  rm -rf "$dir" && mkdir -p "$dir"
  python3 -m venv "$dir/venv"
  if ! "$dir/venv/bin/pip" install --disable-pip-version-check --no-input -r "$req" > "$dir/install.log" 2>&1; then
    echo "corpus: installing $app failed:" >&2
    tail -n 30 "$dir/install.log" >&2
    return 1
  fi
  echo "$stamp" > "$dir/.stamp"
}
pids=()
for req in "$here"/*/requirements.txt; do
  install "$req" &
  pids+=("$!")
  # At most three at once: 2 cores, and the registry's patience.
  if [ "${#pids[@]}" -ge 3 ]; then
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}")
  fi
done
for pid in "${pids[@]}"; do
  wait "$pid" || failed=1
done
[ -z "${failed:-}" ] || { echo "corpus: some apps failed to install" >&2; exit 1; }
