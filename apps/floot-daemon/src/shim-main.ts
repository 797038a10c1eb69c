#!/usr/bin/env node
// The stdio shim each turn's CLI launches as its `floot` MCP server, bundled as `bundle/shim.mjs`.
import { shimMain } from "@bridgeworks/control-channel";

shimMain();
