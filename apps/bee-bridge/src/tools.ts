import { type Board, BoardError } from "@bridgeworks/board";
import type { ActionPage, AgentIdentity, Cursor, SessionStartHookOutput } from "@bridgeworks/protocol";
import {
  describeError,
  mcpErrorResult as errorResult,
  mcpJsonResult as jsonResult,
  type Logger,
  parseToolArguments,
  type McpToolResult as ToolResult,
} from "@bridgeworks/runtime";
import type { z } from "zod";
import { type BoardAccess, describeBoardFailure, retryWhileBusy } from "./board-access.js";
import type { BridgeIdentity } from "./identity.js";
import {
  actionPageJsonSchema,
  ClaimInput,
  ClaimNextInput,
  CompleteInput,
  ListInput,
  PostInput,
  SessionEventToolInput,
  toolInputJsonSchema,
  WaitActionInput,
  WhoamiInput,
} from "./tool-arguments.js";

export const sessionEventToolName = "bee_session_event";

export interface ToolDescription {
  name: string;
  description: string;
  inputSchema: { type: "object"; [key: string]: unknown };
  outputSchema?: { type: "object"; [key: string]: unknown };
  _meta: Record<string, unknown>;
}

/** What a call gets from the transport: its abort signal and, when the client asked, a progress sink. */
export interface CallContext {
  signal: AbortSignal;
  /** Present only when the request carried `_meta.progressToken`. */
  reportProgress?: ((progress: number, total: number, message: string) => Promise<void>) | undefined;
}

export interface BridgeToolsOptions {
  access: BoardAccess;
  identity: BridgeIdentity;
  log: Logger;
  /** How often a waiting `bee_wait_action` reports progress. */
  progressIntervalMs: number;
  /** How long a write keeps retrying while another process holds the board's write lock. */
  busyRetryMs: number;
  /** How long a /clear from the hook tool may take before the tool answers "still running". */
  sessionEventAnswerWithinMs: number;
  now?: () => number;
}

const alwaysLoad = { "anthropic/alwaysLoad": true };
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

/** The bridge's MCP tools: descriptions for `tools/list` and one handler per tool. */
export class BridgeTools {
  readonly #options: BridgeToolsOptions;
  readonly #now: () => number;

  constructor(options: BridgeToolsOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  list(): ToolDescription[] {
    const pageSchema = actionPageJsonSchema();
    return [
      {
        name: "bee_wait_action",
        description:
          "Wait up to timeoutSeconds (1-60, default 45) for actions on the bee board that you can claim. " +
          "Returns {records, cursor}; pass cursor back on the next call. An empty page means nothing came: " +
          "call again with the returned cursor.",
        inputSchema: toolInputJsonSchema(WaitActionInput),
        outputSchema: pageSchema,
        _meta: alwaysLoad,
      },
      {
        name: "bee_list",
        description:
          "List board actions changed after a cursor (since and cursor are the same thing), oldest first, " +
          "with the cursor to page on.",
        inputSchema: toolInputJsonSchema(ListInput),
        outputSchema: pageSchema,
        _meta: alwaysLoad,
      },
      {
        name: "bee_post",
        description: 'Post an action to an agent by name, or to every agent with to: "*".',
        inputSchema: toolInputJsonSchema(PostInput),
        _meta: alwaysLoad,
      },
      {
        name: "bee_claim",
        description: "Claim an open action. outcome is claimed, or taken when someone else got it first.",
        inputSchema: toolInputJsonSchema(ClaimInput),
        _meta: alwaysLoad,
      },
      {
        name: "bee_claim_next",
        description:
          "Claim the oldest open action addressed to you or to everyone, in one step. outcome is claimed " +
          "with the record, or none when there is nothing to claim (wait with bee_wait_action, then call " +
          "again). It never loses a race to another agent.",
        inputSchema: toolInputJsonSchema(ClaimNextInput),
        _meta: alwaysLoad,
      },
      {
        name: "bee_complete",
        description: "Complete an action you claimed, with an optional result text.",
        inputSchema: toolInputJsonSchema(CompleteInput),
        _meta: alwaysLoad,
      },
      {
        name: "bee_whoami",
        description: "Your identity on the bee board (agent:<name>#<8 hex>); it changes on /clear.",
        inputSchema: toolInputJsonSchema(WhoamiInput),
        _meta: alwaysLoad,
      },
      {
        name: sessionEventToolName,
        description:
          "Internal: called by Claude Code's SessionStart mcp_tool hook on /clear. Not for the model.",
        inputSchema: toolInputJsonSchema(SessionEventToolInput),
        _meta: alwaysLoad,
      },
    ];
  }

  async call(name: string, args: unknown, context: CallContext): Promise<ToolResult> {
    this.#options.log.debug("tool call", { tool: name, progress: context.reportProgress !== undefined });
    switch (name) {
      case "bee_wait_action":
        return this.#withArguments(WaitActionInput, args, (input) => this.#wait(input, context));
      case "bee_list":
        return this.#withArguments(ListInput, args, (input) => this.#list(input));
      case "bee_post":
        return this.#withArguments(PostInput, args, (input) => this.#post(input));
      case "bee_claim":
        return this.#withArguments(ClaimInput, args, (input) =>
          this.#write(async (board, me) => board.claim(me, input.actionId)),
        );
      case "bee_claim_next":
        return this.#withArguments(ClaimNextInput, args, () =>
          this.#write(async (board, me) => board.claimNext(me), { ifUnsure: unsureClaimHint }),
        );
      case "bee_complete":
        return this.#withArguments(CompleteInput, args, (input) =>
          this.#write(async (board, me) => board.complete(me, input.actionId, input.result)),
        );
      case "bee_whoami":
        return this.#withArguments(WhoamiInput, args, () => this.#whoami());
      case sessionEventToolName:
        return this.#withArguments(SessionEventToolInput, args, (input) => this.#sessionEvent(input));
      default:
        return errorResult(`name: no tool called ${JSON.stringify(name)}`);
    }
  }

  async #withArguments<Schema extends z.ZodType>(
    schema: Schema,
    raw: unknown,
    run: (input: z.output<Schema>) => Promise<ToolResult>,
  ): Promise<ToolResult> {
    const parsed = parseToolArguments(schema, raw);
    if (!parsed.ok) return errorResult(parsed.message);
    return run(parsed.value);
  }

  async #wait(input: z.output<typeof WaitActionInput>, context: CallContext): Promise<ToolResult> {
    const { signal, reportProgress } = context;
    let board: Board;
    let me: AgentIdentity;
    try {
      board = await this.#options.access.board();
      me = await this.#options.identity.current();
    } catch (error) {
      return errorResult(describeBoardFailure(error, retryHint));
    }
    const startedAt = this.#now();
    const total = input.timeoutSeconds;
    const ticker =
      reportProgress === undefined
        ? undefined
        : setInterval(() => {
            const elapsed = Math.min(total, Math.round((this.#now() - startedAt) / 100) / 10);
            reportProgress(
              elapsed,
              total,
              `waiting for bee actions (${Math.round(elapsed)}s of ${total}s)`,
            ).catch(() => {});
          }, this.#options.progressIntervalMs);
    try {
      const page = await board.waitForClaimable(me, input.cursor as Cursor | undefined, {
        timeoutMs: input.timeoutSeconds * 1000,
        signal,
      });
      return pageResult(page);
    } catch (error) {
      // A cancelled call ends here; the SDK drops whatever it would have returned.
      if (signal.aborted) {
        this.#options.log.info("tool call cancelled", {
          tool: "bee_wait_action",
          reason: describeError(signal.reason),
        });
        throw signal.reason;
      }
      return errorResult(describeBoardFailure(error, retryHint));
    } finally {
      if (ticker) clearInterval(ticker);
    }
  }

  async #list(input: z.output<typeof ListInput>): Promise<ToolResult> {
    if (input.since !== undefined && input.cursor !== undefined && input.since !== input.cursor) {
      return errorResult("since: is the same as cursor; give one of them");
    }
    try {
      const board = await this.#options.access.board();
      const page = await board.list({
        cursor: (input.cursor ?? input.since) as Cursor | undefined,
        limit: input.limit,
      });
      return pageResult(page);
    } catch (error) {
      return errorResult(describeBoardFailure(error, retryHint));
    }
  }

  async #post(input: z.output<typeof PostInput>): Promise<ToolResult> {
    return this.#write((board, me) =>
      board.post({ kind: input.kind, to: input.to, from: me, body: input.body }),
    );
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

  async #sessionEvent(input: SessionEventToolInput): Promise<ToolResult> {
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

function pageResult(page: ActionPage): ToolResult {
  return jsonResult(page);
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
