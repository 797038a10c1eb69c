import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, test } from "vitest";
import { acquireStateLock, StateDirLockedError, type StateLock } from "../src/daemon/state-lock.js";

const betterSqlite3Path = createRequire(import.meta.url).resolve("better-sqlite3");

let root: string | undefined;
const locks: StateLock[] = [];

afterEach(() => {
  for (const lock of locks.splice(0)) lock.release();
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

function lockPath(): string {
  root = mkdtempSync(join(tmpdir(), "floot-lock-"));
  return join(root, "daemon.lock");
}

/** Another process holding SQLite's shared lock on `path` for `holdMs`, as a colliding daemon's attempt does. */
async function holdSharedLock(path: string, holdMs: number): Promise<{ exited: Promise<number | null> }> {
  const script = `
    const Database = require(${JSON.stringify(betterSqlite3Path)});
    const db = new Database(${JSON.stringify(path)});
    db.exec("BEGIN");
    db.prepare("SELECT count(*) FROM sqlite_master").get();
    process.stdout.write("holding\\n");
    setTimeout(() => { db.exec("COMMIT"); db.close(); }, ${holdMs});
  `;
  const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("holding")) resolve();
    });
    child.on("exit", (code) => reject(new Error(`lock holder exited early (${code})`)));
  });
  return { exited };
}

describe("state dir lock", () => {
  test("a contender's passing shared lock delays the lock but does not lose it", async () => {
    const path = lockPath();
    const setup = new Database(path);
    setup.exec("CREATE TABLE holder (pid INTEGER NOT NULL, start_time TEXT NOT NULL, since TEXT)");
    setup.close();
    const { exited: holderExited } = await holdSharedLock(path, 150);
    locks.push(acquireStateLock(path, { contentionWindowMs: 10_000 }));
    expect(await holderExited).toBe(0);
    const pids = new Database(path, { readonly: true, timeout: 0 });
    expect(() => pids.prepare("SELECT pid FROM holder").get()).toThrow(/locked|busy/i);
    pids.close();
  });

  test("a live holder refuses a second daemon once the contention window has passed", () => {
    const path = lockPath();
    locks.push(acquireStateLock(path));
    let clock = 0;
    const sleeps: number[] = [];
    const second = () =>
      acquireStateLock(path, {
        contentionWindowMs: 200,
        now: () => clock,
        sleep: (ms) => {
          sleeps.push(ms);
          clock += ms;
        },
        random: () => 0.5,
      });
    expect(second).toThrow(StateDirLockedError);
    expect(second).toThrow(/holds the state dir lock/);
    expect(sleeps.length).toBeGreaterThan(1);
    expect(clock).toBeGreaterThanOrEqual(200);
  });

  test("taking the lock writes nothing: no page, no rollback journal, nothing to fsync at each start", () => {
    const path = lockPath();
    locks.push(acquireStateLock(path));
    expect(statSync(path).size).toBe(0);
    expect(existsSync(`${path}-journal`)).toBe(false);
    locks.pop()?.release();
    expect(statSync(path).size).toBe(0);
  });

  test("the lock is free again once released", () => {
    const path = lockPath();
    acquireStateLock(path).release();
    locks.push(acquireStateLock(path, { contentionWindowMs: 0 }));
    expect(() => acquireStateLock(path, { contentionWindowMs: 0 })).toThrow(StateDirLockedError);
  });
});
