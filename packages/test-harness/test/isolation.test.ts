import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import {
  createIsolatedEnvironment,
  type IsolatedEnvironment,
  isProcessAlive,
  ProcessTracker,
  waitUntil,
} from "../src/index.js";

describe("process tracker", () => {
  const tracker = new ProcessTracker();
  afterEach(() => tracker.endAll());

  test("isProcessAlive: a running process is alive; a zombie and a reaped process are not", async () => {
    // `sleep 0` exits at once and its parent, exec'd into `sleep 300`, never reaps it: a zombie.
    const shell = tracker.spawn("sh", ["-c", "sleep 0 & echo $!; exec sleep 300"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const zombie = Number((await shell.waitForOutput((out) => out.includes("\n"), 10_000)).trim());
    await waitUntil(
      () => readFileSync(`/proc/${zombie}/stat`, "utf8").includes(") Z "),
      10_000,
      "the child became a zombie",
    );
    expect(isProcessAlive(zombie)).toBe(false);
    expect(isProcessAlive(shell.pid)).toBe(true);
    await tracker.endAll();
    await shell.exited;
    expect(isProcessAlive(shell.pid)).toBe(false);
  });

  test("ends a process and the children it left in its group, by pid", async () => {
    const shell = tracker.spawn("sh", ["-c", "sleep 300 & echo $!; wait"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    const childPid = Number((await shell.waitForOutput((out) => out.includes("\n"), 10_000)).trim());
    expect(isProcessAlive(childPid)).toBe(true);

    await tracker.endAll(500);

    expect(isProcessAlive(shell.pid)).toBe(false);
    // The orphan is signalled with its group; the kernel may take a moment to finish it off.
    await waitUntil(() => !isProcessAlive(childPid), 5_000, `orphaned child ${childPid} gone`);
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
