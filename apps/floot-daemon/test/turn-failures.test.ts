import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { textReply } from "@bridgeworks/model-double";
import type { Backend, FlootDaemonStatus } from "@bridgeworks/protocol";
import { afterEach, describe, expect, test } from "vitest";
import { bundlePath, FlootWorld } from "./daemon-harness.js";

// Nothing a turn does takes the daemon down: each of these ends that turn `failed`, naming the cause,
// and the daemon goes on serving (another session's turn, on the real other CLI, still completes).
// The broken CLIs below are stand-ins for what a real install can look like: not installed, not
// executable, dying at start, or flooding stdout with one endless line.

let world: FlootWorld | undefined;
afterEach(async () => {
  const problems = (await world?.dispose()) ?? [];
  world = undefined;
  expect(problems).toEqual([]);
});

const other: Record<Backend, Backend> = { claude: "codex", codex: "claude" };
const commandVariable: Record<Backend, string> = {
  claude: "FLOOT_CLAUDE_COMMAND",
  codex: "FLOOT_CODEX_COMMAND",
};
const installs: Record<Backend, string> = {
  claude: "npm install -g @anthropic-ai/claude-code",
  codex: "npm install -g @openai/codex",
};

/** `floot send <session> <prompt> --follow`, as a user runs it. */
function floot(
  w: FlootWorld,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bundlePath, ...args, "--state", w.stateDir], {
      env: w.env.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The daemon answers, and a turn of the other backend (its real CLI on the double) completes. */
async function expectStillServing(w: FlootWorld, backend: Backend): Promise<void> {
  const status = await w.client.request<FlootDaemonStatus>("GET", "/v1/status");
  expect(status.pid).toBe(w.daemon!.process.pid);
  const session = await w.client.request<{ id: string }>("POST", "/v1/sessions", { backend: other[backend] });
  const turn = await w.send(session.id, "[still] there?");
  const done = await w.waitForEnd(turn.id);
  expect(done.phase, JSON.stringify(done.error)).toBe("completed");
}

describe.each<Backend>(["claude", "codex"])("a turn that cannot run: %s", (backend) => {
  async function setUp(): Promise<FlootWorld> {
    world = await FlootWorld.create(backend, {
      steps: [textReply("[still]", "STILL HERE", { repeat: true })],
    });
    return world;
  }

  test("its CLI is not installed: floot send reports the missing command, its PATH and how to install it", async () => {
    const w = await setUp();
    // A PATH with node and the other backend's CLI, without this one.
    const bin = join(w.env.root, "partial-bin");
    mkdirSync(bin);
    symlinkSync(join(w.env.binDir, other[backend]), join(bin, other[backend]));
    const path = `${bin}:${dirname(process.execPath)}:/usr/bin:/bin`;
    await w.startDaemon({ PATH: path });
    const session = await w.createSession();

    const sent = await floot(w, ["send", session.id, "[hello] are you there", "--follow"]);
    expect(sent.code).toBe(1);
    const [turn] = await w.turns(session.id);
    expect(turn).toMatchObject({ phase: "failed", error: { code: "cli_not_found" } });
    expect(turn!.error!.message).toBe(
      `${backend} was not found: no executable named "${backend}" on PATH (${path}). ` +
        `Install ${backend === "claude" ? "Claude Code" : "Codex"} with: ${installs[backend]}, ` +
        `or set ${commandVariable[backend]} to its path`,
    );
    expect(`${sent.stdout}${sent.stderr}`).toContain(`${backend} was not found`);
    await expectStillServing(w, backend);
  });

  test("a CLI that is not executable, one that exits at once, one that floods stdout, a workspace that cannot be made", async () => {
    const w = await setUp();
    const dir = join(w.env.root, "broken");
    mkdirSync(dir);
    const script = (name: string, body: string, mode = 0o755) => {
      const path = join(dir, name);
      writeFileSync(path, `#!/bin/sh\n${body}\n`);
      chmodSync(path, mode);
      return path;
    };
    const cases = [
      {
        command: script("not-executable", "echo never", 0o644),
        code: "cli_not_executable",
        says: "not an executable file",
      },
      {
        command: script("exits-at-once", "echo 'fatal: no config' >&2; exit 3"),
        code: "cli_crashed",
        says: "exited with code 3: fatal: no config",
      },
      {
        command: script("floods", "head -c 52428800 /dev/zero | tr '\\\\0' x; sleep 30"),
        code: "cli_output_too_large",
        says: "wrote a line of output longer than 8388608 bytes",
      },
    ];
    for (const broken of cases) {
      await w.startDaemon({ [commandVariable[backend]]: broken.command });
      const session = await w.createSession();
      const turn = await w.send(session.id, "[hello] try");
      const done = await w.waitForEnd(turn.id);
      expect(done, broken.code).toMatchObject({ phase: "failed", error: { code: broken.code } });
      expect(done.error?.message).toContain(broken.says);
      await expectStillServing(w, backend);
      await w.killDaemon();
    }

    await w.startDaemon();
    const homeless = await w.createSession({ workspace: "/proc/floot-no-such-dir/workspace" });
    const turn = await w.send(homeless.id, "[hello] try");
    const done = await w.waitForEnd(turn.id);
    expect(done).toMatchObject({ phase: "failed", error: { code: "workspace_unavailable" } });
    expect(done.error?.message).toContain("/proc/floot-no-such-dir/workspace could not be created");
    await expectStillServing(w, backend);
  });
});
