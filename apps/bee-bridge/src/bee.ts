#!/usr/bin/env node
// The guard is evaluated before main's imports, so no library can write to stdout first.
import "./stdout-guard.js";
import { systemContext } from "./cli/context.js";
import { runBee } from "./cli/program.js";

process.exitCode = await runBee(process.argv.slice(2), systemContext());
