// Preload (`--import`) for test/turn-accept-sync.test.ts: in the daemon, fdatasync(2) asked of node:fs
// fails with EIO, as on a disk that lost a write, after the first FAILING_WAL_SYNC_AFTER calls (default
// 0) have gone through. That is the journal's group commit (WalSync); SQLite's own fsyncs, made in C,
// are untouched. Other node processes (the spawner, a CLI) are left be.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";

if (process.argv.includes("daemon")) {
  const realFdatasync = fs.fdatasync;
  let okLeft = Number(process.env.FAILING_WAL_SYNC_AFTER ?? 0);
  fs.fdatasync = (fd, callback) => {
    if (okLeft > 0) {
      okLeft -= 1;
      realFdatasync(fd, callback);
      return;
    }
    const error = Object.assign(new Error("EIO: i/o error, fdatasync"), {
      code: "EIO",
      errno: -5,
      syscall: "fdatasync",
    });
    process.nextTick(callback, error);
  };
  syncBuiltinESMExports();
}
