#!/usr/bin/env node
// The helper that starts each turn's CLI off the daemon's event loop, bundled as `bundle/spawner.mjs`.
import { runCliSpawner } from "@bridgeworks/backend-adapters";

runCliSpawner();
