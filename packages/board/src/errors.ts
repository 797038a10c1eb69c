import type { ActiveAgent, BoardErrorCode, BoardErrorPayload } from "@bridgeworks/protocol";

export interface BoardErrorDetails {
  /** The argument a refusal is about, e.g. `cursor`, `limit`, `to`. */
  argument?: string;
  /** The write may or may not have been made (the server went away while it was in flight). */
  unsure?: boolean;
  cause?: unknown;
}

/** A refusal a caller can act on: `code` says why, `argument` names the bad input, `busy` is retryable. */
export class BoardError extends Error {
  override readonly name = "BoardError";
  readonly code: BoardErrorCode;
  readonly argument: string | undefined;
  /**
   * A write failed with its outcome unknown: it may or may not have been made. Repeating it is safe
   * only for a write that means the same the second time (a claim by id, a complete); read the board
   * before repeating a post or a claimNext.
   */
  readonly unsure: boolean;

  constructor(code: BoardErrorCode, message: string, details: BoardErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.code = code;
    this.argument = details.argument;
    this.unsure = details.unsure === true;
  }

  /** Only contention is worth retrying with the same arguments. */
  get retryable(): boolean {
    return this.code === "busy";
  }

  toPayload(): BoardErrorPayload {
    return {
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      ...(this.argument === undefined ? {} : { argument: this.argument }),
      ...(this.unsure ? { unsure: true } : {}),
    };
  }

  static fromPayload(payload: BoardErrorPayload): BoardError {
    return new BoardError(payload.code, payload.message, {
      ...(payload.argument === undefined ? {} : { argument: payload.argument }),
      ...(payload.unsure === true ? { unsure: true } : {}),
    });
  }
}

/** The successor was registered but the old identity could not be retired; move to `successor` and retry. */
export class RetireIncompleteError extends BoardError {
  readonly successor: ActiveAgent;

  constructor(successor: ActiveAgent, cause: unknown) {
    super(
      "retire_incomplete",
      `registered ${successor.identity} but could not retire the old identity; ` +
        "use the successor and retry the retire with it",
      { cause },
    );
    this.successor = successor;
  }
}

export function argumentError(argument: string, problem: string): BoardError {
  return new BoardError("invalid_argument", `${argument}: ${problem}`, { argument });
}
