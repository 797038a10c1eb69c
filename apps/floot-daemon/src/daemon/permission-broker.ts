import {
  type DecidePermissionResponse,
  type DecisionActor,
  type PermissionDecision,
  type PermissionPromptAnswer,
  type PermissionRequest,
  permissionInputShownBytes,
  type TurnRecord,
} from "@bridgeworks/protocol";
import { JournalError, type TurnJournal } from "@bridgeworks/turn-journal";
import { digestShown } from "../shown-digest.js";
import { digestInput, ruleAllows, shownInput, suggestRule } from "./permission-rules.js";
import type { TurnContext } from "./secret-broker.js";

/** A call Claude Code asks about through the permission prompt tool. */
export interface PermissionCall {
  /** The asking call's tool_use id; the same call asking again finds its request. */
  toolCallKey: string;
  toolName: string;
  input: Record<string, unknown>;
}

export interface PermissionBrokerOptions {
  journal: TurnJournal;
  /** The session's rules in force: its `allowedTools` and the rules "allow for this session" added. */
  rulesOf(sessionId: string): string[];
  /** How long a request may wait for a human; undefined waits indefinitely. */
  timeoutOf(sessionId: string): number | undefined;
  /** Starts the retry of a turn whose orphaned request was decided. */
  startRetry(turn: TurnRecord): void;
  /**
   * For a confined turn: the path a call would touch that the turn may not reach (see
   * turn-confinement.ts); such a call is denied without asking anyone.
   */
  outOfBounds?(
    turnId: string,
    toolName: string,
    input: Readonly<Record<string, unknown>>,
  ): string | undefined;
  setTimeout?: (callback: () => void, ms: number) => { unref?(): unknown };
  clearTimeout?: (timer: unknown) => void;
  now?: () => number;
}

interface Waiter {
  turnId: string;
  input: Record<string, unknown>;
  resolve(answer: PermissionPromptAnswer): void;
}

const deniedByDefault = "The human denied this tool call.";

export type PermissionBrokerErrorCode = "digest_mismatch";

/** A decision the broker refuses: `code` says why, `message` names the request. */
export class PermissionBrokerError extends Error {
  constructor(
    readonly code: PermissionBrokerErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "PermissionBrokerError";
  }
}

/**
 * Between Claude Code's permission prompt and the human: the request goes to the journal and waits for a
 * decision. A decision made after a restart orphaned the request goes to the turn's retry, whose
 * identical call (same tool, same input) takes it; every decision is applied once.
 */
export class PermissionBroker {
  readonly #options: PermissionBrokerOptions;
  readonly #waiters = new Map<string, Waiter>();
  /** When each waiting call's request expires (ms since the epoch), for sessions with a timeout. */
  readonly #deadlines = new Map<string, number>();

  constructor(options: PermissionBrokerOptions) {
    this.#options = options;
  }

  async ask(
    context: TurnContext,
    call: PermissionCall,
    signal: AbortSignal,
  ): Promise<PermissionPromptAnswer> {
    const { journal } = this.#options;
    const { toolName, input } = call;
    const outside = this.#options.outOfBounds?.(context.turnId, toolName, input);
    if (outside !== undefined) {
      return {
        behavior: "deny",
        message: `floot: ${outside} is outside what this confined session may touch; the call was not run`,
      };
    }
    const rules = this.#options.rulesOf(context.sessionId);
    // A rule added by "allow for this session" during this turn: Claude Code read its rules at start.
    if (rules.some((rule) => ruleAllows(rule, toolName, input))) return allow(input);
    const inputDigest = digestInput(input);
    const carried = journal.findUnappliedPermissionDecision(context.sessionId, toolName, inputDigest);
    if (carried) return this.#apply(carried, context.turnId, input);
    const shown = shownInput(toolName, input);
    const shownBytes = Buffer.byteLength(shown, "utf8");
    if (shownBytes > permissionInputShownBytes) {
      return {
        behavior: "deny",
        message: `floot: the call is ${shownBytes} bytes as a permission request would show it, more than the ${permissionInputShownBytes} bytes one shows whole; it was not run and nobody was asked`,
      };
    }
    const suggestedRule = suggestRule(toolName, input);
    const request = journal.requestPermission(context.turnId, {
      toolCallKey: call.toolCallKey,
      toolName,
      inputSummary: shown,
      inputDigest,
      unmatchedRules: rules,
      ...(suggestedRule !== undefined && { suggestedRule }),
    });
    // The same tool_use id asked before with another input: a decision on what that request shows must
    // never let this call run.
    if (request.inputDigest !== inputDigest) {
      return {
        behavior: "deny",
        message: `floot: tool call ${call.toolCallKey} already asked with another input (request ${request.id}); this one was not run`,
      };
    }
    if (request.status !== "pending") {
      if (request.decision && request.appliedAt === undefined)
        return this.#apply(request, context.turnId, input);
      return { behavior: "deny", message: `floot: the permission request is ${request.status}` };
    }
    return this.#wait(context, request, input, signal);
  }

  /**
   * The human's decision, made on the text whose digest is `shownDigest` (`digestShown` of the request's
   * `inputSummary`; another digest is refused) and journaled with who made it. "Allow for this session"
   * without a rule adds the request's suggested rule.
   */
  decide(
    requestId: string,
    decision: PermissionDecision,
    by: DecisionActor,
    shownDigest: string,
  ): DecidePermissionResponse {
    const { journal } = this.#options;
    const request = journal.getPermissionRequest(requestId);
    if (!request) {
      throw new JournalError(
        "permission_request_not_found",
        `permission request ${requestId} does not exist`,
      );
    }
    const requestDigest = digestShown(request.inputSummary);
    if (shownDigest !== requestDigest) {
      throw new PermissionBrokerError(
        "digest_mismatch",
        `permission request ${requestId} shows a text of digest ${requestDigest}, not the ${shownDigest} the decision names: read the request again and decide on the whole of what it shows`,
      );
    }
    const complete = withSessionRule(decision, request);
    const decided = journal.decidePermissionRequest(requestId, complete, by);
    if (request.status === "orphaned") {
      const retry = journal.retryTurn(request.turnId);
      this.#options.startRetry(retry);
      return { request: decided, deliveredTo: "retry", retryTurnId: retry.id };
    }
    const waiter = this.#waiters.get(requestId);
    // Without a waiter the call is gone but its turn lives: the same call asking again takes it.
    if (!waiter) return { request: decided, deliveredTo: "call" };
    waiter.resolve(this.#apply(decided, waiter.turnId, waiter.input));
    return { request: journal.getPermissionRequest(requestId)!, deliveredTo: "call" };
  }

  /** `request` as the API shows it: with `expiresAt` while a call waits on it under a timeout. */
  present(request: PermissionRequest): PermissionRequest {
    const deadline = this.#deadlines.get(request.id);
    return deadline === undefined || request.status !== "pending"
      ? request
      : { ...request, expiresAt: new Date(deadline).toISOString() };
  }

  /** The turn ended: its waiting calls are answered with a denial (the journal closed their requests). */
  releaseTurn(turnId: string): void {
    for (const waiter of [...this.#waiters.values()]) {
      if (waiter.turnId === turnId)
        waiter.resolve({ behavior: "deny", message: "floot: the turn ended before a decision" });
    }
  }

  #apply(request: PermissionRequest, turnId: string, input: Record<string, unknown>): PermissionPromptAnswer {
    const applied = this.#options.journal.applyPermissionDecision(request.id, turnId);
    const decision = applied.decision!;
    if (decision.behavior === "allow") return allow(input);
    return { behavior: "deny", message: decision.message ?? deniedByDefault };
  }

  #wait(
    context: TurnContext,
    request: PermissionRequest,
    input: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<PermissionPromptAnswer> {
    const setTimer = this.#options.setTimeout ?? setTimeout;
    const clearTimer =
      this.#options.clearTimeout ?? ((timer: unknown) => clearTimeout(timer as NodeJS.Timeout));
    const timeoutMs = this.#options.timeoutOf(context.sessionId);
    return new Promise<PermissionPromptAnswer>((resolve) => {
      let timer: unknown;
      const settle = (answer: PermissionPromptAnswer) => {
        if (timer !== undefined) clearTimer(timer);
        signal.removeEventListener("abort", onAbort);
        this.#waiters.delete(request.id);
        this.#deadlines.delete(request.id);
        resolve(answer);
      };
      const onAbort = () => settle({ behavior: "deny", message: "floot: the permission prompt was aborted" });
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiters.set(request.id, { turnId: context.turnId, input, resolve: settle });
      if (timeoutMs !== undefined) {
        const handle = setTimer(() => {
          try {
            this.#options.journal.expirePermissionRequest(request.id);
          } catch {
            // The turn ended meanwhile: its requests were closed with it; the call is denied all the same.
          }
          settle({
            behavior: "deny",
            message: `floot: no decision within ${timeoutMs} ms; the call was not run`,
          });
        }, timeoutMs);
        handle.unref?.();
        timer = handle;
        this.#deadlines.set(request.id, (this.#options.now ?? Date.now)() + timeoutMs);
      }
    });
  }
}

/** "Allow for this session" without a rule takes the request's suggestion; without one, a rule is needed. */
function withSessionRule(decision: PermissionDecision, request: PermissionRequest): PermissionDecision {
  if (decision.behavior !== "allow" || decision.scope !== "session" || decision.rule !== undefined)
    return decision;
  if (request.suggestedRule === undefined) {
    throw new JournalError(
      "invalid_input",
      `decision.rule: permission request ${request.id} suggests no rule (no rule covers only this call); name one, or allow once`,
    );
  }
  return { ...decision, rule: request.suggestedRule };
}

function allow(input: Record<string, unknown>): PermissionPromptAnswer {
  return { behavior: "allow", updatedInput: input };
}
