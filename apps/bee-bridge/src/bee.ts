#!/usr/bin/env node
// The guard is evaluated before main's imports, so no library can write to stdout first.
import "./stdout-guard.js";
import { main } from "./main.js";

const outcome = await main(process.argv.slice(2));
if (outcome !== "serving") {
  process.exitCode = outcome;
}
