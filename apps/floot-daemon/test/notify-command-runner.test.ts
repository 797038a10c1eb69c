import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inProcessSpawner } from "@bridgeworks/backend-adapters";
import type { FlootMoment, LogRecord } from "@bridgeworks/protocol";
import { createLogger } from "@bridgeworks/runtime";
import { isProcessAlive, waitUntil } from "@bridgeworks/test-harness";
import { afterEach, expect, test } from "vitest";
import { NotifyCommand } from "../src/daemon/notify-command.js";
import { killRecorded } from "./recorded-pids.js";

// The notify command's runner with real processes (`sh`): how many run at once, how many wait, what
// is dropped past that, and that closing it kills what still runs, with its group.

let root: string | undefined;
afterEach(() => {
  if (root) killRecorded(join(root, "pids"), root);
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

const moment = (turn: string): FlootMoment => ({
  kind: "turn_ended",
  session: "s-1",
  turn,
  outcome: "completed",
  summary: `Turn ${turn} completed`,
  url: "http://127.0.0.1:1/#/s/s-1",
  at: new Date(0).toISOString(),
});

function runner(
  argv: string[],
  options: { concurrency?: number; backlog?: number; timeoutMs?: number } = {},
) {
  const logged: LogRecord[] = [];
  const command = new NotifyCommand({
    argv,
    spawner: inProcessSpawner(),
    timeoutMs: options.timeoutMs ?? 60_000,
    cwd: root!,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    logger: createLogger({ component: "test", write: (line) => logged.push(JSON.parse(line) as LogRecord) }),
    ...options,
  });
  return { command, logged };
}

test("at most `concurrency` run at once, `backlog` wait, the rest are dropped and logged", async () => {
  root = mkdtempSync(join(tmpdir(), "floot-notify-runner-"));
  const go = join(root, "go");
  const out = join(root, "out.jsonl");
  // Each waits for the word, then appends its stdin.
  const { command, logged } = runner(
    ["/bin/sh", "-c", 'while [ ! -e "$0" ]; do sleep 0.05; done; cat >> "$1"', go, out],
    { concurrency: 2, backlog: 3 },
  );
  for (const turn of ["t1", "t2", "t3", "t4", "t5", "t6"]) command.notify(moment(turn));
  expect(command.running).toBe(2);
  expect(logged).toEqual([
    expect.objectContaining({
      level: "warn",
      message: "notify command: too many moments waiting; this one is dropped",
      turn: "t6",
      waiting: 3,
    }),
  ]);
  writeFileSync(go, "");
  await command.idle();
  expect(command.running).toBe(0);
  const turns = readFileSync(out, "utf8")
    .trim()
    .split("\n")
    .map((line) => (JSON.parse(line) as FlootMoment).turn);
  expect(turns.sort()).toEqual(["t1", "t2", "t3", "t4", "t5"]);
  expect(logged).toHaveLength(1);
});

test("close() kills what still runs, with its process group, and drops what waits", async () => {
  root = mkdtempSync(join(tmpdir(), "floot-notify-runner-"));
  const pids = join(root, "pids");
  const { command } = runner(["/bin/sh", "-c", 'sleep 600 & echo $! >> "$0"; echo $$ >> "$0"; wait', pids], {
    concurrency: 1,
    timeoutMs: 600_000,
  });
  command.notify(moment("t1"));
  command.notify(moment("t2"));
  await waitUntil(
    () => existsSync(pids) && readFileSync(pids, "utf8").trim().split("\n").length === 2,
    10_000,
    "started",
  );
  const started = readFileSync(pids, "utf8").trim().split("\n").map(Number);
  expect(started.every(isProcessAlive)).toBe(true);
  command.close();
  // Long before its 10-minute timeout.
  await waitUntil(() => started.every((pid) => !isProcessAlive(pid)), 10_000, "killed");
  await command.idle();
  // The waiting one never started.
  expect(readFileSync(pids, "utf8").trim().split("\n")).toHaveLength(2);
});
