#!/usr/bin/env node
// The CLI spawner's entry (`dist/spawner-main.js`): started by `startSpawnerProcess` with an IPC channel.
import { runCliSpawner } from "./spawner-server.js";

runCliSpawner();
