// Preload (`--import`) for test/turn-accept-sync.test.ts: in the daemon, every fdatasync(2) asked of
// node:fs fails with EIO, as on a disk that lost a write. That is the journal's group commit (WalSync);
// SQLite's own fsyncs, made in C, are untouched. Other node processes (the spawner, a CLI) are left be.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";

if (process.argv.includes("daemon")) {
  fs.fdatasync = (_fd, callback) => {
    const error = Object.assign(new Error("EIO: i/o error, fdatasync"), {
      code: "EIO",
      errno: -5,
      syscall: "fdatasync",
    });
    process.nextTick(callback, error);
  };
  syncBuiltinESMExports();
}
