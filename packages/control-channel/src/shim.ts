#!/usr/bin/env node
// The stdio shim the CLIs launch as their MCP server: `node dist/shim.js`, configured only through
// FLOOT_MCP_SOCKET and FLOOT_MCP_TOKEN (see mintTurnMount). stdout carries nothing but the protocol.
import { shimMain } from "./mcp-shim.js";

shimMain();
