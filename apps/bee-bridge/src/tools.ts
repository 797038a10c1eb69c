import { type Board, BoardError } from "@bridgeworks/board";
import type {
  ActionId,
  AgentIdentity,
  ClaimNextOutcome,
  ClaimOutcome,
  Cursor,
  SessionStartHookOutput,
} from "@bridgeworks/protocol";
import {
  describeError,
  mcpErrorResult as errorResult,
  mcpJsonResult as jsonResult,
  type Logger,
  type McpToolListing,
  type McpToolTable,
  type McpToolResult as ToolResult,
} from "@bridgeworks/runtime";
import type { z } from "zod";
import { type BoardAccess, describeBoardFailure, retryWhileBusy } from "./board-access.js";
import type { BridgeIdentity } from "./identity.js";
import type * as inputs from "./tool-arguments.js";
import { type BridgeToolHandlers, bridgeToolTable } from "./tool-table.js";
import { type CallContext, WaitTools } from "./wait-tools.js";

export { sessionEventToolName } from "./tool-table.js";
export type { CallContext } from "./wait-tools.js";

export interface BridgeToolsOptions {
  access: BoardAccess;
  identity: BridgeIdentity;
  log: Logger;
  /** How often a waiting tool reports progress. */
  progressIntervalMs: number;
  /** How long a write keeps retrying while another process holds the board's write lock. */
  busyRetryMs: number;
  /** How long a /clear from the hook tool may take before the tool answers "still running". */
  sessionEventAnswerWithinMs: number;
  now?: () => number;
}

const retryHint = "retry with the same cursor";
const unsureClaimHint =
  "call bee_list and look for an action claimedBy you before claiming the next (bee_whoami says who you are)";

/** A write whose outcome is unknown; not a BoardError, so the busy retry stops at it. */
class UnsureWrite extends Error {
  override readonly cause: BoardError;

  constructor(cause: BoardError) {
    super(cause.message);
    this.cause = cause;
  }
}

/** The bridge's MCP tools: their table (tool-table.ts) and what each runs. */
export class BridgeTools {
  readonly #options: BridgeToolsOptions;
  readonly #waits: WaitTools;
  /** The fencing token of each claim this bridge made, by action: its completes carry it. */
  readonly #fences = new Map<ActionId, { holder: AgentIdentity; fence: number }>();
  readonly #table: McpToolTable<CallContext>;

  constructor(options: BridgeToolsOptions) {
    this.#options = options;
    this.#waits = new WaitTools({ ...options, now: options.now ?? Date.now });
    this.#table = bridgeToolTable(this.#handlers());
  }

  list(): McpToolListing[] {
    return this.#table.list();
  }

  async call(name: string, args: unknown, context: CallContext): Promise<ToolResult> {
    this.#options.log.debug("tool call", { tool: name, progress: context.reportProgress !== undefined });
    return this.#table.call(name, args, context);
  }

  #handlers(): BridgeToolHandlers {
    return {
      waitAction: (input, context) => this.#waits.waitForClaimable(input, context),
      waitFor: (input, context) => this.#waits.waitForAction(input, context),
      list: async (input) => this.#list(input),
      post: async (input) =>
        this.#write((board, me) =>
          board.post({ kind: input.kind, to: input.to, from: me, body: input.body }),
        ),
      claim: async (input) =>
        this.#write(async (board, me) => this.#remember(me, await board.claim(me, input.actionId))),
      claimNext: async () =>
        this.#write(async (board, me) => this.#remember(me, await board.claimNext(me)), {
          ifUnsure: unsureClaimHint,
        }),
      complete: async (input) =>
        this.#write(async (board, me) => {
          // As the identity that claimed it, under its token: a claim lost with a lapsed lease is refused
          // stale_fence, even after the bridge moved on to a new identity.
          const held = this.#fences.get(input.actionId);
          const outcome = await board.complete(held?.holder ?? me, input.actionId, input.result, {
            fence: held?.fence,
          });
          this.#fences.delete(input.actionId);
          return outcome;
        }),
      decide: async (input) =>
        this.#write((board, me) => board.decide(me, input.actionId, input.decision, input.reason)),
      whoami: async () => this.#whoami(),
      sessionEvent: async (input) => this.#sessionEvent(input),
    };
  }

  #remember<T extends ClaimOutcome | ClaimNextOutcome>(me: AgentIdentity, outcome: T): T {
    if (outcome.outcome === "claimed" && outcome.record.claimedBy === me) {
      this.#fences.set(outcome.record.id, { holder: me, fence: outcome.record.fence });
    }
    return outcome;
  }

  async #list(input: z.output<typeof inputs.ListInput>): Promise<ToolResult> {
    if (input.since !== undefined && input.cursor !== undefined && input.since !== input.cursor) {
      return errorResult("since: is the same as cursor; give one of them");
    }
    try {
      const board = await this.#options.access.board();
      const page = await board.list({
        cursor: (input.cursor ?? input.since) as Cursor | undefined,
        limit: input.limit,
      });
      return jsonResult(page);
    } catch (error) {
      return errorResult(describeBoardFailure(error, retryHint));
    }
  }

  /**
   * Runs a write, repeating it while the board is busy. With `ifUnsure`, a write that may or may not
   * have been made is not repeated (a second claimNext could leave the first action held by an agent
   * that never heard of it); the agent gets that hint instead.
   */
  async #write(
    operation: (board: Board, me: AgentIdentity) => Promise<object>,
    options: { ifUnsure?: string } = {},
  ): Promise<ToolResult> {
    try {
      const board = await this.#options.access.board();
      const me = await this.#options.identity.current();
      const once = async () => {
        try {
          return await operation(board, me);
        } catch (error) {
          if (options.ifUnsure !== undefined && error instanceof BoardError && error.unsure) {
            throw new UnsureWrite(error);
          }
          throw error;
        }
      };
      const value = await retryWhileBusy(once, { withinMs: this.#options.busyRetryMs });
      return jsonResult(value);
    } catch (error) {
      if (error instanceof UnsureWrite) {
        return errorResult(describeBoardFailure(error.cause, options.ifUnsure ?? "retry the call"));
      }
      return errorResult(describeBoardFailure(error, "retry the call"));
    }
  }

  async #whoami(): Promise<ToolResult> {
    try {
      const identity = await this.#options.identity.current();
      return jsonResult({
        identity,
        name: this.#options.identity.name,
        board: this.#options.access.location,
      });
    } catch (error) {
      return errorResult(describeBoardFailure(error, "retry the call"));
    }
  }

  async #sessionEvent(input: inputs.SessionEventToolInput): Promise<ToolResult> {
    this.#options.log.info("session event", { source: input.source });
    try {
      if (input.source !== "clear") {
        return jsonResult(identityContext(`bee identity: ${await this.#options.identity.current()}`));
      }
      const retire = this.#options.identity.clear({ via: "session-event", sessionId: input.session_id });
      const outcome = await Promise.race([
        retire,
        delay(this.#options.sessionEventAnswerWithinMs).then(() => undefined),
      ]);
      if (outcome === undefined) {
        return jsonResult(
          identityContext("bee identity: a new identity is being registered; call bee_whoami to see it"),
        );
      }
      return jsonResult(
        identityContext(
          `bee identity: ${outcome.current} (the previous identity ${outcome.retired} was retired)`,
        ),
      );
    } catch (error) {
      this.#options.log.error("session event failed", { error: describeError(error) });
      return errorResult(`bee could not change identity on /clear: ${describeError(error)}`);
    }
  }
}

export function identityContext(additionalContext: string): SessionStartHookOutput {
  return { hookSpecificOutput: { hookEventName: "SessionStart", additionalContext } };
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
