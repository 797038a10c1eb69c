import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { openSqliteBoard } from "../src/index.js";
import type { BoardContractHarness } from "../src/testing/index.js";

export const boardProcessScript = fileURLToPath(
  new URL("./fixtures/sqlite-board-process.mjs", import.meta.url),
);

// Longer than any test's timeout: a wake-up the tests see came from the prompt path.
const recheckIntervalMs = 600_000;

/** A fresh board file in its own temp dir, under a subdir the board has to create. */
export function sqliteHarness(): BoardContractHarness & { path: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), "bee-board-"));
  const path = join(dir, "state", "bee", "board.db");
  return {
    dir,
    path,
    openBoard: (deps = {}) => openSqliteBoard({ ...deps, path, recheckIntervalMs }),
    spawnBoardProcess: () =>
      spawn(process.execPath, [boardProcessScript, path, String(recheckIntervalMs)], {
        stdio: ["pipe", "pipe", "inherit"],
      }),
    dispose: async () => rmSync(dir, { recursive: true, force: true }),
  };
}
