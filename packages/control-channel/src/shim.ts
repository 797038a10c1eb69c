#!/usr/bin/env node
// The stdio shim the CLIs launch as their MCP server: `node dist/shim.js`, configured only through
// FLOOT_MCP_SOCKET and FLOOT_MCP_TOKEN (see mintTurnMount). stdout carries nothing but the protocol.
import { runShim, shimSocketEnvVar, shimTokenEnvVar } from "./mcp-shim.js";

const socketPath = process.env[shimSocketEnvVar];
const token = process.env[shimTokenEnvVar];
// Claude Code merges its whole environment into a stdio server's (API keys included). The shim needs
// none of it: drop it so nothing here can act on it or hand it on.
for (const name of Object.keys(process.env)) delete process.env[name];

void runShim({
  socketPath,
  token,
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  exit: (code) => process.exit(code),
});
