import { randomBytes as cryptoRandomBytes } from "node:crypto";
import {
  ActionDraft,
  ActionId,
  type ActionPage,
  type ActionRecord,
  ActionResult,
  ActionSender,
  type ActiveAgent,
  AgentIdentity,
  AgentName,
  type AgentRecord,
  type CancelledAction,
  type ClaimedAction,
  type ClaimOutcome,
  type CompleteOutcome,
  type Cursor,
  type Departure,
  type DoneAction,
  mintAgentIdentity,
  type OpenAction,
  parseAgentIdentity,
  type Retirement,
} from "@bridgeworks/protocol";
import pg from "pg";
import { parseArgument, parseIntegerArgument, parseOptionalSignal } from "../arguments.js";
import type { Board, BoardDeps, ListOptions, RetireOptions, WaitOptions } from "../board.js";
import { mintCursor, readCursor } from "../cursor.js";
import { argumentError, BoardError, RetireIncompleteError } from "../errors.js";
import { type ActionRow, actionFromRow, agentFromRow } from "../rows.js";
import { describeSender, listLimit, maxTimeoutMs, mintAttempts, requireObject, waitLimit } from "../rules.js";
import { type ChangeSource, waitForRecords } from "../wait.js";
import { PostgresChangeFeed } from "./change-feed.js";
import {
  type ConnectionSettings,
  clientConfig,
  isTransient,
  parsePostgresLocation,
  translatePostgresError,
} from "./connection.js";
import { migratePostgres } from "./schema.js";
import { PostgresStore } from "./store.js";

export interface PostgresBoardOptions extends Partial<BoardDeps> {
  /**
   * `postgres://user:password@host:port/database` (or `postgresql://`). The board lives in schema
   * `bee`, or in the one a `?schema=` parameter names.
   */
  url: string;
  /** The safety re-check for waiters, in case a notification is missed. Default 5000. */
  recheckIntervalMs?: number;
  /** Connections for reads and writes (the LISTEN connection is one more). Default 4. */
  maxConnections?: number;
  /** How long opening a connection may take before it fails `busy`. Default 5000. */
  connectTimeoutMs?: number;
  /** How long the LISTEN connection stays open after the last wait, ready for the next. Default 30000. */
  listenerLingerMs?: number;
}

/**
 * Opens the board a team shares on a PostgreSQL server, creating or migrating its schema (`bee`) on
 * first use. Losing the server makes operations fail `busy` (retryable) until it is back; waits ride
 * out a restart within their bound.
 */
export async function openPostgresBoard(options: PostgresBoardOptions): Promise<Board> {
  if (typeof options !== "object" || options === null) throw argumentError("options", "must be an object");
  if (typeof options.url !== "string") throw argumentError("url", "must be a postgres:// URL");
  const location = parsePostgresLocation(options.url, "url");
  const settings: ConnectionSettings = {
    connectionString: location.connectionString,
    applicationName: "bee-board",
    connectTimeoutMs: parseIntegerArgument(options.connectTimeoutMs ?? 5000, "connectTimeoutMs", 1, 600_000),
  };
  const recheckIntervalMs = parseIntegerArgument(
    options.recheckIntervalMs ?? 5000,
    "recheckIntervalMs",
    1,
    3_600_000,
  );
  const maxConnections = parseIntegerArgument(options.maxConnections ?? 4, "maxConnections", 1, 100);
  const lingerMs = parseIntegerArgument(options.listenerLingerMs ?? 30_000, "listenerLingerMs", 0, 3_600_000);
  const deps: BoardDeps = {
    now: options.now ?? Date.now,
    randomBytes: options.randomBytes ?? cryptoRandomBytes,
  };

  const pool = new pg.Pool({
    ...clientConfig(settings),
    max: maxConnections,
    idleTimeoutMillis: 10_000,
    // Idle connections never keep node alive; an open board with no work in flight holds no handles.
    allowExitOnIdle: true,
  });
  // An idle connection the server dropped (a restart): the pool discards it and opens another on demand.
  pool.on("error", () => {});

  let boardId: string;
  try {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      await migratePostgres(client, location.schema, deps.randomBytes);
      boardId = await new PostgresStore(client, location.schema).boardId();
    } catch (error) {
      if (isTransient(error)) broken = error as Error;
      throw error;
    } finally {
      client.release(broken);
    }
  } catch (error) {
    await pool.end().catch(() => {});
    throw translatePostgresError(error);
  }

  const changes = new PostgresChangeFeed({
    newClient: (onSocket) =>
      new pg.Client(clientConfig({ ...settings, applicationName: "bee-board-listener" }, onSocket)),
    channel: location.channel,
    recheckIntervalMs,
    lingerMs,
    reconnectDelayMs: backoff,
  });
  return new PostgresBoard({
    pool,
    changes,
    deps,
    boardId,
    schema: location.schema,
    channel: location.channel,
  });
}

/** 50 ms, doubling to at most a second: a restarted server is back within a few tries. */
function backoff(attempt: number): number {
  return Math.min(1000, 50 * 2 ** attempt);
}

class PostgresBoard implements Board {
  readonly #pool: pg.Pool;
  readonly #changes: PostgresChangeFeed;
  readonly #deps: BoardDeps;
  readonly #boardId: string;
  readonly #schema: string;
  readonly #channel: string;
  readonly #closing = new AbortController();

  constructor(input: {
    pool: pg.Pool;
    changes: PostgresChangeFeed;
    deps: BoardDeps;
    boardId: string;
    schema: string;
    channel: string;
  }) {
    this.#pool = input.pool;
    this.#changes = input.changes;
    this.#deps = input.deps;
    this.#boardId = input.boardId;
    this.#schema = input.schema;
    this.#channel = input.channel;
  }

  async post(draft: ActionDraft): Promise<OpenAction> {
    const { kind, to, from, body } = parseArgument(ActionDraft, draft, "draft");
    const sender = describeSender(from);
    return this.#write(async (store) => {
      if (sender.agent !== null) await this.#requireActive(store, from as AgentIdentity, "from");
      const row = await mintUntilFree("action", () =>
        store.insertAction({
          id: `act_${Buffer.from(this.#deps.randomBytes(8)).toString("hex")}`,
          kind,
          recipient: to,
          sender: from,
          senderAgent: sender.agent,
          body,
          now: this.#deps.now(),
        }),
      );
      return actionFromRow(row) as OpenAction;
    });
  }

  async get(id: ActionId): Promise<ActionRecord> {
    const actionId = parseArgument(ActionId, id, "id");
    return this.#read(async (store) => actionFromRow(await this.#requireAction(store, actionId)));
  }

  async list(options: ListOptions = {}): Promise<ActionPage> {
    requireObject(options, "options");
    const limit = parseIntegerArgument(options.limit ?? listLimit.default, "limit", 1, listLimit.max);
    return this.#read(async (store) => {
      const start = await this.#startPosition(store, options.cursor);
      const rows = await store.actionsAfter(start, limit);
      const position = rows.at(-1)?.seq ?? start;
      return { records: rows.map(actionFromRow), cursor: this.#cursorAt(position) };
    });
  }

  async waitForClaimable(
    agent: AgentIdentity,
    cursor: Cursor | undefined,
    options: WaitOptions,
  ): Promise<ActionPage> {
    const identity = parseArgument(AgentIdentity, agent, "agent");
    requireObject(options, "options");
    const timeoutMs = parseIntegerArgument(options.timeoutMs, "timeoutMs", 0, maxTimeoutMs);
    const limit = parseIntegerArgument(options.limit ?? waitLimit.default, "limit", 1, waitLimit.max);
    const signal = parseOptionalSignal(options.signal, "signal");
    signal?.throwIfAborted();
    const { name } = parseAgentIdentity(identity);
    // The first read goes to the server, so an abort or a close must not wait for it to come back.
    const start = await abortable(
      this.#read(async (store) => {
        await this.#requireActive(store, identity, "agent");
        return this.#startPosition(store, cursor);
      }),
      signal,
      this.#closing.signal,
    );

    // A read that fails because the server went away is tried again, after a pause or when the
    // LISTEN connection is back, from the same position: the wait rides out a restart. Only a wait
    // whose bound passes while the server is still away reports it, as a retryable `busy`.
    let trouble: unknown;
    let failures = 0;
    let retry: NodeJS.Timeout | undefined;
    let wake: ((head?: number) => void) | undefined;
    const changes: ChangeSource = {
      subscribe: (listener) => {
        wake = listener;
        const unsubscribe = this.#changes.subscribe(listener);
        return () => {
          unsubscribe();
          clearTimeout(retry);
          wake = undefined;
        };
      },
    };
    const page = await waitForRecords({
      start,
      timeoutMs,
      signal,
      closing: this.#closing.signal,
      changes,
      cursorAt: (position) => this.#cursorAt(position),
      scan: async (after) => {
        try {
          const { rows, head } = await this.#read((store) => store.claimableAfter(name, after, limit));
          trouble = undefined;
          failures = 0;
          // A full page may have more behind it; otherwise nothing up to the head is claimable.
          const position = rows.length === limit ? rows[rows.length - 1]!.seq : Math.max(head, after);
          return { records: rows.map(actionFromRow), position };
        } catch (error) {
          if (!(error instanceof BoardError && error.code === "busy")) throw error;
          trouble = error;
          clearTimeout(retry);
          retry = setTimeout(() => wake?.(), backoff(failures++));
          return { records: [], position: after };
        }
      },
    });
    if (page.records.length === 0 && trouble !== undefined) {
      throw new BoardError(
        "busy",
        "the board's PostgreSQL server was unreachable until the wait's timeout; retry with the same cursor",
        { cause: trouble },
      );
    }
    return page;
  }

  async claim(agent: AgentIdentity, id: ActionId): Promise<ClaimOutcome> {
    const identity = parseArgument(AgentIdentity, agent, "agent");
    const actionId = parseArgument(ActionId, id, "id");
    const { name } = parseAgentIdentity(identity);
    // The compare-and-set decides; the reads after a miss only explain it. A miss on an action that
    // reads as claimable again (released meanwhile) tries the compare-and-set once more.
    for (let attempt = 0; ; attempt++) {
      const claimed = await this.#write((store) => store.claim(actionId, identity, name, this.#deps.now()));
      if (claimed !== undefined)
        return { outcome: "claimed", record: actionFromRow(claimed) as ClaimedAction };
      const outcome = await this.#read(async (store): Promise<ClaimOutcome | "retry"> => {
        await this.#requireActive(store, identity, "agent");
        const row = await this.#requireAction(store, actionId);
        if (row.recipient !== name && row.recipient !== "*") {
          throw new BoardError(
            "not_addressed",
            `action ${actionId} is addressed to ${row.recipient}, not ${name}`,
          );
        }
        const record = actionFromRow(row);
        if (record.state === "claimed" && record.claimedBy === identity)
          return { outcome: "claimed", record };
        if (record.state === "open") return "retry";
        return { outcome: "taken", record };
      });
      if (outcome !== "retry") return outcome;
      if (attempt >= 3)
        throw new BoardError("busy", `action ${actionId} kept changing during the claim; retry`);
    }
  }

  async complete(agent: AgentIdentity, id: ActionId, result?: string): Promise<CompleteOutcome> {
    const identity = parseArgument(AgentIdentity, agent, "agent");
    const actionId = parseArgument(ActionId, id, "id");
    const text = result === undefined ? null : parseArgument(ActionResult, result, "result");
    const completed = await this.#write((store) =>
      store.complete(actionId, identity, text, this.#deps.now()),
    );
    if (completed !== undefined)
      return { outcome: "completed", record: actionFromRow(completed) as DoneAction };
    return this.#read(async (store): Promise<CompleteOutcome> => {
      const record = actionFromRow(await this.#requireAction(store, actionId));
      const heldByCaller = "claimedBy" in record && record.claimedBy === identity;
      if (record.state === "done" && heldByCaller) return { outcome: "completed", record };
      if (record.state === "cancelled" && heldByCaller) return { outcome: "cancelled", record };
      await this.#requireActive(store, identity, "agent");
      if (record.state === "open") {
        throw new BoardError(
          "invalid_transition",
          `action ${actionId} is open; claim it before completing it`,
        );
      }
      const holder = "claimedBy" in record && record.claimedBy !== undefined ? record.claimedBy : "nobody";
      throw new BoardError(
        "not_claimer",
        `action ${actionId} is ${record.state} and held by ${holder}; only its claimer completes it`,
      );
    });
  }

  async cancel(by: string, id: ActionId, reason?: string): Promise<CancelledAction> {
    const canceller = parseArgument(ActionSender, by, "by");
    const actionId = parseArgument(ActionId, id, "id");
    const text = reason === undefined ? null : parseArgument(ActionResult, reason, "reason");
    const sender = describeSender(canceller);
    const cancelled = await this.#write((store) =>
      store.cancel({
        id: actionId,
        by: canceller,
        byAgent: sender.agent,
        reason: text,
        now: this.#deps.now(),
      }),
    );
    if (cancelled !== undefined) return actionFromRow(cancelled) as CancelledAction;
    return this.#read(async (store) => {
      if (sender.agent !== null) await this.#requireActive(store, canceller as AgentIdentity, "by");
      const row = await this.#requireAction(store, actionId);
      if (row.state === "done" || row.state === "cancelled") {
        throw new BoardError("invalid_transition", `action ${actionId} is already ${row.state}`);
      }
      throw new BoardError(
        "not_permitted",
        `action ${actionId} was posted by ${row.sender}; only its poster or a human cancels it`,
      );
    });
  }

  async register(name: string): Promise<ActiveAgent> {
    const agentName = parseArgument(AgentName, name, "name");
    return this.#write(async (store) => {
      const row = await mintUntilFree("identity", () =>
        store.insertAgent(mintAgentIdentity(agentName, this.#deps.randomBytes), agentName, this.#deps.now()),
      );
      return agentFromRow(row) as ActiveAgent;
    });
  }

  async retire(agent: AgentIdentity, options: RetireOptions = {}): Promise<Retirement> {
    const identity = parseArgument(AgentIdentity, agent, "agent");
    requireObject(options, "options");
    const { name } = parseAgentIdentity(identity);
    await this.#read((store) => this.#requireActive(store, identity, "agent"));
    const current =
      options.successor === undefined
        ? await this.register(name)
        : await this.#read((store) =>
            this.#requireSuccessor(
              store,
              parseArgument(AgentIdentity, options.successor, "successor"),
              identity,
            ),
          );
    try {
      const ended = await this.#write((store) =>
        store.endAgent({
          identity,
          status: "retired",
          successor: current.identity,
          now: this.#deps.now(),
        }),
      );
      if (ended === undefined) {
        throw new BoardError("agent_not_active", `${identity} stopped being active during the retire`);
      }
      const retired = agentFromRow(ended.agent);
      if (retired.status !== "retired")
        throw new Error(`retired ${identity} reads back as ${retired.status}`);
      return { retired, current, released: ended.released as ActionId[] };
    } catch (error) {
      throw new RetireIncompleteError(current, error);
    }
  }

  async depart(agent: AgentIdentity): Promise<Departure> {
    const identity = parseArgument(AgentIdentity, agent, "agent");
    return this.#write(async (store) => {
      const ended = await store.endAgent({
        identity,
        status: "departed",
        successor: null,
        now: this.#deps.now(),
      });
      const record =
        ended === undefined ? await this.#requireAgent(store, identity, "agent") : agentFromRow(ended.agent);
      if (record.status === "active") throw new Error(`departed ${identity} reads back as active`);
      return { agent: record, released: (ended?.released ?? []) as ActionId[] };
    });
  }

  async agents(): Promise<AgentRecord[]> {
    return this.#read(async (store) => (await store.agents()).map(agentFromRow));
  }

  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort();
    await this.#changes.close();
    await this.#pool.end();
  }

  /** Runs reads on pooled connections, refusing after close and turning a lost server into `busy`. */
  async #read<T>(operation: (store: PostgresStore) => Promise<T>): Promise<T> {
    this.#requireOpen();
    try {
      return await operation(new PostgresStore(this.#pool, this.#schema));
    } catch (error) {
      throw translatePostgresError(error);
    }
  }

  /**
   * Runs a write in one transaction that first takes the board's write lock, and, when it changed
   * something (a result other than undefined), NOTIFYs in the same transaction and wakes this
   * process's waiters after the commit.
   */
  async #write<T>(operation: (store: PostgresStore) => Promise<T>): Promise<T> {
    this.#requireOpen();
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw translatePostgresError(error);
    }
    let committing = false;
    let broken: Error | undefined;
    try {
      const store = new PostgresStore(client, this.#schema);
      await store.beginWrite();
      const result = await operation(store);
      committing = true;
      const head = await store.commitWrite(result === undefined ? undefined : this.#channel);
      if (head !== undefined) this.#changes.announce(head);
      return result;
    } catch (error) {
      if (isTransient(error)) broken = error as Error;
      else if (!committing) {
        await client.query("ROLLBACK").catch((rollbackError: unknown) => {
          broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
        });
      }
      throw translatePostgresError(error, committing);
    } finally {
      // A connection that failed is destroyed rather than handed to the next caller.
      client.release(broken);
    }
  }

  #requireOpen(): void {
    if (this.#closing.signal.aborted) throw new BoardError("closed", "the board is closed");
  }

  async #startPosition(store: PostgresStore, cursor: unknown): Promise<number> {
    if (cursor === undefined) return 0;
    const position = readCursor(cursor, this.#boardId);
    if (position > (await store.head())) {
      throw argumentError(
        "cursor",
        "is ahead of this board; was the board database replaced? start without a cursor",
      );
    }
    return position;
  }

  #cursorAt(position: number): Cursor {
    return mintCursor(this.#boardId, position);
  }

  async #requireAction(store: PostgresStore, id: string): Promise<ActionRow> {
    const row = await store.action(id);
    if (row === undefined) throw new BoardError("action_not_found", `no action ${id} on this board`);
    return row;
  }

  async #requireAgent(store: PostgresStore, identity: string, argument: string): Promise<AgentRecord> {
    const row = await store.agent(identity);
    if (row === undefined) {
      throw new BoardError("agent_not_found", `${argument}: ${identity} is not registered on this board`, {
        argument,
      });
    }
    return agentFromRow(row);
  }

  async #requireActive(
    store: PostgresStore,
    identity: AgentIdentity,
    argument: string,
  ): Promise<ActiveAgent> {
    const record = await this.#requireAgent(store, identity, argument);
    if (record.status !== "active") {
      throw new BoardError("agent_not_active", `${argument}: ${identity} is ${record.status}`, { argument });
    }
    return record;
  }

  async #requireSuccessor(
    store: PostgresStore,
    successor: AgentIdentity,
    retiring: AgentIdentity,
  ): Promise<ActiveAgent> {
    const record = await this.#requireActive(store, successor, "successor");
    if (successor === retiring || record.name !== parseAgentIdentity(retiring).name) {
      throw argumentError(
        "successor",
        `must be another active identity of ${parseAgentIdentity(retiring).name}`,
      );
    }
    return record;
  }
}

/** Random ids can collide; an insert that found its id taken answers undefined, so mint again. */
async function mintUntilFree<T>(what: string, insert: () => Promise<T | undefined>): Promise<T> {
  for (let attempt = 1; attempt <= mintAttempts; attempt++) {
    const inserted = await insert();
    if (inserted !== undefined) return inserted;
  }
  throw new Error(`could not mint a fresh ${what} in ${mintAttempts} attempts`);
}

/** Settles with `operation`, or rejects at once when `signal` aborts (its reason) or the board closes. */
function abortable<T>(
  operation: Promise<T>,
  signal: AbortSignal | undefined,
  closing: AbortSignal,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal?.reason);
    const onClosing = () => reject(new BoardError("closed", "the board was closed during the wait"));
    signal?.addEventListener("abort", onAbort, { once: true });
    closing.addEventListener("abort", onClosing, { once: true });
    operation.then(resolve, reject).finally(() => {
      signal?.removeEventListener("abort", onAbort);
      closing.removeEventListener("abort", onClosing);
    });
  });
}
