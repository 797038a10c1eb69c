#!/usr/bin/env node
// The CLI keeper's entry (`dist/keeper-main.js`, floot's `bundle/keeper.mjs`): started detached (its own
// session) by `startKeeperProcess`, which writes its settings as one JSON line on stdin and waits for
// `ready` on stdout; nothing secret is in its argv or environment.
import { KeeperSettings } from "@bridgeworks/protocol";
import { runKeeper } from "./keeper-server.js";

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk: string) => {
  input += chunk;
  const at = input.indexOf("\n");
  if (at === -1) return;
  process.stdin.pause();
  const settings = KeeperSettings.parse(JSON.parse(input.slice(0, at)));
  // A signal to it alone (not the daemon's group, which never reaches its session) ends it and its CLIs.
  runKeeper({
    socketPath: settings.socketPath,
    key: Buffer.from(settings.key, "base64url"),
    spoolDir: settings.spoolDir,
    ...(settings.idleExitMs !== undefined && { idleExitMs: settings.idleExitMs }),
  }).then(
    (keeper) => {
      process.stdout.write("ready\n");
      process.stdout.on("error", () => {});
      for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const)
        process.on(signal, () => void keeper.close());
    },
    (error: unknown) => {
      process.stdout.write(`failed ${String(error)}\n`);
      process.exit(1);
    },
  );
});
