#!/usr/bin/env node
// Starts the kapture binary of this machine's platform package (an optional dependency
// npm installs only where its os and cpu match) with the same arguments and stdio, and
// exits as it exits. MCP clients start this through `npx -y kapture-mcp`.
"use strict";
const { spawn } = require("node:child_process");
const path = require("node:path");

const platforms = require(path.join(__dirname, "..", "platforms.json"));
const key = `${process.platform} ${process.arch}`;
const entry = platforms[key];
if (!entry) {
  console.error(
    `kapture: no prebuilt kapture for ${key}; build it from source (see docs/install.md).`
  );
  process.exit(1);
}
const exe = process.platform === "win32" ? "kapture.exe" : "kapture";
let bin;
try {
  bin = require.resolve(`${entry.package}/bin/${exe}`);
} catch {
  console.error(
    `kapture: the package ${entry.package} is not installed; reinstall without --omit=optional ` +
      "(or --no-optional), or download kapture for this platform."
  );
  process.exit(1);
}

const child = spawn(bin, process.argv.slice(2), { stdio: "inherit", windowsHide: true });
// Stop requests reach kapture, which closes its browser and handshake file itself.
const forwarded = ["SIGINT", "SIGTERM", "SIGHUP"].filter((s) => process.platform !== "win32" || s !== "SIGHUP");
for (const signal of forwarded) {
  process.on(signal, () => child.kill(signal));
}
child.on("error", (e) => {
  console.error(`kapture: cannot start ${bin}: ${e.message}`);
  process.exit(1);
});
child.on("exit", (code, signal) => {
  if (signal) {
    for (const s of forwarded) process.removeAllListeners(s);
    process.kill(process.pid, signal);
  } else {
    process.exit(code ?? 1);
  }
});
