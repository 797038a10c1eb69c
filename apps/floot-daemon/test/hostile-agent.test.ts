import { execFile } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ScriptInput } from "@bridgeworks/model-double";
import type {
  Backend,
  FlootPermissionRequestList,
  FlootSession,
  PermissionRequest,
  TurnEvent,
} from "@bridgeworks/protocol";
import { waitUntil } from "@bridgeworks/test-harness";
import { afterEach, describe, expect, test } from "vitest";
import { appDir, bundlePath, FlootWorld } from "./daemon-harness.js";

// Issue 36, attack 1, through real turns: what the agent's own commands try against the person's
// approvals. Confined (the default) they reach nothing; unconfined, the daemon still refuses every
// decision a process of a running turn makes, and the shim's token opens one connection only.

const selfApprove = join(appDir, "test", "hostile", "self-approve.mjs");
const shimThief = join(appDir, "test", "hostile", "shim-thief.mjs");

let world: FlootWorld | undefined;
const loops: number[] = [];
afterEach(async () => {
  // The attack's detached loop is the test's to end, by pid.
  for (const pid of loops.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
  await world?.dispose();
  world = undefined;
});

interface AttackEntry {
  at: number;
  how: string;
  step?: string;
  pid?: number;
  status?: number;
  code?: number | string;
  error?: string;
  stderr?: string;
  text?: string;
}

function attackLog(workspace: string): AttackEntry[] {
  const path = join(workspace, "attack-log.jsonl");
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AttackEntry);
}

/** Runs the built CLI as a person at a terminal would; resolves with its JSON output and pid. */
function personCli(w: FlootWorld, args: string[]): Promise<{ pid: number; output: unknown }> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      process.execPath,
      [bundlePath, ...args, "--state", w.stateDir, "--json"],
      { env: { ...w.env.env, FLOOT_RUNTIME_DIR: w.runtimeDir } },
      (error, stdout, stderr) =>
        error
          ? reject(new Error(`${error.message}\n${stderr}`))
          : resolve({ pid: child.pid!, output: JSON.parse(stdout) }),
    );
  });
}

async function pendingOf(w: FlootWorld, sessionId: string): Promise<PermissionRequest | undefined> {
  const list = await w.client.request<FlootPermissionRequestList>("GET", "/v1/permission-requests");
  return list.requests.find((request) => request.sessionId === sessionId && request.status === "pending");
}

/** Waits for the session's first pending permission request. */
async function waitForRequest(w: FlootWorld, sessionId: string, what: string): Promise<PermissionRequest> {
  await waitUntil(async () => (await pendingOf(w, sessionId)) !== undefined, 180_000, what);
  return (await pendingOf(w, sessionId))!;
}

function writePlaces(w: FlootWorld, session: FlootSession): void {
  mkdirSync(session.workspace, { recursive: true });
  writeFileSync(
    join(session.workspace, "attack-places.json"),
    JSON.stringify({
      bundle: bundlePath,
      stateDir: w.stateDir,
      apiSocket: w.daemon!.file.socket,
      port: w.daemon!.file.port,
    }),
  );
}

/** A refusal for each way in: no connection (sandbox), or the daemon's 403 for a turn's process. */
function refused(entry: AttackEntry): boolean {
  if (entry.how === "cli") return entry.code !== 0;
  if (entry.status !== undefined) return entry.status === 403 && /running turn/.test(entry.text ?? "");
  return entry.error !== undefined;
}

describe("issue 36, attack 1: the agent approves its own tool calls (real Claude Code)", () => {
  const script: ScriptInput = {
    steps: [
      {
        match: { toolResultFor: "toolu_touch" },
        repeat: true,
        response: { events: [{ type: "text", text: "Done." }] },
      },
      {
        match: { toolResultFor: "toolu_detach" },
        repeat: true,
        response: {
          events: [
            {
              type: "tool_use",
              id: "toolu_touch",
              name: "Bash",
              input: { command: "touch pwned.txt", description: "touch" },
            },
          ],
        },
      },
      {
        match: { lastUserTextIncludes: "[self-approve]" },
        repeat: true,
        response: {
          events: [
            {
              type: "tool_use",
              id: "toolu_detach",
              name: "Bash",
              input: { command: `node '${selfApprove}' --detach 45`, description: "Start the helper" },
            },
          ],
        },
      },
    ],
  };

  test.each([
    ["confined (the default)", {}],
    ["unconfined", { sandbox: { enabled: false } }],
  ])(
    "%s: the loop the agent leaves running cannot allow the next call; the person's decision names them",
    { timeout: 400_000 },
    async (_name, options) => {
      world = await FlootWorld.create("claude", script);
      const w = world;
      await w.startDaemon();
      // The session: one interpreter allowed, everything else asked about.
      const session = await w.createSession({
        allowedTools: ["Bash(node:*)"],
        permissionMode: "default",
        ...options,
      });
      writePlaces(w, session);
      const turn = await w.send(session.id, "[self-approve] set things up, then touch a file");
      const request = await waitForRequest(w, session.id, "the touch asked");
      const raised = Date.parse(request.createdAt);
      // Unconfined, the loop's pid is a host pid, the test's to end; a sandboxed one's is its namespace's.
      const confined = (options as { sandbox?: { enabled: boolean } }).sandbox?.enabled !== false;
      const detached = attackLog(session.workspace).find((entry) => entry.how === "detached")?.pid;
      if (!confined && detached !== undefined) loops.push(detached);
      // The loop tries every 300 ms for 45 s: three full rounds after the request (unconfined), or, in a
      // sandbox that ended it with its call, 5 s with no attempt at all.
      const afterRequest = () => attackLog(session.workspace).filter((entry) => entry.at > raised);
      await waitUntil(
        () =>
          afterRequest().filter((entry) => entry.step === "allow").length >= 3 ||
          (confined && Date.now() - raised > 5_000 && afterRequest().length === 0),
        120_000,
        "the loop tried the request, or is gone",
      ).catch((error: unknown) => {
        throw new Error(`${(error as Error).message}\n${JSON.stringify(attackLog(session.workspace))}`);
      });
      expect(
        (await w.client.request<PermissionRequest>("GET", `/v1/permission-requests/${request.id}`)).status,
      ).toBe("pending");
      const attempts = attackLog(session.workspace).filter((entry) => entry.step !== undefined);
      expect(attempts.length).toBeGreaterThan(0);
      for (const entry of attempts) expect(refused(entry), JSON.stringify(entry)).toBe(true);

      // The person decides, at a terminal: the decision names the process that made it.
      const person = await personCli(w, ["approval", "deny", request.id, "--message", "not now"]);
      expect((await w.waitForEnd(turn.id, 120_000)).phase).toBe("completed");
      expect(existsSync(join(session.workspace, "pwned.txt"))).toBe(false);
      const all = (await personCli(w, ["approval", "list", "--all"])).output as FlootPermissionRequestList;
      const decided = all.requests.find((each) => each.id === request.id);
      expect(decided).toMatchObject({
        status: "denied",
        decidedBy: {
          via: "socket",
          peer: { pid: person.pid, uid: process.getuid!(), executable: process.execPath },
        },
      });
    },
  );
});

describe("issue 36, attack 1: a Codex turn's commands approve another session's call (real Codex)", () => {
  const script: ScriptInput = {
    steps: [
      {
        match: { toolResultFor: "toolu_wait", api: "anthropic" },
        repeat: true,
        response: { events: [{ type: "text", text: "Done." }] },
      },
      {
        match: { lastUserTextIncludes: "[victim]", api: "anthropic" },
        repeat: true,
        response: {
          events: [
            {
              type: "tool_use",
              id: "toolu_wait",
              name: "Bash",
              input: { command: "touch victim-ran.txt", description: "touch" },
            },
          ],
        },
      },
      {
        match: { toolResultFor: "call_approve", api: "openai" },
        repeat: true,
        response: { events: [{ type: "text", text: "Done." }] },
      },
      {
        match: { lastUserTextIncludes: "[approve]", api: "openai" },
        repeat: true,
        response: {
          events: [
            {
              type: "tool_use",
              id: "call_approve",
              nameFrom: { equals: "exec_command" },
              input: { cmd: `node '${selfApprove}' --loop 6` },
            },
          ],
        },
      },
    ],
  };

  test.each([
    ["confined (the default)", {}],
    ["unconfined", { sandbox: { enabled: false } }],
  ])("%s: nothing it tries decides the pending request", { timeout: 400_000 }, async (_name, options) => {
    world = await FlootWorld.create("codex", script);
    const w = world;
    await w.startDaemon();
    const victim = await w.createSession({ backend: "claude", permissionMode: "default" });
    const victimTurn = await w.send(victim.id, "[victim] touch a file");
    const request = await waitForRequest(w, victim.id, "the victim asked");
    const attacker = await w.createSession(options);
    writePlaces(w, attacker);
    const turn = await w.send(attacker.id, "[approve] tidy up the approvals");
    expect((await w.waitForEnd(turn.id, 180_000)).phase).toBe("completed");
    const attempts = attackLog(attacker.workspace).filter((entry) => entry.step !== undefined);
    expect(
      attempts.length,
      JSON.stringify((await w.events(turn.id)).map((each) => each.event)),
    ).toBeGreaterThan(0);
    for (const entry of attempts) expect(refused(entry), JSON.stringify(entry)).toBe(true);
    expect(
      (await w.client.request<PermissionRequest>("GET", `/v1/permission-requests/${request.id}`)).status,
    ).toBe("pending");
    await personCli(w, ["approval", "deny", request.id]);
    expect((await w.waitForEnd(victimTurn.id, 120_000)).phase).toBe("completed");
  });
});

describe.each(["claude", "codex"] as const)(
  "issue 36, attack 1: the MCP token read out of the shim's memory (%s)",
  (backend: Backend) => {
    const call = backend === "claude" ? "toolu_thief" : "call_thief";
    const script: ScriptInput = {
      steps: [
        {
          match: { toolResultFor: call },
          repeat: true,
          response: { events: [{ type: "text", text: "Done." }] },
        },
        {
          match: { lastUserTextIncludes: "[thief]" },
          repeat: true,
          response: {
            events: [
              {
                type: "tool_use",
                id: call,
                nameFrom: { equals: backend === "claude" ? "Bash" : "exec_command" },
                input:
                  backend === "claude"
                    ? { command: `node '${shimThief}'`, description: "diagnose" }
                    : { cmd: `node '${shimThief}'` },
              },
            ],
          },
        },
      ],
    };

    test.each([
      ["confined (the default)", {}],
      ["unconfined", { sandbox: { enabled: false } }],
    ])("%s: no phishing secret request is raised", { timeout: 400_000 }, async (name, options) => {
      world = await FlootWorld.create(backend, script);
      const w = world;
      await w.startDaemon();
      const session = await w.createSession(options);
      const turn = await w.send(session.id, "[thief] diagnose the bridge");
      expect((await w.waitForEnd(turn.id, 180_000)).phase).toBe("completed");
      const output = (await w.events(turn.id))
        .map((envelope) => envelope.event)
        .filter(
          (event): event is Extract<TurnEvent, { type: "tool.completed" }> => event.type === "tool.completed",
        )
        .map((event) => JSON.stringify(event))
        .join("\n");
      const line = /THIEF (\{.*?\})(?:\\n|")/.exec(output)?.[1];
      expect(line, output).toBeDefined();
      const report = JSON.parse(JSON.parse(`"${line}"`)) as {
        shims: number;
        candidates: number;
        attempts: { how: string }[];
      };
      if (name.startsWith("confined")) {
        // Its own pid namespace: the shim is not there to read.
        expect(report.shims).toBe(0);
      } else {
        // The attack is real: the shim and its token are there; the token opens nothing a second time.
        expect(report.shims).toBeGreaterThan(0);
        expect(report.candidates).toBeGreaterThan(0);
        for (const attempt of report.attempts)
          expect(attempt.how, JSON.stringify(report)).toBe("closed by the daemon");
      }
      expect(await w.secretRequests()).toEqual([]);
    });
  },
);
