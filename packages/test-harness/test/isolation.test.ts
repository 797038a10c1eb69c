import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import {
  createIsolatedEnvironment,
  type IsolatedEnvironment,
  ProcessTracker,
  waitUntil,
} from "../src/index.js";

// A killed process whose parent is gone may linger as a zombie until init reaps it: that is dead.
function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

describe("process tracker", () => {
  const tracker = new ProcessTracker();
  afterEach(() => tracker.endAll());

  test("ends a process and the children it left in its group, by pid", async () => {
    const shell = tracker.spawn("sh", ["-c", "sleep 300 & echo $!; wait"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const childPid = Number((await shell.waitForOutput((out) => out.includes("\n"), 10_000)).trim());
    expect(isAlive(childPid)).toBe(true);

    await tracker.endAll(500);

    expect(isAlive(shell.pid)).toBe(false);
    // The orphan is signalled with its group; the kernel may take a moment to finish it off.
    await waitUntil(() => !isAlive(childPid), 5_000, `orphaned child ${childPid} gone`);
    expect(tracker.livePids()).toEqual([]);
  });

  test("escalates to SIGKILL when a process ignores SIGTERM", async () => {
    const stubborn = tracker.spawn("sh", ["-c", "trap '' TERM; echo ready; while :; do sleep 1; done"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    await stubborn.waitForOutput((out) => out.includes("ready"), 10_000);
    await tracker.endAll(300);
    expect(await stubborn.exited).toMatchObject({ signal: "SIGKILL" });
  });
});

describe("isolated environment", () => {
  let environment: IsolatedEnvironment | undefined;
  afterEach(async () => {
    await environment?.dispose();
    environment = undefined;
  });

  test("points every client at the double and leaks nothing of the caller's environment", async () => {
    process.env.BRIDGEWORKS_CALLER_SECRET = "must-not-leak";
    try {
      environment = createIsolatedEnvironment({ modelUrl: "http://127.0.0.1:9", model: "m-1" });
      const printed = environment.spawn("sh", ["-c", "env"]);
      await printed.exited;
      const lines = printed.stdout().split("\n");
      expect(lines).toContain(`HOME=${environment.home}`);
      expect(lines).toContain("ANTHROPIC_BASE_URL=http://127.0.0.1:9");
      expect(lines).toContain(`CLAUDE_CONFIG_DIR=${environment.claudeConfigDir}`);
      expect(lines).toContain(`CODEX_HOME=${environment.codexHome}`);
      expect(lines).toContain(`PI_CODING_AGENT_DIR=${environment.piAgentDir}`);
      expect(lines).toContain("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1");
      expect(printed.stdout()).not.toContain("must-not-leak");
    } finally {
      delete process.env.BRIDGEWORKS_CALLER_SECRET;
    }
    expect(readFileSync(join(environment.codexHome, "config.toml"), "utf8")).toContain(
      'base_url = "http://127.0.0.1:9/v1"',
    );
    expect(JSON.parse(readFileSync(join(environment.piAgentDir, "models.json"), "utf8"))).toMatchObject({
      providers: { double: { baseUrl: "http://127.0.0.1:9", models: [{ id: "m-1" }] } },
    });
  });

  test("links the pinned clients first on PATH and removes everything on dispose", async () => {
    environment = createIsolatedEnvironment();
    const which = environment.spawn("sh", ["-c", "for c in claude codex pi; do command -v $c; done"]);
    await which.exited;
    expect(which.stdout().trim().split("\n")).toEqual(
      ["claude", "codex", "pi"].map((name) => join(environment!.binDir, name)),
    );
    const root = environment.root;
    await environment.dispose();
    environment = undefined;
    expect(existsSync(root)).toBe(false);
  });
});
