import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { isTerminalTurnPhase } from "@bridgeworks/protocol";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openJournal } from "../src/journal.js";
import { recoverJournal } from "../src/recovery.js";
import { tempDir } from "./helpers.js";

const packageDir = resolve(fileURLToPath(import.meta.url), "../..");
const workspaceRoot = resolve(packageDir, "../..");
const writerScript = join(packageDir, "test/fixtures/torn-writer.mjs");
const children: ChildProcess[] = [];

beforeAll(() => {
  // The child imports the built package, as the daemon will.
  execFileSync(
    "pnpm",
    ["turbo", "run", "build", "--filter", "@bridgeworks/turn-journal", "--output-logs=errors-only"],
    {
      cwd: workspaceRoot,
      stdio: "pipe",
      env: { ...process.env, PATH: `${join(workspaceRoot, ".tools/node_modules/.bin")}:${process.env.PATH}` },
    },
  );
}, 240_000);

afterAll(() => {
  for (const child of children) {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      process.kill(child.pid, "SIGKILL");
    }
  }
});

/** Runs the writer until it has reported `reports` commits, SIGKILLs it by pid, returns what it reported. */
async function runWriterAndKill(path: string, reports: number): Promise<Map<string, number>> {
  const child = spawn(process.execPath, [writerScript, path], { stdio: ["ignore", "pipe", "inherit"] });
  children.push(child);
  const committed = new Map<string, number>();
  const exited = once(child, "exit");
  let seen = 0;
  for await (const line of createInterface({ input: child.stdout! })) {
    const [word, turnId, count] = line.split(" ");
    if (word === "committed" && turnId && count) {
      committed.set(turnId, Math.max(committed.get(turnId) ?? 0, Number(count)));
      seen += 1;
    }
    if (seen >= reports) {
      process.kill(child.pid!, "SIGKILL");
      break;
    }
  }
  const [code, signal] = await exited;
  expect({ code, signal }).toEqual({ code: null, signal: "SIGKILL" });
  return committed;
}

describe("SIGKILL during a burst of events", () => {
  test.each([7, 23, 61])(
    "after %i reports the reopened journal is consistent",
    async (reports) => {
      const path = join(tempDir(), "journal.sqlite");
      const committed = await runWriterAndKill(path, reports);

      const raw = new Database(path);
      try {
        expect(raw.pragma("integrity_check", { simple: true })).toBe("ok");
      } finally {
        raw.close();
      }

      const journal = openJournal({ path });
      try {
        expect(journal.maintenance.checkConsistency()).toEqual([]);
        for (const session of journal.sessions.listSessions()) {
          const turns = journal.turns.listTurns(session.id);
          expect(
            turns.filter((turn) => turn.phase !== "queued" && !isTerminalTurnPhase(turn.phase)).length,
          ).toBeLessThanOrEqual(1);
          for (const turn of turns) {
            const events = journal.events.readEvents(turn.id, 0, 100_000);
            expect(events.map((envelope) => envelope.index)).toEqual(events.map((_, position) => position));
            const lastPhase = events.findLast(
              (e) => e.event.type === "phase" || e.event.type === "terminal",
            )?.event;
            expect(
              lastPhase?.type === "terminal"
                ? lastPhase.outcome
                : lastPhase?.type === "phase" && lastPhase.phase,
            ).toBe(turn.phase);
          }
        }
        // Nothing the writer saw committed is gone.
        for (const [turnId, count] of committed) {
          expect(journal.turns.getTurn(turnId)?.eventCount).toBeGreaterThanOrEqual(count);
        }
        expect(journal.turns.listNonTerminalTurns().length).toBeGreaterThan(0);
        recoverJournal(journal);
        expect(journal.maintenance.checkConsistency()).toEqual([]);
      } finally {
        journal.maintenance.close();
      }
    },
    60_000,
  );
});
