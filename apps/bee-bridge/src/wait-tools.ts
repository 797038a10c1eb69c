import type { Board } from "@bridgeworks/board";
import type { AgentIdentity, Cursor } from "@bridgeworks/protocol";
import {
  describeError,
  mcpErrorResult as errorResult,
  mcpJsonResult as jsonResult,
  type Logger,
  type McpToolResult as ToolResult,
} from "@bridgeworks/runtime";
import type { z } from "zod";
import { type BoardAccess, describeBoardFailure } from "./board-access.js";
import type { BridgeIdentity } from "./identity.js";
import type { WaitActionInput, WaitForInput } from "./tool-arguments.js";

/** What a call gets from the transport: its abort signal and, when the client asked, a progress sink. */
export interface CallContext {
  signal: AbortSignal;
  /** Present only when the request carried `_meta.progressToken`. */
  reportProgress?: ((progress: number, total: number, message: string) => Promise<void>) | undefined;
}

export interface WaitToolsOptions {
  access: BoardAccess;
  identity: BridgeIdentity;
  log: Logger;
  /** How often a waiting tool reports progress. */
  progressIntervalMs: number;
  now: () => number;
}

const retryHint = "retry with the same cursor";

/** The two bounded waits: for actions this agent can claim, and for one action to be claimed or completed. */
export class WaitTools {
  readonly #options: WaitToolsOptions;

  constructor(options: WaitToolsOptions) {
    this.#options = options;
  }

  async waitForClaimable(input: z.output<typeof WaitActionInput>, context: CallContext): Promise<ToolResult> {
    let board: Board;
    let me: AgentIdentity;
    try {
      board = await this.#options.access.board();
      me = await this.#options.identity.current();
    } catch (error) {
      return errorResult(describeBoardFailure(error, retryHint));
    }
    return this.#bounded(
      "bee_wait_action",
      input.timeoutSeconds,
      context,
      "bee actions",
      retryHint,
      async () =>
        jsonResult(
          await board.waitForClaimable(me, input.cursor as Cursor | undefined, {
            timeoutMs: input.timeoutSeconds * 1000,
            signal: context.signal,
          }),
        ),
    );
  }

  async waitForAction(input: z.output<typeof WaitForInput>, context: CallContext): Promise<ToolResult> {
    let board: Board;
    try {
      board = await this.#options.access.board();
    } catch (error) {
      return errorResult(describeBoardFailure(error, "retry the call"));
    }
    const what = `${input.actionId} to be ${input.until}`;
    return this.#bounded("bee_wait_for", input.timeoutSeconds, context, what, "retry the call", async () =>
      jsonResult(
        await board.waitForAction(input.actionId, input.until, {
          timeoutMs: input.timeoutSeconds * 1000,
          signal: context.signal,
        }),
      ),
    );
  }

  /** Runs a wait with progress every interval (when asked for) and turns failures into tool errors. */
  async #bounded(
    tool: string,
    totalSeconds: number,
    context: CallContext,
    what: string,
    retry: string,
    wait: () => Promise<ToolResult>,
  ): Promise<ToolResult> {
    const { signal, reportProgress } = context;
    const startedAt = this.#options.now();
    const ticker =
      reportProgress === undefined
        ? undefined
        : setInterval(() => {
            const elapsed = Math.min(totalSeconds, Math.round((this.#options.now() - startedAt) / 100) / 10);
            reportProgress(
              elapsed,
              totalSeconds,
              `waiting for ${what} (${Math.round(elapsed)}s of ${totalSeconds}s)`,
            ).catch(() => {});
          }, this.#options.progressIntervalMs);
    try {
      return await wait();
    } catch (error) {
      // A cancelled call ends here; the SDK drops whatever it would have returned.
      if (signal.aborted) {
        this.#options.log.info("tool call cancelled", { tool, reason: describeError(signal.reason) });
        throw signal.reason;
      }
      return errorResult(describeBoardFailure(error, retry));
    } finally {
      if (ticker) clearInterval(ticker);
    }
  }
}
