import type { FlootMoment, FlootSessionChange } from "@bridgeworks/protocol";
import { ApiError, parseEvent, readEventStream } from "./api.js";
import { backoffMs, type Connection, sleep } from "./connection.js";

/** What a part of the page wants of `GET /v1/changes`. */
export interface ChangeListener {
  /** The stream (re)opened: what changed while it was closed is read again by whoever needs it. */
  onOpen?: () => void;
  onChange?: (change: FlootSessionChange) => void;
  /** An approval or secret asked, or a turn ended: sent once, as it happens, never again. */
  onMoment?: (moment: FlootMoment) => void;
}

/**
 * The page's one `GET /v1/changes` stream, shared by whatever listens (the sessions list, the
 * notifications): open while anyone listens, opened again with backoff after any outage.
 */
export class ChangeStream {
  readonly #connection: Connection;
  readonly #listeners = new Set<ChangeListener>();
  #abort: AbortController | undefined;
  /** The stream is open now: a new listener is told so at once. */
  #open = false;

  constructor(connection: Connection) {
    this.#connection = connection;
  }

  subscribe(listener: ChangeListener): () => void {
    const entry = { ...listener };
    this.#listeners.add(entry);
    if (this.#open) queueMicrotask(() => this.#listeners.has(entry) && entry.onOpen?.());
    if (!this.#abort) {
      this.#abort = new AbortController();
      void this.#watch(this.#abort.signal);
    }
    return () => {
      this.#listeners.delete(entry);
      if (this.#listeners.size > 0) return;
      this.#open = false;
      this.#abort?.abort();
      this.#abort = undefined;
    };
  }

  /** Follows changes until nobody listens; after any outage, tells every listener it opened again. */
  async #watch(signal: AbortSignal): Promise<void> {
    try {
      await this.#follow(signal);
    } finally {
      if (this.#abort?.signal === signal) this.#abort = undefined;
    }
  }

  async #follow(signal: AbortSignal): Promise<void> {
    let attempt = 0;
    while (!signal.aborted) {
      try {
        await watchSessionChanges(
          () => {
            attempt = 0;
            this.#open = true;
            for (const listener of [...this.#listeners]) listener.onOpen?.();
          },
          (change) => {
            for (const listener of [...this.#listeners]) listener.onChange?.(change);
          },
          signal,
          (moment) => {
            for (const listener of [...this.#listeners]) listener.onMoment?.(moment);
          },
        );
      } catch (error) {
        if (signal.aborted) return;
        this.#open = false;
        if (error instanceof ApiError && error.status === 401) return this.#connection.signedOut();
        this.#connection.offline(attempt);
        await sleep(backoffMs(attempt++), signal);
      }
    }
  }
}

/**
 * Reads `GET /v1/changes` once and hands each session change to `onChange` (each moment to `onMoment`)
 * until `signal` aborts. The stream never ends by itself: its end or failure throws `Unreachable` (see
 * `readEventStream`).
 */
export async function watchSessionChanges(
  onOpen: () => void,
  onChange: (change: FlootSessionChange) => void,
  signal: AbortSignal,
  onMoment: (moment: FlootMoment) => void = () => {},
): Promise<void> {
  await readEventStream("/v1/changes", signal, onOpen, (event) => {
    if (event.name === "session") onChange(parseEvent<FlootSessionChange>(event));
    else if (event.name === "moment") onMoment(parseEvent<FlootMoment>(event));
    return undefined;
  });
}
