import type { Socket } from "node:net";
import type pg from "pg";
import type { ChangeScope, ChangeSource } from "../wait.js";

export interface PostgresChangeFeedInput {
  /** A new, unconnected client for the LISTEN connection; `onSocket` receives its socket. */
  newClient: (onSocket: (socket: Socket) => void) => pg.Client;
  /** NOTIFYed by every write that makes an action claimable. */
  channel: string;
  /** NOTIFYed by every other change. */
  eventsChannel: string;
  /** The slow safety re-check, in case a notification is missed. */
  recheckIntervalMs: number;
  /** How long the LISTEN connection stays open after the last waiter leaves, ready for the next wait. */
  lingerMs: number;
  /** The pause before reconnecting after `attempt` failures in a row. */
  reconnectDelayMs: (attempt: number) => number;
}

/**
 * Wake-ups for waiters through LISTEN/NOTIFY. Every write NOTIFYs in its own transaction with the
 * new head; a commit in this process also announces itself directly. One LISTEN connection serves
 * every waiter of the board. Whenever it (re)connects, every waiter re-reads from its own position,
 * so a notification sent while it was away is never needed. The connection and the timers exist
 * only while someone waits (and for a short linger, which never keeps node alive).
 */
export class PostgresChangeFeed implements ChangeSource {
  readonly #input: PostgresChangeFeedInput;
  readonly #listeners = new Map<(head?: number) => void, ChangeScope>();
  #client: pg.Client | undefined;
  #socket: Socket | undefined;
  #listening = false;
  #failures = 0;
  #reconnect: NodeJS.Timeout | undefined;
  #linger: NodeJS.Timeout | undefined;
  #recheck: NodeJS.Timeout | undefined;
  #pending: { head: number | undefined; scope: ChangeScope } | undefined;
  #closed = false;

  constructor(input: PostgresChangeFeedInput) {
    this.#input = input;
  }

  subscribe(listener: (head?: number) => void, scope: ChangeScope = "claimable"): () => void {
    this.#listeners.set(listener, scope);
    if (this.#listeners.size === 1) this.#start();
    return () => {
      if (this.#listeners.delete(listener) && this.#listeners.size === 0) this.#idle();
    };
  }

  /** Call after a commit in this process: wakes its waiters without a round trip. */
  announce(head: number | undefined, scope: ChangeScope = "claimable"): void {
    this.#schedule(head, scope);
  }

  /** Whether the LISTEN connection is up; while it is not, waiters rely on reconnects and re-reads. */
  get listening(): boolean {
    return this.#listening;
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#listeners.clear();
    this.#stopTimers();
    clearTimeout(this.#linger);
    await this.#disconnect();
  }

  #start(): void {
    if (this.#closed) return;
    clearTimeout(this.#linger);
    this.#linger = undefined;
    this.#socket?.ref();
    if (this.#client === undefined && this.#reconnect === undefined) void this.#connect();
    this.#recheck = setInterval(() => this.#schedule(undefined, "claimable"), this.#input.recheckIntervalMs);
  }

  #idle(): void {
    this.#stopTimers();
    // A reconnect in progress is not worth finishing for nobody.
    if (!this.#listening) {
      void this.#disconnect();
      return;
    }
    this.#socket?.unref();
    this.#linger = setTimeout(() => void this.#disconnect(), this.#input.lingerMs);
    this.#linger.unref();
  }

  #stopTimers(): void {
    clearInterval(this.#recheck);
    this.#recheck = undefined;
    clearTimeout(this.#reconnect);
    this.#reconnect = undefined;
  }

  async #connect(): Promise<void> {
    const client = this.#input.newClient((socket) => {
      this.#socket = socket;
      if (this.#listeners.size === 0) socket.unref();
    });
    this.#client = client;
    client.on("error", () => this.#lost(client));
    client.on("end", () => this.#lost(client));
    client.on("notification", (message) => {
      const scope =
        message.channel === this.#input.channel
          ? "claimable"
          : message.channel === this.#input.eventsChannel
            ? "every"
            : undefined;
      if (scope === undefined) return;
      const head =
        message.payload === undefined || message.payload === "" ? Number.NaN : Number(message.payload);
      this.#schedule(Number.isSafeInteger(head) ? head : undefined, scope);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.#input.channel}; LISTEN ${this.#input.eventsChannel}`);
    } catch {
      this.#lost(client);
      return;
    }
    if (this.#client !== client) {
      // Closed or idled while connecting.
      await client.end().catch(() => {});
      return;
    }
    this.#listening = true;
    this.#failures = 0;
    // Whatever committed while nobody listened is found by re-reading, never by a notification.
    this.#schedule(undefined, "claimable");
  }

  #lost(client: pg.Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    this.#socket = undefined;
    this.#listening = false;
    client.end().catch(() => {});
    if (this.#closed || this.#listeners.size === 0) return;
    const delay = this.#input.reconnectDelayMs(this.#failures++);
    this.#reconnect = setTimeout(() => {
      this.#reconnect = undefined;
      if (!this.#closed && this.#listeners.size > 0) void this.#connect();
    }, delay);
    // The waiters may have lost their reads too: let them try again with the listener.
    this.#schedule(undefined, "claimable");
  }

  async #disconnect(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    this.#socket = undefined;
    this.#listening = false;
    clearTimeout(this.#linger);
    this.#linger = undefined;
    await client?.end().catch(() => {});
  }

  // Several commits or notifications in one tick cost one delivery, with the highest head seen; a
  // claimable one wakes every listener, any other only those that listen to every change.
  #schedule(head: number | undefined, scope: ChangeScope): void {
    if (this.#pending !== undefined) {
      const known = this.#pending.head;
      this.#pending.head = known === undefined || head === undefined ? undefined : Math.max(known, head);
      if (scope === "claimable") this.#pending.scope = scope;
      return;
    }
    this.#pending = { head, scope };
    queueMicrotask(() => {
      const pending = this.#pending;
      this.#pending = undefined;
      if (pending === undefined) return;
      for (const [listener, listens] of [...this.#listeners]) {
        if (pending.scope === "claimable" || listens === "every") listener(pending.head);
      }
    });
  }
}
