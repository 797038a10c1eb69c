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
import { parseArgument, parseIntegerArgument, parseOptionalSignal } from "./arguments.js";
import type { Board, BoardDeps, ListOptions, RetireOptions, WaitOptions } from "./board.js";
import { mintCursor, readCursor } from "./cursor.js";
import { argumentError, BoardError, RetireIncompleteError } from "./errors.js";
import { type ActionRow, actionFromRow, agentFromRow } from "./rows.js";
import { describeSender, listLimit, maxTimeoutMs, mintAttempts, requireObject, waitLimit } from "./rules.js";
import type { Awaitable, Store } from "./store.js";
import type { WaitForRecordsInput } from "./wait.js";

/** A wait as the core asks for it; the runner brings the change feed. */
export type StoreWaitInput = Omit<WaitForRecordsInput, "changes">;

/** How one store runs the core's questions: its connections, transactions, errors and wake-ups. */
export interface StoreRunner {
  /** What messages call the store: `board file`, `board database`. */
  readonly noun: string;
  /** Runs reads, turning contention or a lost server into the retryable `busy`. */
  read<T>(operation: (store: Store) => Promise<T>): Promise<T>;
  /**
   * Runs `operation` in one write transaction and, when it changed something (a result other than
   * undefined), wakes waiters here and in other processes. `operation` answers at once on a store
   * that does (SQLite), so such a store's transaction never spans a turn of the event loop.
   */
  write<T>(operation: (store: Store) => Awaitable<T>): Promise<T>;
  /** `waitForRecords` on the store's change feed. */
  wait(input: StoreWaitInput): Promise<ActionPage>;
  /** Releases every handle; the core has already rejected pending waits. */
  close(): Promise<void>;
}

/** `now` and `randomBytes` as given, else the clock and the system's randomness. */
export function boardDeps(options: Partial<BoardDeps>): BoardDeps {
  return { now: options.now ?? Date.now, randomBytes: options.randomBytes ?? cryptoRandomBytes };
}

/**
 * The board's rules, written once for every store: argument checks, who may post, claim, complete
 * and cancel, what a lost compare-and-set means, minting, retire and depart. A store brings only
 * its SQL (`Store`) and the mechanics of running it (`StoreRunner`).
 */
export class StoreBoard implements Board {
  readonly #runner: StoreRunner;
  readonly #deps: BoardDeps;
  readonly #boardId: string;
  readonly #closing = new AbortController();

  constructor(runner: StoreRunner, deps: BoardDeps, boardId: string) {
    this.#runner = runner;
    this.#deps = deps;
    this.#boardId = boardId;
  }

  async post(draft: ActionDraft): Promise<OpenAction> {
    const { kind, to, from, body } = parseArgument(ActionDraft, draft, "draft");
    const sender = describeSender(from);
    return this.#write((store) => {
      const active = sender.agent === null ? undefined : requireActive(store, from as AgentIdentity, "from");
      const row = then(active, () =>
        mintUntilFree("action", () =>
          store.insertAction({
            id: `act_${Buffer.from(this.#deps.randomBytes(8)).toString("hex")}`,
            kind,
            recipient: to,
            sender: from,
            senderAgent: sender.agent,
            body,
            now: this.#deps.now(),
          }),
        ),
      );
      return then(row, (inserted) => actionFromRow(inserted) as OpenAction);
    });
  }

  async get(id: ActionId): Promise<ActionRecord> {
    const actionId = parseArgument(ActionId, id, "id");
    return this.#read(async (store) => actionFromRow(await requireAction(store, actionId)));
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
    // The first read may go to a server, so an abort or a close must not wait for it to come back.
    const start = await abortable(
      this.#read(async (store) => {
        await requireActive(store, identity, "agent");
        return this.#startPosition(store, cursor);
      }),
      signal,
      this.#closing.signal,
    );
    return this.#runner.wait({
      start,
      timeoutMs,
      signal,
      closing: this.#closing.signal,
      cursorAt: (position) => this.#cursorAt(position),
      scan: (after) =>
        this.#read(async (store) => {
          const { rows, head } = await store.claimableAfter(name, after, limit);
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
      const claimed = await this.#write((store) => store.claim(actionId, identity, name, this.#deps.now()));
      if (claimed !== undefined)
        return { outcome: "claimed", record: actionFromRow(claimed) as ClaimedAction };
      const outcome = await this.#read(async (store): Promise<ClaimOutcome | "retry"> => {
        await requireActive(store, identity, "agent");
        const row = await requireAction(store, actionId);
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
      const record = actionFromRow(await requireAction(store, actionId));
      const heldByCaller = "claimedBy" in record && record.claimedBy === identity;
      if (record.state === "done" && heldByCaller) return { outcome: "completed", record };
      if (record.state === "cancelled" && heldByCaller) return { outcome: "cancelled", record };
      await requireActive(store, identity, "agent");
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
      if (sender.agent !== null) await requireActive(store, canceller as AgentIdentity, "by");
      const row = await requireAction(store, actionId);
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
    return this.#write((store) => {
      const row = mintUntilFree("identity", () =>
        store.insertAgent(mintAgentIdentity(agentName, this.#deps.randomBytes), agentName, this.#deps.now()),
      );
      return then(row, (inserted) => agentFromRow(inserted) as ActiveAgent);
    });
  }

  async retire(agent: AgentIdentity, options: RetireOptions = {}): Promise<Retirement> {
    const identity = parseArgument(AgentIdentity, agent, "agent");
    requireObject(options, "options");
    const { name } = parseAgentIdentity(identity);
    await this.#read(async (store) => requireActive(store, identity, "agent"));
    const current =
      options.successor === undefined
        ? await this.register(name)
        : await this.#read(async (store) =>
            requireSuccessor(store, parseArgument(AgentIdentity, options.successor, "successor"), identity),
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
    return this.#write((store) =>
      then(
        store.endAgent({ identity, status: "departed", successor: null, now: this.#deps.now() }),
        (ended) =>
          then(
            ended === undefined ? requireAgent(store, identity, "agent") : agentFromRow(ended.agent),
            (record): Departure => {
              if (record.status === "active") throw new Error(`departed ${identity} reads back as active`);
              return { agent: record, released: (ended?.released ?? []) as ActionId[] };
            },
          ),
      ),
    );
  }

  async agents(): Promise<AgentRecord[]> {
    return this.#read(async (store) => (await store.agents()).map(agentFromRow));
  }

  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort();
    await this.#runner.close();
  }

  /** Runs reads, refusing after close. */
  async #read<T>(operation: (store: Store) => Promise<T>): Promise<T> {
    this.#requireOpen();
    return this.#runner.read(operation);
  }

  /** Runs one write transaction, refusing after close. */
  async #write<T>(operation: (store: Store) => Awaitable<T>): Promise<T> {
    this.#requireOpen();
    return this.#runner.write(operation);
  }

  #requireOpen(): void {
    if (this.#closing.signal.aborted) throw new BoardError("closed", "the board is closed");
  }

  async #startPosition(store: Store, cursor: unknown): Promise<number> {
    if (cursor === undefined) return 0;
    const position = readCursor(cursor, this.#boardId);
    if (position > (await store.head())) {
      throw argumentError(
        "cursor",
        `is ahead of this board; was the ${this.#runner.noun} replaced? start without a cursor`,
      );
    }
    return position;
  }

  #cursorAt(position: number): Cursor {
    return mintCursor(this.#boardId, position);
  }
}

/**
 * Goes on with `value` at once when the store answered at once, else when it settles: a write
 * transaction on a store that answers at once (SQLite) must not wait for a later turn.
 */
function then<T, U>(value: Awaitable<T>, next: (value: T) => Awaitable<U>): Awaitable<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}

/** Random ids can collide; an insert that found its id taken answers undefined, so mint again. */
function mintUntilFree<T>(what: string, insert: () => Awaitable<T | undefined>, attempt = 1): Awaitable<T> {
  return then(insert(), (inserted) => {
    if (inserted !== undefined) return inserted;
    if (attempt >= mintAttempts)
      throw new Error(`could not mint a fresh ${what} in ${mintAttempts} attempts`);
    return mintUntilFree(what, insert, attempt + 1);
  });
}

function requireAction(store: Store, id: string): Awaitable<ActionRow> {
  return then(store.action(id), (row) => {
    if (row === undefined) throw new BoardError("action_not_found", `no action ${id} on this board`);
    return row;
  });
}

function requireAgent(store: Store, identity: string, argument: string): Awaitable<AgentRecord> {
  return then(store.agent(identity), (row) => {
    if (row === undefined) {
      throw new BoardError("agent_not_found", `${argument}: ${identity} is not registered on this board`, {
        argument,
      });
    }
    return agentFromRow(row);
  });
}

function requireActive(store: Store, identity: AgentIdentity, argument: string): Awaitable<ActiveAgent> {
  return then(requireAgent(store, identity, argument), (record) => {
    if (record.status !== "active") {
      throw new BoardError("agent_not_active", `${argument}: ${identity} is ${record.status}`, { argument });
    }
    return record;
  });
}

async function requireSuccessor(
  store: Store,
  successor: AgentIdentity,
  retiring: AgentIdentity,
): Promise<ActiveAgent> {
  const record = await requireActive(store, successor, "successor");
  if (successor === retiring || record.name !== parseAgentIdentity(retiring).name) {
    throw argumentError(
      "successor",
      `must be another active identity of ${parseAgentIdentity(retiring).name}`,
    );
  }
  return record;
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
