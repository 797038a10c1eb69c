#!/usr/bin/env node
import { once } from "node:events";
import { runCli } from "./run-cli.js";

const exitCode = await runCli(process.argv.slice(2), {
  stdout: (line) => process.stdout.write(`${line}\n`),
  stderr: (line) => process.stderr.write(`${line}\n`),
  waitForShutdown: () =>
    Promise.race([once(process, "SIGINT"), once(process, "SIGTERM")]).then(() => undefined),
});
process.exitCode = exitCode;
