#!/usr/bin/env -S node --
// `--` ends Node's options: Node reads a --env-file anywhere on its command line, even after the
// script's name, and a NODE_OPTIONS in that file would run in this process (see docs/cli.md).
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runFloot } from "./cli/program.js";

// The web UI is built beside the bundle, in `ui/`.
const uiDir = join(dirname(fileURLToPath(import.meta.url)), "ui");

const code = await runFloot(process.argv.slice(2), {
  env: process.env,
  cwd: process.cwd(),
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  signals: process,
  ...(existsSync(uiDir) && { uiDir }),
});
process.exit(code);
