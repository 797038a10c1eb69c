import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { statSync } from "node:fs";
import { dirname } from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import { afterEach, describe, expect, test } from "vitest";
import { mintCursor } from "../src/cursor.js";
import { type Board, openSqliteBoard, RetireIncompleteError } from "../src/index.js";
import { migrate as migrateSqlite } from "../src/sqlite/schema.js";
import { killByPid, refusal, tickingClock } from "../src/testing/index.js";
import { expectOlderBeeRowsKept, olderBeeRows } from "./old-board.js";
import { registerFromProcesses } from "./processes.js";
import { sqliteHarness } from "./sqlite-harness.js";

const harnesses: ReturnType<typeof sqliteHarness>[] = [];
const boards: Board[] = [];
const connections: Database.Database[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  await Promise.all(children.splice(0).map(killByPid));
  await Promise.all(boards.splice(0).map((board) => board.close()));
  for (const connection of connections.splice(0)) connection.close();
  await Promise.all(harnesses.splice(0).map((harness) => harness.dispose()));
});

function newHarness() {
  const harness = sqliteHarness();
  harnesses.push(harness);
  return harness;
}

async function openBoard(options: Partial<Parameters<typeof openSqliteBoard>[0]> & { path: string }) {
  const board = await openSqliteBoard({ recheckIntervalMs: 600_000, ...tickingClock(), ...options });
  boards.push(board);
  return board;
}

/** A plain connection to the board file, as another program would open it. */
function rawConnection(path: string): Database.Database {
  const connection = new Database(path);
  connections.push(connection);
  return connection;
}

describe("the board file", () => {
  test("is created owner-only under owner-only parent dirs, in WAL mode, at the current schema", async () => {
    const { path, dir } = newHarness();
    const board = await openBoard({ path });
    await board.post({ kind: "note", to: "*", from: "human", body: "" });

    expect(statSync(dirname(path)).mode & 0o777).toBe(0o700);
    expect(statSync(dirname(dirname(path))).mode & 0o777).toBe(0o700);
    for (const file of [path, `${path}-wal`, `${path}-shm`]) expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o077).toBe(0);

    const raw = rawConnection(path);
    expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(raw.pragma("user_version", { simple: true })).toBe(2);
  });

  test("opened by eight processes at once is migrated once and shared by all", async () => {
    const harness = newHarness();
    const identities = await registerFromProcesses(harness, children, 8);

    const board = await openBoard({ path: harness.path });
    expect((await board.agents()).map((agent) => agent.identity).sort()).toEqual([...identities].sort());
    const raw = rawConnection(harness.path);
    expect(raw.prepare("SELECT count(*) AS boards FROM board").get()).toEqual({ boards: 1 });
  });

  test("a file a bee of schema version 1 left is brought up to date on open and keeps every record", async () => {
    const { path } = newHarness();
    await (await openBoard({ path })).close();
    // Rebuilt as version 1 left it: its tables, its rows.
    const old = rawConnection(path);
    old.exec("DROP TABLE actions; DROP TABLE agents; DROP TABLE board; PRAGMA user_version = 0;");
    migrateSqlite(old, randomBytes, 1);
    old.exec(olderBeeRows());
    old.close();

    await expectOlderBeeRowsKept(await openBoard({ path }));
    expect(rawConnection(path).pragma("user_version", { simple: true })).toBe(2);
  });

  test("from a newer bee is refused rather than misread", async () => {
    const { path } = newHarness();
    await (await openBoard({ path })).close();
    rawConnection(path).pragma("user_version = 3");

    const error = await refusal(openBoard({ path }));
    expect(error.code).toBe("incompatible_store");
    expect(error.message).toContain("schema version 3");
  });

  test("refuses a relative path and bad tuning by name", async () => {
    expect((await refusal(openSqliteBoard({ path: "board.db" }))).argument).toBe("path");
    const { path } = newHarness();
    expect((await refusal(openSqliteBoard({ path, busyTimeoutMs: -1 }))).argument).toBe("busyTimeoutMs");
    expect((await refusal(openSqliteBoard({ path, recheckIntervalMs: 0 }))).argument).toBe(
      "recheckIntervalMs",
    );
  });

  test("a folder that cannot be created is refused naming path, not a hang", async () => {
    const error = await refusal(openSqliteBoard({ path: "/proc/bee-board-test/board.db" }));
    expect(error.argument).toBe("path");
    expect(error.message).toContain("/proc/bee-board-test");
  });
});

describe("contention", () => {
  test("a write lock held past busyTimeoutMs is a retryable busy error, and the retry succeeds", async () => {
    const { path } = newHarness();
    const board = await openBoard({ path, busyTimeoutMs: 20 });
    const blocker = rawConnection(path);
    blocker.exec("BEGIN IMMEDIATE");

    const error = await refusal(board.post({ kind: "note", to: "*", from: "human", body: "" }));
    expect([error.code, error.retryable]).toEqual(["busy", true]);
    expect(error.message).toContain("SQLITE_BUSY");

    blocker.exec("COMMIT");
    expect(await board.post({ kind: "note", to: "*", from: "human", body: "" })).toMatchObject({
      state: "open",
    });
  });
});

describe("cursors", () => {
  test("a cursor ahead of the board is refused naming cursor", async () => {
    const { path } = newHarness();
    const board = await openBoard({ path });
    await board.post({ kind: "note", to: "*", from: "human", body: "" });
    const { id } = rawConnection(path).prepare("SELECT id FROM board").get() as { id: string };

    expect((await board.list({ cursor: mintCursor(id, 1) })).records).toEqual([]);
    const error = await refusal(board.list({ cursor: mintCursor(id, 2) }));
    expect(error.argument).toBe("cursor");
    expect(error.message).toContain("ahead of this board");
  });
});

describe("wake-ups", () => {
  test("a post wakes a waiter on the same board without waiting for any I/O", async () => {
    const { path } = newHarness();
    const board = await openBoard({ path });
    const bob = await board.register("bob");
    let woken = false;
    const waiting = board.waitForClaimable(bob.identity, undefined, { timeoutMs: 15_000 }).then((page) => {
      woken = true;
      return page;
    });

    await board.post({ kind: "note", to: "bob", from: "human", body: "" });
    // I/O callbacks (the file watch) never run while microtasks drain.
    for (let turn = 0; turn < 20 && !woken; turn++) await Promise.resolve();
    expect(woken).toBe(true);
    expect((await waiting).records).toHaveLength(1);
  });

  test("a waiter still wakes, at the safety re-check, for a writer that never announced its commit", async () => {
    const { path } = newHarness();
    const board = await openBoard({ path, recheckIntervalMs: 50 });
    const bob = await board.register("bob");
    const waiting = board.waitForClaimable(bob.identity, undefined, { timeoutMs: 15_000 });

    rawConnection(path)
      .prepare(
        `INSERT INTO actions (id, seq, kind, recipient, sender, sender_agent, body, state, created_at)
         VALUES ('act_00000000000000ff', (SELECT coalesce(max(seq), 0) + 1 FROM actions), 'note', '*',
                 'human', NULL, 'quiet', 'open', 0)`,
      )
      .run();

    expect((await waiting).records.map((record) => record.body)).toEqual(["quiet"]);
  });
});

describe("handles", () => {
  const distUrl = pathToFileURL(`${dirname(dirname(new URL(import.meta.url).pathname))}/dist/index.js`).href;

  /** Runs a module in a fresh node that must end by itself: no process.exit anywhere. */
  async function runToItsEnd(
    code: string,
    path: string,
  ): Promise<{ exitCode: number | null | "still running"; stdout: string }> {
    const child = spawn(process.execPath, ["--input-type=module", "-e", code], {
      env: { ...process.env, BOARD_PATH: path },
      stdio: ["ignore", "pipe", "inherit"],
    });
    children.push(child);
    let stdout = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    // A leaked handle keeps node running: give up well before the test's timeout and say so.
    const exitCode = await new Promise<number | null | "still running">((resolve) => {
      const deadline = setTimeout(() => resolve("still running"), 10_000);
      child.once("exit", (code) => {
        clearTimeout(deadline);
        resolve(code);
      });
    });
    return { exitCode, stdout };
  }

  test("closing the board during a long wait ends the wait and every watcher, so node exits", async () => {
    const { path } = newHarness();
    const result = await runToItsEnd(
      `import { openSqliteBoard } from ${JSON.stringify(distUrl)};
       const board = await openSqliteBoard({ path: process.env.BOARD_PATH });
       const bob = await board.register("bob");
       const waiting = board.waitForClaimable(bob.identity, undefined, { timeoutMs: 600000 });
       setTimeout(() => board.close(), 50);
       await waiting.then(() => console.log("resolved"), (error) => console.log(error.code));`,
      path,
    );
    expect(result).toEqual({ exitCode: 0, stdout: "closed\n" });
  });

  test("a board whose waits are over holds no handles, even left open", async () => {
    const { path } = newHarness();
    const result = await runToItsEnd(
      `import { openSqliteBoard } from ${JSON.stringify(distUrl)};
       const board = await openSqliteBoard({ path: process.env.BOARD_PATH });
       const bob = await board.register("bob");
       const page = await board.waitForClaimable(bob.identity, undefined, { timeoutMs: 50 });
       console.log(page.records.length);`,
      path,
    );
    expect(result).toEqual({ exitCode: 0, stdout: "0\n" });
  });
});

describe("retire", () => {
  test("a retire that fails after registering the successor names it, and retiring into it completes", async () => {
    const { path } = newHarness();
    // This implementation reads the clock once to register the successor and once to retire.
    let reads = 0;
    let failAt = Number.POSITIVE_INFINITY;
    const now = () => {
      reads += 1;
      if (reads === failAt) throw new Error("the clock broke");
      return Date.parse("2026-11-06T10:00:00.000Z") + reads;
    };
    const board = await openBoard({ path, now });
    const bob = await board.register("bob");
    const action = await board.post({ kind: "note", to: "bob", from: "human", body: "" });
    await board.claim(bob.identity, action.id);

    failAt = reads + 2;
    const error = await refusal(board.retire(bob.identity));
    expect(error).toBeInstanceOf(RetireIncompleteError);
    expect(error.code).toBe("retire_incomplete");
    const { successor } = error as RetireIncompleteError;
    expect(successor).toMatchObject({ name: "bob", status: "active" });
    expect((await board.agents()).map((agent) => agent.status)).toEqual(["active", "active"]);

    const retirement = await board.retire(bob.identity, { successor: successor.identity });
    expect(retirement).toMatchObject({ current: successor, released: [action.id] });
    expect(retirement.retired).toMatchObject({ status: "retired", successor: successor.identity });
    expect((await board.agents()).map((agent) => agent.status)).toEqual(["retired", "active"]);
  });
});
