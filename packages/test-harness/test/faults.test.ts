import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { type FaultPlan, faultInjection, ProcessTracker, readFaultLog } from "../src/index.js";

const tracker = new ProcessTracker();
const dirs: string[] = [];
afterEach(async () => {
  await tracker.endAll();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

// A process that publishes on channel `t:point` three times, saying so on stdout, and prints
// whether the plan's variables reached its own environment.
const publisher = [
  'const { channel } = require("node:diagnostics_channel");',
  'console.log("env", process.env.FLOOT_FAULTS === undefined && process.env.FLOOT_FAULTS_LOG === undefined);',
  'for (const n of [1, 2, 3]) { const t = Date.now(); channel("t:point").publish({ n }); console.log("after", n, Date.now() - t); }',
].join("\n");

function run(plan: FaultPlan) {
  const dir = mkdtempSync(join(tmpdir(), "faults-"));
  dirs.push(dir);
  const log = join(dir, "faults.jsonl");
  const { nodeArgs, env } = faultInjection(plan, log);
  const child = tracker.spawn(process.execPath, [...nodeArgs, "-e", publisher], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  return { child, log };
}

describe("the fault preload", () => {
  test("kill: SIGKILLs the process at the chosen hit of the point, logging it first", async () => {
    const { child, log } = run({ "t:point": { action: "kill", skip: 1 } });
    expect(await child.exited).toEqual({ code: null, signal: "SIGKILL" });
    expect(child.stdout()).toMatch(/^env true\nafter 1 \d+\n$/);
    expect(readFaultLog(log)).toEqual([
      { point: "t:point", action: "kill", hit: 2, pid: child.pid, data: { n: 2 } },
    ]);
  });

  test("hold: blocks the thread at the point once, then the process goes on", async () => {
    const { child, log } = run({ "t:point": { action: "hold", ms: 400 } });
    expect(await child.exited).toEqual({ code: 0, signal: null });
    const waited = [...child.stdout().matchAll(/after (\d) (\d+)/g)].map((m) => Number(m[2]));
    expect(waited[0]).toBeGreaterThanOrEqual(350);
    expect(waited.slice(1).every((ms) => ms < 350)).toBe(true);
    expect(readFaultLog(log).map((hit) => hit.hit)).toEqual([1]);
  });

  test("a plan with an unknown action refuses to start the process", async () => {
    const { child } = run({ "t:point": { action: "explode" as "kill" } });
    expect((await child.exited).code).not.toBe(0);
    expect(child.stderr()).toContain('action must be "kill" or "hold"');
  });
});
