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
  type ClaimNextOutcome,
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
import type { Awaitable, Lookup, Store } from "./store.js";
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
   * Runs `operation`, which makes exactly one write through the store, as one transaction, and,
   * when it changed something (a result other than undefined), wakes waiters here and in other
   * processes. `operation` must make its write at once: a store that answers at once (SQLite) never
   * spans a turn of the event loop, and one that answers later (PostgreSQL) sends the whole
   * transaction in one round trip.
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
 * its SQL (`Store`) and the mechanics of running it (`StoreRunner`). Every change is one
 * compare-and-set statement; when it changes nothing, one read in one snapshot explains why.
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
    for (let attempt = 1; ; attempt++) {
      const id = `act_${Buffer.from(this.#deps.randomBytes(8)).toString("hex")}`;
      const inserted = await this.#write((store) =>
        store.insertAction({
          id,
          kind,
          recipient: to,
          sender: from,
          senderAgent: sender.agent,
          body,
          now: this.#deps.now(),
        }),
      );
      if (inserted !== undefined) return actionFromRow(inserted) as OpenAction;
      // The insert checks an agent sender itself; a sender that is active now was active then, so
      // the miss was a clash of random ids: mint again.
      if (sender.agent !== null) {
        await this.#read(async (store) =>
          requireActive(await store.lookup({ agent: from }), from as AgentIdentity, "from"),
        );
      }
      if (attempt >= mintAttempts)
        throw new Error(`could not mint a fresh action id in ${mintAttempts} attempts`);
    }
  }

  async get(id: ActionId): Promise<ActionRecord> {
    const actionId = parseArgument(ActionId, id, "id");
    return this.#read(async (store) => {
      const row = await store.action(actionId);
      if (row === undefined) throw actionNotFound(actionId);
      return actionFromRow(row);
    });
  }

  async list(options: ListOptions = {}): Promise<ActionPage> {
    requireObject(options, "options");
    const limit = parseIntegerArgument(options.limit ?? listLimit.default, "limit", 1, listLimit.max);
    return this.#read(async (store) => {
      const start = this.#position(options.cursor);
      const { rows, head } = await store.actionsAfter(start, limit);
      this.#requireWithin(start, head);
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
        const found = await store.lookup({ agent: identity });
        requireActive(found, identity, "agent");
        const position = this.#position(cursor);
        this.#requireWithin(position, found.head);
        return position;
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
    // The compare-and-set decides; the read after a miss only explains it. A miss on an action that
    // reads as claimable again (released meanwhile) tries the compare-and-set once more.
    for (let attempt = 0; ; attempt++) {
      const claimed = await this.#write((store) => store.claim(actionId, identity, name, this.#deps.now()));
      if (claimed !== undefined)
        return { outcome: "claimed", record: actionFromRow(claimed) as ClaimedAction };
      const outcome = await this.#read(async (store): Promise<ClaimOutcome | "retry"> => {
        const found = await store.lookup({ action: actionId, agent: identity });
        requireActive(found, identity, "agent");
        const row = requireAction(found, actionId);
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

  async claimNext(agent: AgentIdentity): Promise<ClaimNextOutcome> {
    const identity = parseArgument(AgentIdentity, agent, "agent");
    const { name } = parseAgentIdentity(identity);
    const claimed = await this.#write((store) => store.claimNext(identity, name, this.#deps.now()));
    if (claimed !== undefined) return { outcome: "claimed", record: actionFromRow(claimed) as ClaimedAction };
    // Nothing was claimable, or the caller may not claim at all; the read tells which.
    await this.#read(async (store) =>
      requireActive(await store.lookup({ agent: identity }), identity, "agent"),
    );
    return { outcome: "none" };
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
      const found = await store.lookup({ action: actionId, agent: identity });
      const record = actionFromRow(requireAction(found, actionId));
      const heldByCaller = "claimedBy" in record && record.claimedBy === identity;
      if (record.state === "done" && heldByCaller) return { outcome: "completed", record };
      if (record.state === "cancelled" && heldByCaller) return { outcome: "cancelled", record };
      requireActive(found, identity, "agent");
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
      const byAgent = sender.agent === null ? undefined : canceller;
      const found = await store.lookup({ action: actionId, agent: byAgent });
      if (byAgent !== undefined) requireActive(found, byAgent as AgentIdentity, "by");
      const row = requireAction(found, actionId);
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
    for (let attempt = 1; ; attempt++) {
      const identity = mintAgentIdentity(agentName, this.#deps.randomBytes);
      const inserted = await this.#write((store) => store.insertAgent(identity, agentName, this.#deps.now()));
      if (inserted !== undefined) return agentFromRow(inserted) as ActiveAgent;
      if (attempt >= mintAttempts)
        throw new Error(`could not mint a fresh identity in ${mintAttempts} attempts`);
    }
  }

  async retire(agent: AgentIdentity, options: RetireOptions = {}): Promise<Retirement> {
    const identity = parseArgument(AgentIdentity, agent, "agent");
    requireObject(options, "options");
    const { name } = parseAgentIdentity(identity);
    await this.#read(async (store) =>
      requireActive(await store.lookup({ agent: identity }), identity, "agent"),
    );
    const current =
      options.successor === undefined
        ? await this.register(name)
        : await this.#read(async (store) => {
            const successor = parseArgument(AgentIdentity, options.successor, "successor");
            return requireSuccessor(await store.lookup({ agent: successor }), successor, identity);
          });
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
    const ended = await this.#write((store) =>
      store.endAgent({ identity, status: "departed", successor: null, now: this.#deps.now() }),
    );
    // Departing again changes nothing: an identity that is no longer active never becomes active.
    const record =
      ended === undefined
        ? await this.#read(async (store) =>
            requireAgent(await store.lookup({ agent: identity }), identity, "agent"),
          )
        : agentFromRow(ended.agent);
    if (record.status === "active") throw new Error(`departed ${identity} reads back as active`);
    return { agent: record, released: (ended?.released ?? []) as ActionId[] };
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

  /** Runs one write, refusing after close. */
  async #write<T>(operation: (store: Store) => Awaitable<T>): Promise<T> {
    this.#requireOpen();
    return this.#runner.write(operation);
  }

  #requireOpen(): void {
    if (this.#closing.signal.aborted) throw new BoardError("closed", "the board is closed");
  }

  /** The position a cursor names; the start of the board without one. */
  #position(cursor: unknown): number {
    return cursor === undefined ? 0 : readCursor(cursor, this.#boardId);
  }

  /** A cursor past the head was minted by a board that has since been replaced under the same id. */
  #requireWithin(position: number, head: number): void {
    if (position > head) {
      throw argumentError(
        "cursor",
        `is ahead of this board; was the ${this.#runner.noun} replaced? start without a cursor`,
      );
    }
  }

  #cursorAt(position: number): Cursor {
    return mintCursor(this.#boardId, position);
  }
}

function actionNotFound(id: string): BoardError {
  return new BoardError("action_not_found", `no action ${id} on this board`);
}

function requireAction(found: Lookup, id: string): ActionRow {
  if (found.action === undefined) throw actionNotFound(id);
  return found.action;
}

function requireAgent(found: Lookup, identity: string, argument: string): AgentRecord {
  if (found.agent === undefined) {
    throw new BoardError("agent_not_found", `${argument}: ${identity} is not registered on this board`, {
      argument,
    });
  }
  return agentFromRow(found.agent);
}

function requireActive(found: Lookup, identity: AgentIdentity, argument: string): ActiveAgent {
  const record = requireAgent(found, identity, argument);
  if (record.status !== "active") {
    throw new BoardError("agent_not_active", `${argument}: ${identity} is ${record.status}`, { argument });
  }
  return record;
}

function requireSuccessor(found: Lookup, successor: AgentIdentity, retiring: AgentIdentity): ActiveAgent {
  const record = requireActive(found, successor, "successor");
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
