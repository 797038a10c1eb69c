import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type ModelDouble, type Script, startModelDouble, textReply } from "@bridgeworks/model-double";
import { createIsolatedEnvironment, type IsolatedEnvironment } from "@bridgeworks/test-harness";
import { expect } from "vitest";
import {
  claudeProcessesOf,
  messagesOf,
  mismatches,
  type PiEvent,
  type PiLine,
  type PiOptions,
  PiProcess,
  piEnv,
  readDiag,
} from "./pi-driver.js";

/**
 * One double, one isolated environment and the `pi` processes of one scenario. `expectQuiescent()`
 * checks delivery; `dispose()` ends every Pi as a user would and fails if a Claude Code process
 * outlived its Pi session.
 */
export class Scenario {
  private readonly pis: PiProcess[] = [];

  private constructor(
    readonly double: ModelDouble,
    readonly environment: IsolatedEnvironment,
  ) {}

  static async start(script: Script, env: Record<string, string> = {}): Promise<Scenario> {
    const double = await startModelDouble(script);
    const environment = createIsolatedEnvironment({ modelUrl: double.url, env });
    return new Scenario(double, environment);
  }

  pi(line: PiLine, options: Partial<PiOptions> = {}): PiProcess {
    const pi = new PiProcess(this.environment, line, {
      mode: "rpc",
      ...options,
      env: piEnv(this.environment, options.env),
    });
    this.pis.push(pi);
    return pi;
  }

  /**
   * Ends Pi as a user would (RPC: its input closes; `-p`/json: it exits on its own) and returns the
   * Claude Code processes still alive in its process group once it has exited.
   */
  async endPi(pi: PiProcess): Promise<number[]> {
    if (pi.mode === "rpc") pi.process.child.stdin?.end();
    const exited = await Promise.race([pi.process.exited, delay(30_000).then(() => undefined)]);
    if (!exited) throw new Error(`pi ${pi.pid} did not exit within 30 s of its input closing`);
    // ps may still list a child the kernel is about to reap.
    let left = claudeProcessesOf(pi);
    for (let tries = 0; left.length > 0 && tries < 5; tries++) {
      await delay(100);
      left = claudeProcessesOf(pi);
    }
    return left;
  }

  /** Sends a prompt over RPC and waits for the run to end; returns that run's events. */
  async turn(
    pi: PiProcess,
    message: string,
    images?: { type: "image"; data: string; mimeType: string }[],
  ): Promise<PiEvent[]> {
    const from = pi.events().length;
    pi.prompt(message, images);
    await pi.waitForAgentEnd(from);
    return pi.events().slice(from);
  }

  diag() {
    return readDiag(this.environment);
  }

  /**
   * Pi keeps almost nothing when it compacts: the cut falls inside the last turn, so Pi summarizes the
   * history before it and that turn's prefix (Pi 0.73 asks for both at once, without a session id;
   * Pi 1.x one by one).
   */
  keepAlmostNothingAtCompaction(): void {
    writeFileSync(
      join(this.environment.piAgentDir, "settings.json"),
      JSON.stringify({ compaction: { keepRecentTokens: 1 } }),
    );
  }

  /** The quiescence check every e2e test ends with: no mismatch record was ever written. */
  expectQuiescent(): void {
    expect(mismatches(this.environment)).toEqual([]);
    const unmatched = this.double.unmatched.map((request) => ({
      failure: request.response.failure,
      lastMessages: JSON.stringify(messagesOf(request.body).slice(-2)).slice(0, 1500),
    }));
    expect(unmatched).toEqual([]);
  }

  async dispose(): Promise<void> {
    const outlived: string[] = [];
    try {
      for (const pi of this.pis) {
        const left = await this.endPi(pi);
        if (left.length > 0) outlived.push(`pi ${pi.pid}: claude ${left.join(", ")}`);
      }
    } finally {
      await this.environment.dispose();
      await this.double.close();
    }
    if (outlived.length > 0) throw new Error(`Claude Code outlived its Pi session (${outlived.join("; ")})`);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Prompts `[one] first question` … `[four] fourth question` answered `ONE ANSWER` … `FOUR ANSWER`, and
 * Pi's two summaries of a compaction after the second (they quote the conversation as `[User]: …`).
 */
export function compactionScript(): Script {
  return {
    steps: [
      textReply("[User]: [one] first question", "HISTORY SUMMARY"),
      textReply("[User]: [two] second question", "TURN PREFIX SUMMARY"),
      textReply("[one]", "ONE ANSWER"),
      textReply("[two]", "TWO ANSWER"),
      textReply("[three]", "THREE ANSWER"),
      textReply("[four]", "FOUR ANSWER"),
    ],
  };
}
