import { randomBytes as cryptoRandomBytes } from "node:crypto";
import { closeSync, mkdirSync, openSync } from "node:fs";
import { dirname, isAbsolute } from "node:path";
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
import Database from "better-sqlite3";
import { parseArgument, parseIntegerArgument, parseOptionalSignal } from "../arguments.js";
import type { Board, BoardDeps, ListOptions, RetireOptions, WaitOptions } from "../board.js";
import { mintCursor, readCursor } from "../cursor.js";
import { argumentError, BoardError, RetireIncompleteError } from "../errors.js";
import { type ActionRow, actionFromRow, agentFromRow } from "../rows.js";
import { describeSender, listLimit, maxTimeoutMs, mintAttempts, requireObject, waitLimit } from "../rules.js";
import { waitForRecords } from "../wait.js";
import { ChangeFeed } from "./change-feed.js";
import { migrate } from "./schema.js";
import { SqliteStore } from "./store.js";

export interface SqliteBoardOptions extends Partial<BoardDeps> {
  /** Absolute path of the board file; see `resolveBoardLocation`. Parent dirs are created 0700. */
  path: string;
  /** How long a write waits for another process's write lock before failing `busy`. Default 5000. */
  busyTimeoutMs?: number;
  /** The safety re-check for waiters, in case a wake-up is missed. Default 1000. */
  recheckIntervalMs?: number;
}

/** Opens (creating and migrating as needed) the SQLite board shared by every bridge on the machine. */
export async function openSqliteBoard(options: SqliteBoardOptions): Promise<Board> {
  if (typeof options !== "object" || options === null) throw argumentError("options", "must be an object");
  const path = options.path;
  if (typeof path !== "string" || !isAbsolute(path))
    throw argumentError("path", "must be an absolute file path");
  const busyTimeoutMs = parseIntegerArgument(options.busyTimeoutMs ?? 5000, "busyTimeoutMs", 0, 600_000);
  const recheckIntervalMs = parseIntegerArgument(
    options.recheckIntervalMs ?? 1000,
    "recheckIntervalMs",
    1,
    3_600_000,
  );
  const deps: BoardDeps = {
    now: options.now ?? Date.now,
    randomBytes: options.randomBytes ?? cryptoRandomBytes,
  };

  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  createPrivately(path);
  const notifyPath = `${path}-notify`;
  createPrivately(notifyPath);

  const db = translateSqliteErrors(() => {
    const opened = new Database(path, { timeout: busyTimeoutMs });
    try {
      const mode = opened.pragma("journal_mode = WAL", { simple: true });
      if (mode !== "wal") {
        throw new BoardError(
          "incompatible_store",
          `the board file cannot use WAL (journal mode ${String(mode)})`,
        );
      }
      opened.pragma("synchronous = NORMAL");
      migrate(opened, deps.randomBytes);
      return opened;
    } catch (error) {
      opened.close();
      throw error;
    }
  });
  const store = new SqliteStore(db);
  const changes = new ChangeFeed({ notifyPath, readHead: () => store.head(), recheckIntervalMs });
  return new SqliteBoard(
    db,
    store,
    changes,
    deps,
    translateSqliteErrors(() => store.boardId()),
  );
}

/** SQLite creates the file and its `-wal`/`-shm` with the file's mode; make that owner-only. */
function createPrivately(path: string): void {
  try {
    closeSync(openSync(path, "wx", 0o600));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
  }
}

class SqliteBoard implements Board {
  readonly #db: Database.Database;
  readonly #store: SqliteStore;
  readonly #changes: ChangeFeed;
  readonly #deps: BoardDeps;
  readonly #boardId: string;
  readonly #closing = new AbortController();

  constructor(
    db: Database.Database,
    store: SqliteStore,
    changes: ChangeFeed,
    deps: BoardDeps,
    boardId: string,
  ) {
    this.#db = db;
    this.#store = store;
    this.#changes = changes;
    this.#deps = deps;
    this.#boardId = boardId;
  }

  async post(draft: ActionDraft): Promise<OpenAction> {
    const { kind, to, from, body } = parseArgument(ActionDraft, draft, "draft");
    const sender = describeSender(from);
    return this.#write(() => {
      if (sender.agent !== null) this.#requireActive(from as AgentIdentity, "from");
      const row = retryOnIdClash("action", () =>
        this.#store.insertAction({
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
    return this.#run(() => actionFromRow(this.#requireAction(actionId)));
  }

  async list(options: ListOptions = {}): Promise<ActionPage> {
    requireObject(options, "options");
    const limit = parseIntegerArgument(options.limit ?? listLimit.default, "limit", 1, listLimit.max);
    return this.#run(() => {
      const start = this.#startPosition(options.cursor);
      const rows = this.#store.actionsAfter(start, limit);
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
    const start = this.#run(() => {
      this.#requireActive(identity, "agent");
      return this.#startPosition(cursor);
    });
    return waitForRecords({
      start,
      timeoutMs,
      signal,
      closing: this.#closing.signal,
      changes: this.#changes,
      cursorAt: (position) => this.#cursorAt(position),
      scan: (after) =>
        this.#run(() => {
          const { rows, head } = this.#store.claimableAfter(name, after, limit);
          // A full page may have more behind it; otherwise nothing up to the head is claimable.
          const position = rows.length === limit ? rows[rows.length - 1]!.seq : Math.max(head, after);
          return { records: rows.map(actionFromRow), position };
        }),
    });
  }

  async claim(agent: AgentIdentity, id: ActionId): Promise<ClaimOutcome> {
    const identity = parseArgument(AgentIdentity, agent, "agent");
    const actionId = parseArgument(ActionId, id, "id");
    const { name } = parseAgentIdentity(identity);
    // The compare-and-set decides; the reads after a miss only explain it. A miss on an action that
    // reads as claimable again (released meanwhile) tries the compare-and-set once more.
    for (let attempt = 0; ; attempt++) {
      const claimed = this.#write(() => this.#store.claim(actionId, identity, name, this.#deps.now()));
      if (claimed !== undefined)
        return { outcome: "claimed", record: actionFromRow(claimed) as ClaimedAction };
      const outcome = this.#run((): ClaimOutcome | "retry" => {
        this.#requireActive(identity, "agent");
        const row = this.#requireAction(actionId);
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
    const completed = this.#write(() => this.#store.complete(actionId, identity, text, this.#deps.now()));
    if (completed !== undefined)
      return { outcome: "completed", record: actionFromRow(completed) as DoneAction };
    return this.#run((): CompleteOutcome => {
      const record = actionFromRow(this.#requireAction(actionId));
      const heldByCaller = "claimedBy" in record && record.claimedBy === identity;
      if (record.state === "done" && heldByCaller) return { outcome: "completed", record };
      if (record.state === "cancelled" && heldByCaller) return { outcome: "cancelled", record };
      this.#requireActive(identity, "agent");
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
    const cancelled = this.#write(() =>
      this.#store.cancel({
        id: actionId,
        by: canceller,
        byAgent: sender.agent,
        reason: text,
        now: this.#deps.now(),
      }),
    );
    if (cancelled !== undefined) return actionFromRow(cancelled) as CancelledAction;
    return this.#run(() => {
      if (sender.agent !== null) this.#requireActive(canceller as AgentIdentity, "by");
      const row = this.#requireAction(actionId);
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
    return this.#write(() => {
      const row = retryOnIdClash("identity", () => {
        const identity = mintAgentIdentity(agentName, this.#deps.randomBytes);
        return this.#store.insertAgent(identity, agentName, this.#deps.now());
      });
      return agentFromRow(row) as ActiveAgent;
    });
  }

  async retire(agent: AgentIdentity, options: RetireOptions = {}): Promise<Retirement> {
    const identity = parseArgument(AgentIdentity, agent, "agent");
    requireObject(options, "options");
    const { name } = parseAgentIdentity(identity);
    this.#run(() => this.#requireActive(identity, "agent"));
    const current =
      options.successor === undefined
        ? await this.register(name)
        : this.#run(() =>
            this.#requireSuccessor(parseArgument(AgentIdentity, options.successor, "successor"), identity),
          );
    try {
      const ended = this.#write(() =>
        this.#store.endAgent({
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
    return this.#write(() => {
      const ended = this.#store.endAgent({
        identity,
        status: "departed",
        successor: null,
        now: this.#deps.now(),
      });
      const record = ended === undefined ? this.#requireAgent(identity, "agent") : agentFromRow(ended.agent);
      if (record.status === "active") throw new Error(`departed ${identity} reads back as active`);
      return { agent: record, released: (ended?.released ?? []) as ActionId[] };
    });
  }

  async agents(): Promise<AgentRecord[]> {
    return this.#run(() => this.#store.agents().map(agentFromRow));
  }

  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort();
    this.#changes.close();
    this.#db.close();
  }

  /** Runs a read, refusing after close and turning contention into a retryable `busy`. */
  #run<T>(operation: () => T): T {
    if (this.#closing.signal.aborted) throw new BoardError("closed", "the board is closed");
    return translateSqliteErrors(operation);
  }

  /**
   * Runs a write in one immediate transaction and, when it changed something (a result other than
   * undefined), wakes waiters here and in other processes.
   */
  #write<T>(operation: () => T): T {
    const result = this.#run(() => this.#db.transaction(operation).immediate());
    if (result !== undefined) this.#changes.announce();
    return result;
  }

  #startPosition(cursor: unknown): number {
    if (cursor === undefined) return 0;
    const position = readCursor(cursor, this.#boardId);
    if (position > this.#store.head()) {
      throw argumentError(
        "cursor",
        "is ahead of this board; was the board file replaced? start without a cursor",
      );
    }
    return position;
  }

  #cursorAt(position: number): Cursor {
    return mintCursor(this.#boardId, position);
  }

  #requireAction(id: string): ActionRow {
    const row = this.#store.action(id);
    if (row === undefined) throw new BoardError("action_not_found", `no action ${id} on this board`);
    return row;
  }

  #requireAgent(identity: string, argument: string): AgentRecord {
    const row = this.#store.agent(identity);
    if (row === undefined) {
      throw new BoardError("agent_not_found", `${argument}: ${identity} is not registered on this board`, {
        argument,
      });
    }
    return agentFromRow(row);
  }

  #requireActive(identity: AgentIdentity, argument: string): ActiveAgent {
    const record = this.#requireAgent(identity, argument);
    if (record.status !== "active") {
      throw new BoardError("agent_not_active", `${argument}: ${identity} is ${record.status}`, { argument });
    }
    return record;
  }

  #requireSuccessor(successor: AgentIdentity, retiring: AgentIdentity): ActiveAgent {
    const record = this.#requireActive(successor, "successor");
    if (successor === retiring || record.name !== parseAgentIdentity(retiring).name) {
      throw argumentError(
        "successor",
        `must be another active identity of ${parseAgentIdentity(retiring).name}`,
      );
    }
    return record;
  }
}

/** Random ids can collide; a collision is a primary key violation, so mint again. */
function retryOnIdClash<T>(what: string, insert: () => T): T {
  for (let attempt = 1; ; attempt++) {
    try {
      return insert();
    } catch (error) {
      if ((error as { code?: unknown }).code !== "SQLITE_CONSTRAINT_PRIMARYKEY") throw error;
      if (attempt >= mintAttempts)
        throw new Error(`could not mint a fresh ${what} in ${mintAttempts} attempts`);
    }
  }
}

/** SQLITE_BUSY and SQLITE_LOCKED (with their extended codes) mean another writer held on too long. */
export function translateSqliteErrors<T>(operation: () => T): T {
  try {
    return operation();
  } catch (error) {
    if (error instanceof Database.SqliteError && /^SQLITE_(BUSY|LOCKED)/.test(error.code)) {
      throw new BoardError("busy", `the board file is busy (${error.code}); retry`, { cause: error });
    }
    throw error;
  }
}
