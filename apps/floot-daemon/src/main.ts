#!/usr/bin/env node
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCli } from "./cli.js";

// The web UI is built beside the bundle, in `ui/`.
const uiDir = join(dirname(fileURLToPath(import.meta.url)), "ui");

const code = await runCli({
  argv: process.argv.slice(2),
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  ...(existsSync(uiDir) && { uiDir }),
});
process.exit(code);
