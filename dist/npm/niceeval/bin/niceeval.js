#!/usr/bin/env node
// Launcher of the `niceeval` command installed from npm. The binary itself comes in one of
// the optional dependencies `@niceeval/cli-<platform>-<arch>` (npm installs the one whose
// `os` and `cpu` match this machine, the pattern esbuild and Biome use; nothing is downloaded
// after install). This file finds it and runs it with the same arguments, standard streams
// and exit status. NICEEVAL_BINARY names another binary to run instead.
"use strict";

const { spawnSync } = require("node:child_process");
const path = require("node:path");

const PLATFORMS = {
  "linux-x64": "@niceeval/cli-linux-x64",
  "linux-arm64": "@niceeval/cli-linux-arm64",
  "darwin-x64": "@niceeval/cli-darwin-x64",
  "darwin-arm64": "@niceeval/cli-darwin-arm64",
  "win32-x64": "@niceeval/cli-win32-x64",
};

function binaryPath() {
  if (process.env.NICEEVAL_BINARY) {
    return process.env.NICEEVAL_BINARY;
  }
  const key = `${process.platform}-${process.arch}`;
  const pkg = PLATFORMS[key];
  if (!pkg) {
    fail(
      `niceeval has no prebuilt binary for ${key}; supported: ${Object.keys(PLATFORMS).join(", ")}.\n` +
        "Build it from source instead: cargo install --git https://github.com/niceeval/niceeval-rs niceeval-cli",
    );
  }
  const exe = process.platform === "win32" ? "niceeval.exe" : "niceeval";
  try {
    return require.resolve(`${pkg}/bin/${exe}`);
  } catch (e) {
    fail(
      `niceeval's binary package ${pkg} is not installed (${e.code || e.message}).\n` +
        "npm skips optional dependencies when installed with --no-optional or --omit=optional; " +
        "reinstall without it: npm install niceeval",
    );
  }
}

function fail(message) {
  process.stderr.write(`niceeval: ${message}\n`);
  process.exit(2);
}

const result = spawnSync(binaryPath(), process.argv.slice(2), { stdio: "inherit" });
if (result.error) {
  fail(`could not run ${path.basename(String(result.error.path || "niceeval"))}: ${result.error.message}`);
}
if (result.signal) {
  // Die of the same signal, so a caller sees what the binary saw.
  process.kill(process.pid, result.signal);
}
process.exit(result.status === null ? 1 : result.status);
