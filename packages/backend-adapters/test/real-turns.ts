import { copyFileSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import {
  type ApiName,
  type ModelDouble,
  type ScriptInput,
  startModelDouble,
  textReply,
} from "@bridgeworks/model-double";
import type { BackendEvent } from "@bridgeworks/protocol";
import { createIsolatedEnvironment, type IsolatedEnvironment, withTimeout } from "@bridgeworks/test-harness";
import { expect } from "vitest";
import type { McpSpec, PreparedTurn, RunningTurn, TurnResult } from "../src/index.js";
import { isSameProcess, runTurn } from "../src/index.js";

/** Generous: a real turn takes ~0.5 s here, but a loaded machine must not make a test flaky. */
export const turnTimeoutMs = 30_000;

export interface RealWorld {
  double: ModelDouble;
  environment: IsolatedEnvironment;
  dispose(): Promise<void>;
}

export async function startWorld(script: ScriptInput, model?: string): Promise<RealWorld> {
  const double = await startModelDouble(script);
  const environment = createIsolatedEnvironment({ modelUrl: double.url, ...(model && { model }) });
  return {
    double,
    environment,
    async dispose() {
      await environment.dispose();
      await double.close();
    },
  };
}

/** Every request is answered "ok". */
export const alwaysOk: ScriptInput = {
  steps: [{ repeat: true, response: { events: [{ type: "text", text: "ok" }] } }],
};

/** The first turn is answered "FIRST ANSWER", a later one whose prompt says SECOND "second answer". */
export const twoTurns: ScriptInput = {
  steps: [
    textReply("SECOND", "second answer"),
    { response: { events: [{ type: "text", text: "FIRST ANSWER" }] } },
  ],
};

/** The model never answers, so a turn runs until it is stopped. */
export const stalls: ScriptInput = { steps: [{ response: { events: [{ type: "stall" }] } }] };

/** The conversation the latest request on `api` carried (`messages` or `input`), as JSON text. */
export function lastHistory(world: RealWorld, api: ApiName): string {
  const request = world.double.requests.filter((entry) => entry.api === api).at(-1);
  const body = request?.body as { messages?: unknown; input?: unknown } | undefined;
  return JSON.stringify(api === "anthropic" ? body?.messages : body?.input);
}

export interface ObservedTurn {
  running: Promise<RunningTurn>;
  events: BackendEvent[];
  result: Promise<TurnResult>;
}

/** Runs a prepared turn through the environment's process tracker, so dispose() ends it by pid. */
export function observeTurn(world: RealWorld, prepared: PreparedTurn): ObservedTurn {
  const events: BackendEvent[] = [];
  const running = runTurn(
    prepared,
    { onEvent: (event) => events.push(event) },
    {
      spawn: (command, args, options) => world.environment.processes.spawn(command, args, options).child,
    },
  );
  return {
    running,
    events,
    result: withTimeout(
      running.then((turn) => turn.result),
      turnTimeoutMs,
      () => `turn not done; events: ${JSON.stringify(events)}`,
    ),
  };
}

/**
 * The echo MCP server, copied to a path with a space and quotes so each CLI's rendering of the
 * mount (JSON for Claude, TOML for Codex) is exercised by the real parser.
 */
export function echoMcp(world: RealWorld, suffix: string): McpSpec {
  const script = join(world.environment.root, 'echo "mcp" server.mjs');
  copyFileSync(new URL("./fixtures/echo-mcp-server.mjs", import.meta.url), script);
  return {
    mount: { command: process.execPath, args: [script], env: { ECHO_SUFFIX: suffix } },
    tools: ["echo"],
    toolTimeoutMs: 60_000,
  };
}

/**
 * Pids still running in a process group. Zombies do not count: here PID 1 does not reap, so the
 * git children codex leaves unreaped stay as zombies after their parent is gone.
 */
export function liveGroupMembers(pgid: number): number[] {
  const live: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    // Fields after the parenthesised command: state, ppid, pgrp, ...
    const [state, , group] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(group) === pgid && state !== "Z") live.push(Number(entry));
  }
  return live;
}

export function textsOf(events: readonly BackendEvent[], type: "assistant.text" | "reasoning"): string[] {
  return events.flatMap((event) => (event.type === type ? [event.text] : []));
}

/** After a stop: the CLI, its process group and every process the environment spawned are gone. */
export function expectNoProcessLeft(world: RealWorld, running: RunningTurn): void {
  expect(isSameProcess(running.identity)).toBe(false);
  expect(liveGroupMembers(running.identity.pid)).toEqual([]);
  expect(world.environment.processes.livePids()).toEqual([]);
}
