import { type ModelDouble, type Script, startModelDouble } from "@bridgeworks/model-double";
import { createIsolatedEnvironment, type IsolatedEnvironment } from "@bridgeworks/test-harness";
import { expect } from "vitest";
import {
  messagesOf,
  mismatches,
  type PiEvent,
  type PiLine,
  type PiOptions,
  PiProcess,
  piEnv,
  readDiag,
} from "./pi-driver.js";

/** One double, one isolated environment and one `pi` per scenario; `end()` checks quiescence. */
export class Scenario {
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
    return new PiProcess(this.environment, line, {
      mode: "rpc",
      ...options,
      env: piEnv(this.environment, options.env),
    });
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
    await this.environment.dispose();
    await this.double.close();
  }
}
