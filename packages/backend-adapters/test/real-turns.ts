import { copyFileSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type ModelDouble, type ScriptInput, startModelDouble } from "@bridgeworks/model-double";
import type { BackendEvent } from "@bridgeworks/protocol";
import { createIsolatedEnvironment, type IsolatedEnvironment } from "@bridgeworks/test-harness";
import type { McpSpec, PreparedTurn, RunningTurn, TurnResult } from "../src/index.js";
import { runTurn } from "../src/index.js";

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

export interface ObservedTurn {
  running: RunningTurn;
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
    result: withTimeout(running.result, turnTimeoutMs, () => JSON.stringify(events)),
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

function withTimeout<T>(promise: Promise<T>, ms: number, describeState: () => string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`turn not done after ${ms} ms; events: ${describeState()}`)),
      ms,
    );
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
