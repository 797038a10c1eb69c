import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ScriptInput } from "@bridgeworks/model-double";
import type { Backend, FlootSession } from "@bridgeworks/protocol";
import { afterEach, describe, expect, test } from "vitest";
import { appDir, FlootWorld } from "./daemon-harness.js";

// Issue 36: a session's commands run in its CLI's own sandbox by default, configured per turn by the
// daemon. Each backend's real CLI runs a probe that tries to reach what the sandbox hides, then does
// a workspace's normal work (write a file, build, test); an unconfined session runs the same probe and
// reaches everything, so the probe is shown to see what it reports.

const probeScript = join(appDir, "test", "hostile", "confinement-probe.mjs");

let world: FlootWorld | undefined;
afterEach(async () => {
  await world?.dispose();
  world = undefined;
});

const shellTool = (backend: Backend) => ({ equals: backend === "claude" ? "Bash" : "exec_command" });
const shellInput = (backend: Backend, command: string) =>
  backend === "claude" ? { command, description: "run it" } : { cmd: command };

/**
 * The probe (its places in the workspace's `probe-places.json`, written once the daemon runs), then
 * (Claude) a Write, then a build and its tests in the workspace, then a final text.
 */
function script(backend: Backend): ScriptInput {
  const call = (id: string, command: string) => ({
    type: "tool_use" as const,
    id,
    nameFrom: shellTool(backend),
    input: shellInput(backend, command),
  });
  const build = call(backend === "claude" ? "toolu_build" : "call_build", "node build.mjs && node --test");
  const afterProbe =
    backend === "claude"
      ? {
          type: "tool_use" as const,
          id: "toolu_write",
          name: "Write",
          input: { file_path: "src/extra.mjs", content: "export const extra = 2;\n" },
        }
      : build;
  return {
    // Latest first: a request carries every earlier tool result too.
    steps: [
      {
        match: { toolResultFor: backend === "claude" ? "toolu_build" : "call_build" },
        repeat: true,
        response: { events: [{ type: "text", text: "Built and tested." }] },
      },
      {
        match: { toolResultFor: "toolu_write" },
        repeat: true,
        response: { events: [build] },
      },
      {
        match: { toolResultFor: backend === "claude" ? "toolu_probe" : "call_probe" },
        repeat: true,
        response: { events: [afterProbe] },
      },
      {
        match: { lastUserTextIncludes: "[probe]" },
        repeat: true,
        response: {
          events: [
            call(
              backend === "claude" ? "toolu_probe" : "call_probe",
              `node '${probeScript}' probe-places.json`,
            ),
          ],
        },
      },
    ],
  };
}

/** A small project: a build step that writes dist/, and a test of what it built. */
function writeProject(dir: string): void {
  mkdirSync(join(dir, "src"), { recursive: true });
  writeFileSync(join(dir, "package.json"), '{"type":"module"}\n');
  writeFileSync(join(dir, "src", "sum.mjs"), "export const sum = (a, b) => a + b;\n");
  writeFileSync(
    join(dir, "build.mjs"),
    'import { mkdirSync, readFileSync, writeFileSync } from "node:fs";\n' +
      'mkdirSync("dist", { recursive: true });\n' +
      'writeFileSync("dist/sum.mjs", readFileSync("src/sum.mjs"));\n',
  );
  writeFileSync(
    join(dir, "sum.test.mjs"),
    'import { test } from "node:test";\nimport assert from "node:assert";\n' +
      'import { sum } from "./dist/sum.mjs";\ntest("sum", () => assert.equal(sum(2, 3), 5));\n',
  );
}

interface ProbeReport {
  readDaemonJson: string;
  readDaemonKey: string;
  seesApiSocket: boolean;
  seesJournal: boolean;
  readOtherWorkspace: string;
  apiSocket: string;
  daemonPort: string;
  daemonProc: string;
  daemonMem: string;
  shimProcesses: number;
  writeHome: string;
  writeTmp: string;
  writeWorkspace: string;
}

async function runProbe(backend: Backend, sessionOptions: Record<string, unknown>) {
  world = await FlootWorld.create(backend, script(backend));
  const w = world;
  const daemon = await w.startDaemon();
  const other = join(w.env.root, "other-workspace");
  mkdirSync(other, { recursive: true });
  writeFileSync(join(other, "notes.txt"), "another session's work\n");
  await w.createSession({ workspace: other });
  const session: FlootSession = await w.createSession({
    ...(backend === "claude" && { allowedTools: ["Bash", "Write"] }),
    ...sessionOptions,
  });
  writeProject(session.workspace);
  const places = {
    stateDir: w.stateDir,
    apiSocket: daemon.file.socket,
    daemonPid: daemon.file.pid,
    port: daemon.file.port,
    otherWorkspace: other,
  };
  writeFileSync(join(session.workspace, "probe-places.json"), JSON.stringify(places));
  const turn = await w.send(session.id, "[probe] look around, then build and test");
  const ended = await w.waitForEnd(turn.id, 300_000).catch(async (error: unknown) => {
    const events = await w.events(turn.id);
    throw new Error(`${(error as Error).message}\n${events.map((e) => JSON.stringify(e.event)).join("\n")}`);
  });
  const outputs = (await w.events(turn.id))
    .map((envelope) => envelope.event)
    .filter((event) => event.type === "tool.completed")
    .map((event) => JSON.stringify(event));
  const probeLine = outputs.map((text) => /PROBE (\{.*?\})(?:\\n|")/.exec(text)?.[1]).find(Boolean);
  expect(probeLine, outputs.join("\n")).toBeDefined();
  const report = JSON.parse(JSON.parse(`"${probeLine!}"`)) as ProbeReport;
  return { ended, report, session, other, outputs, w };
}

describe.each(["claude", "codex"] as const)("the sandbox, %s", (backend) => {
  test("a confined turn's commands reach neither the daemon nor another workspace, and its normal work passes", {
    timeout: 400_000,
  }, async () => {
    const { ended, report, session, other, outputs, w } = await runProbe(backend, {});
    expect(ended.phase).toBe("completed");
    expect(report.readDaemonJson).not.toBe("ok");
    expect(report.readDaemonKey).not.toBe("ok");
    expect(report.seesApiSocket).toBe(false);
    expect(report.seesJournal).toBe(false);
    expect(report.readOtherWorkspace).not.toBe("ok");
    expect(report.apiSocket).not.toBe("ok");
    expect(report.daemonPort).not.toMatch(/^status/);
    expect(report.daemonProc).not.toBe("ok");
    expect(report.daemonMem).not.toBe("ok");
    expect(report.shimProcesses).toBe(0);
    // A hidden dir is an empty scratch tmpfs in Claude Code's sandbox (a write lands there and is gone
    // with the command) and absent in Codex's: either way nothing reaches the real dir.
    expect(existsSync(join(w.stateDir, "planted"))).toBe(false);
    expect(existsSync(join(other, "planted"))).toBe(false);
    expect(report.writeHome).not.toBe("ok");
    expect(report.writeTmp).not.toBe("ok");
    expect(report.writeWorkspace).toBe("ok");
    // Normal work: the file tool wrote in the workspace, the build wrote dist/, the tests passed.
    expect(readFileSync(join(session.workspace, "probe-wrote.txt"), "utf8")).toBe("inside");
    expect(readFileSync(join(session.workspace, "dist", "sum.mjs"), "utf8")).toContain("sum");
    if (backend === "claude") expect(existsSync(join(session.workspace, "src", "extra.mjs"))).toBe(true);
    expect(outputs.join("\n")).toMatch(/pass 1/);
  });

  test("an unconfined session's commands reach all of it (what the probe sees without a sandbox)", {
    timeout: 400_000,
  }, async () => {
    const { ended, report } = await runProbe(backend, { sandbox: { enabled: false } });
    expect(ended.phase).toBe("completed");
    expect(report.readDaemonJson).toBe("ok");
    expect(report.seesApiSocket).toBe(true);
    expect(report.readOtherWorkspace).toBe("ok");
    expect(report.apiSocket).toBe("ok");
    expect(report.daemonProc).toBe("ok");
    expect(report.shimProcesses).toBeGreaterThan(0);
  });
});

describe("the sandbox, Claude Code's file tools", () => {
  test("deny rules keep Read from the daemon's files; a call outside the workspace into the state dir is refused unasked", {
    timeout: 400_000,
  }, async () => {
    world = await FlootWorld.create("claude", {
      steps: [
        {
          match: { toolResultFor: "toolu_write_out" },
          repeat: true,
          response: { events: [{ type: "text", text: "Done." }] },
        },
        {
          match: { toolResultFor: "toolu_read_key" },
          repeat: true,
          response: {
            events: [
              {
                type: "tool_use",
                id: "toolu_write_out",
                name: "Write",
                input: { file_path: "../../../planted-by-tool", content: "x" },
              },
            ],
          },
        },
        {
          match: { lastUserTextIncludes: "[files]" },
          repeat: true,
          response: {
            events: [
              // The default workspace is <state>/sessions/<id>/workspace: three levels up is the state dir.
              {
                type: "tool_use",
                id: "toolu_read_key",
                name: "Read",
                input: { file_path: "../../../daemon.key" },
              },
            ],
          },
        },
      ],
    });
    const w = world;
    await w.startDaemon();
    // Read allowed everywhere by the session's own rule: the deny rules still win.
    const session = await w.createSession({ allowedTools: ["Read"], permissionMode: "default" });
    const turn = await w.send(session.id, "[files] read the key, then plant a file");
    expect((await w.waitForEnd(turn.id, 300_000)).phase).toBe("completed");
    const results = (await w.events(turn.id))
      .map((envelope) => envelope.event)
      .filter((event) => event.type === "tool.completed");
    const byId = new Map(results.map((event) => [event.toolId, event]));
    expect(byId.get("toolu_read_key")).toMatchObject({ isError: true });
    expect(JSON.stringify(byId.get("toolu_read_key"))).toMatch(/denied by your permission settings/);
    expect(JSON.stringify(byId.get("toolu_read_key"))).not.toContain(
      readFileSync(join(w.stateDir, "daemon.key"), "utf8").trim(),
    );
    expect(byId.get("toolu_write_out")).toMatchObject({ isError: true });
    expect(JSON.stringify(byId.get("toolu_write_out"))).toMatch(
      /outside what this confined session may touch/,
    );
    expect(existsSync(join(w.stateDir, "planted-by-tool"))).toBe(false);
    // Refused without asking anyone: no permission request was raised.
    const asked = await w.client.request<{ requests: unknown[] }>("GET", "/v1/permission-requests?all");
    expect(asked.requests).toEqual([]);
  });
});
