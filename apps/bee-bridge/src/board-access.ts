import { type Board, BoardError, openBoard, redactBoardLocation } from "@bridgeworks/board";
import { describeError } from "@bridgeworks/runtime";

export interface BoardAccessOptions {
  /** Where the board is: an absolute SQLite file path or a `postgres://` URL (see `resolveBoardLocation`). */
  location: string;
  /**
   * SQLite only, kept short: better-sqlite3 waits for a lock synchronously, and the bridge must keep
   * answering signals. PostgreSQL waits asynchronously and reports a lost server as `busy` itself.
   */
  busyTimeoutMs: number;
  open?: typeof openBeeBoard;
}

/** Opens the board at `location` through `openBoard`, which picks SQLite or PostgreSQL. */
export function openBeeBoard(location: string, options: { busyTimeoutMs: number }): Promise<Board> {
  return openBoard(location, options);
}

/**
 * Opens the board on first use and again after a failed open, so a board that is missing or locked
 * when the bridge starts becomes an error result the agent can retry, never a crash.
 */
export class BoardAccess {
  readonly #options: BoardAccessOptions;
  #board: Promise<Board> | undefined;
  #closed = false;

  constructor(options: BoardAccessOptions) {
    this.#options = options;
  }

  /** The board's location with any password removed: safe to log and to show an agent. */
  get location(): string {
    return redactBoardLocation(this.#options.location);
  }

  async board(): Promise<Board> {
    if (this.#closed) throw new BoardError("closed", "the bridge is shutting down");
    if (this.#board === undefined) {
      const opening = (this.#options.open ?? openBeeBoard)(this.#options.location, {
        busyTimeoutMs: this.#options.busyTimeoutMs,
      });
      this.#board = opening;
      opening.catch(() => {
        if (this.#board === opening) this.#board = undefined;
      });
    }
    return this.#board;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const board = await this.#board?.catch(() => undefined);
    await board?.close();
  }
}

export interface BusyRetryOptions {
  /** Give up after this long and surface the last `busy` error. */
  withinMs: number;
  signal?: AbortSignal | undefined;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

/**
 * Retries an operation that failed `busy` (another process holds the SQLite write lock, or the
 * PostgreSQL server is away) with a growing pause.
 */
export async function retryWhileBusy<T>(operation: () => Promise<T>, options: BusyRetryOptions): Promise<T> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const deadline = now() + options.withinMs;
  let pauseMs = 10;
  for (;;) {
    try {
      return await operation();
    } catch (error) {
      const retryable = error instanceof BoardError && error.retryable;
      if (!retryable || now() + pauseMs > deadline || options.signal?.aborted) throw error;
      await sleep(pauseMs);
      pauseMs = Math.min(pauseMs * 2, 250);
    }
  }
}

/** How a board failure reads to an agent: what went wrong and, when it is transient, what to do. */
export function describeBoardFailure(error: unknown, retryHint: string): string {
  if (error instanceof BoardError) {
    if (error.code === "invalid_argument" || error.argument !== undefined) return error.message;
    if (error.retryable || error.code === "closed" || error.code === "incompatible_store") {
      return `board unavailable (${error.code}): ${error.message}; ${retryHint}`;
    }
    return `${error.code}: ${error.message}`;
  }
  return `board unavailable: ${describeError(error)}; ${retryHint}`;
}
