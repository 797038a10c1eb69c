#!/usr/bin/env node
// The stdio shim each turn's CLI launches as its `floot` MCP server (bundled as `bundle/shim.mjs`):
// configured only through FLOOT_MCP_SOCKET and FLOOT_MCP_TOKEN, it relays to the bridge's socket and
// exits as soon as the socket is missing or closes.
import { runShim, shimSocketEnvVar, shimTokenEnvVar } from "@bridgeworks/control-channel";

const socketPath = process.env[shimSocketEnvVar];
const token = process.env[shimTokenEnvVar];
// The CLI merges its whole environment (API keys included) into ours: the shim needs none of it.
for (const name of Object.keys(process.env)) delete process.env[name];

void runShim({
  socketPath,
  token,
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  exit: (code) => process.exit(code),
});
