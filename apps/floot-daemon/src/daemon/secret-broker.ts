import {
  type DecisionActor,
  type SecretRequest,
  type SecretRequestDraft,
  type SubmitSecretResponse,
  secretValueProblem,
  type TurnRecord,
} from "@bridgeworks/protocol";
import type { JournalSecrets, JournalTurns } from "@bridgeworks/turn-journal";
import type { SecretMask } from "./secret-mask.js";
import type { Credential, SecretVault } from "./secret-vault.js";

export interface TurnContext {
  turnId: string;
  sessionId: string;
}

export type SecretAnswer =
  | { kind: "provided"; credential: Credential }
  | { kind: "withdrawn"; reason: string };

export type SecretBrokerErrorCode = "secret_request_not_found" | "secret_request_closed" | "secret_too_short";

export class SecretBrokerError extends Error {
  constructor(
    readonly code: SecretBrokerErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** What the broker uses of the journal: the requests, and a retry for an answer its turn did not live to get. */
export interface SecretBrokerJournal {
  secrets: Pick<JournalSecrets, "requestSecret" | "resolveSecretRequest" | "getSecretRequest">;
  turns: Pick<JournalTurns, "retryTurn">;
}

interface Waiter {
  context: TurnContext;
  request: SecretRequest;
  resolve(answer: SecretAnswer): void;
}

/**
 * Between a `requestSecret` tool call and the human: the request's metadata goes to the journal, the
 * answer's bytes only to the vault. An answer to a request whose turn ended (a restart interrupted it)
 * starts the turn's explicit retry, which gets fresh credential material when it asks again.
 */
export class SecretBroker {
  readonly #journal: SecretBrokerJournal;
  readonly #vault: SecretVault;
  readonly #startRetry: (turn: TurnRecord) => void;
  readonly #waiters = new Map<string, Waiter>();
  readonly #mask: SecretMask | undefined;

  constructor(
    journal: SecretBrokerJournal,
    vault: SecretVault,
    startRetry: (turn: TurnRecord) => void,
    mask?: SecretMask,
  ) {
    this.#journal = journal;
    this.#vault = vault;
    this.#startRetry = startRetry;
    this.#mask = mask;
  }

  async ask(context: TurnContext, draft: SecretRequestDraft, signal: AbortSignal): Promise<SecretAnswer> {
    const request = this.#journal.secrets.requestSecret(context.turnId, draft);
    // An answer given while no call waited: a later call of this name, or this very call asked again
    // (its shim rebound to a restarted daemon after the person answered), takes it.
    const held = this.#vault.take(context.sessionId, draft.name);
    if (held !== undefined && (request.status === "pending" || request.status === "submitted")) {
      const credential = this.#vault.materialize(context.turnId, draft.name, held);
      if (request.status === "pending") this.#journal.secrets.resolveSecretRequest(request.id, "submitted");
      return { kind: "provided", credential };
    }
    if (request.status !== "pending") {
      return { kind: "withdrawn", reason: `the request is ${request.status}` };
    }
    return new Promise<SecretAnswer>((resolve) => {
      const onAbort = () => {
        this.#waiters.delete(request.id);
        resolve({ kind: "withdrawn", reason: "the call was aborted" });
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiters.set(request.id, {
        context,
        request,
        resolve: (answer) => {
          signal.removeEventListener("abort", onAbort);
          this.#waiters.delete(request.id);
          resolve(answer);
        },
      });
    });
  }

  /**
   * The human's answer, journaled with who gave it. `value` goes to the vault, and to the mask (memory)
   * before any tool can print it. A value too short to mask (`secretValueMinLength`) is refused and the
   * request stays as it was.
   */
  submit(requestId: string, value: string, by: DecisionActor): SubmitSecretResponse {
    const request = this.#journal.secrets.getSecretRequest(requestId);
    if (!request) {
      throw new SecretBrokerError("secret_request_not_found", `secret request ${requestId} does not exist`);
    }
    const problem = secretValueProblem(value);
    if (problem !== undefined) throw new SecretBrokerError("secret_too_short", problem);
    if (request.status === "pending" || request.status === "orphaned")
      this.#mask?.register(request.name, value);
    if (request.status === "pending") {
      const waiter = this.#waiters.get(requestId);
      const resolved = this.#journal.secrets.resolveSecretRequest(requestId, "submitted", by);
      if (waiter) {
        const credential = this.#vault.materialize(waiter.context.turnId, request.name, value);
        waiter.resolve({ kind: "provided", credential });
      } else {
        // The call is gone but its turn is alive: its next request of this name gets the answer.
        this.#vault.hold(request.sessionId, request.name, value);
      }
      return { request: resolved, deliveredTo: "call" };
    }
    if (request.status === "orphaned") {
      const resolved = this.#journal.secrets.resolveSecretRequest(requestId, "submitted", by);
      this.#vault.hold(request.sessionId, request.name, value);
      const retry = this.#journal.turns.retryTurn(request.turnId);
      this.#startRetry(retry);
      return { request: resolved, deliveredTo: "retry", retryTurnId: retry.id };
    }
    throw new SecretBrokerError(
      "secret_request_closed",
      `secret request ${requestId} is already ${request.status}`,
    );
  }

  /**
   * The turn is over here: withdraw its waiting calls and remove its credential files, unless it was
   * `left` to the keeper (the daemon stops, its CLI runs on), whose files stay for the next daemon.
   */
  releaseTurn(turnId: string, { left = false }: { left?: boolean } = {}): void {
    for (const waiter of [...this.#waiters.values()]) {
      if (waiter.context.turnId === turnId) waiter.resolve({ kind: "withdrawn", reason: "the turn ended" });
    }
    if (left) this.#vault.leaveTurn(turnId);
    else this.#vault.releaseTurn(turnId);
  }
}
