import { randomBytes as cryptoRandomBytes } from "node:crypto";
import type {
  ActionDraft,
  ActionId,
  ActionPage,
  ActionRecord,
  ActionWaitResult,
  ActionWaitUntil,
  ActiveAgent,
  AgentIdentity,
  AgentRecord,
  ApprovalDecision,
  ApprovalRequest,
  BoardChanges,
  BoardSettings,
  CancelledAction,
  ClaimNextOutcome,
  ClaimOutcome,
  CompleteOutcome,
  Cursor,
  DecideOutcome,
  Departure,
  OpenAction,
  Retirement,
} from "@bridgeworks/protocol";
import type {
  ActionWaitOptions,
  Board,
  BoardDeps,
  ChangesWaitOptions,
  CompleteOptions,
  LeaseSweep,
  ListOptions,
  RegisterOptions,
  RetireOptions,
  WaitOptions,
} from "./board.js";
import * as actions from "./core/actions.js";
import * as agents from "./core/agents.js";
import * as approvals from "./core/approvals.js";
import type { CoreContext, StoreRunner } from "./core/context.js";
import * as waits from "./core/waits.js";
import { mintCursor, readCursor } from "./cursor.js";
import { argumentError, BoardError } from "./errors.js";
import type { Awaitable, Store } from "./store.js";

export type { StoreRunner, StoreWaitInput } from "./core/context.js";

/** `now` and `randomBytes` as given, else the clock and the system's randomness. */
export function boardDeps(options: Partial<BoardDeps>): BoardDeps {
  return { now: options.now ?? Date.now, randomBytes: options.randomBytes ?? cryptoRandomBytes };
}

/**
 * The board's rules, written once for every store (`core/`): argument checks, who may post, claim,
 * complete, cancel and decide, what a lost compare-and-set means, leases, minting, retire and
 * depart. A store brings only its SQL (`Store`) and the mechanics of running it (`StoreRunner`).
 * Every change is one compare-and-set statement; when it changes nothing, one read in one snapshot
 * explains why.
 */
export class StoreBoard implements Board {
  readonly #core: CoreContext;
  readonly #closing = new AbortController();

  constructor(runner: StoreRunner, deps: BoardDeps, boardId: string) {
    const closing = this.#closing.signal;
    const requireOpen = () => {
      if (closing.aborted) throw new BoardError("closed", "the board is closed");
    };
    this.#core = {
      deps,
      runner,
      closing,
      async read<T>(operation: (store: Store) => Promise<T>): Promise<T> {
        requireOpen();
        return runner.read(operation);
      },
      async write<T>(operation: (store: Store) => Awaitable<T>): Promise<T> {
        requireOpen();
        return runner.write(operation);
      },
      position: (cursor) => (cursor === undefined ? 0 : readCursor(cursor, boardId)),
      requireWithin(position, head) {
        if (position > head) {
          throw argumentError(
            "cursor",
            `is ahead of this board; was the ${runner.noun} replaced? start without a cursor`,
          );
        }
      },
      cursorAt: (position) => mintCursor(boardId, position),
    };
  }

  post(draft: ActionDraft): Promise<OpenAction> {
    return actions.post(this.#core, draft);
  }

  get(id: ActionId): Promise<ActionRecord> {
    return actions.get(this.#core, id);
  }

  list(options?: ListOptions): Promise<ActionPage> {
    return actions.list(this.#core, options);
  }

  waitForClaimable(
    agent: AgentIdentity,
    cursor: Cursor | undefined,
    options: WaitOptions,
  ): Promise<ActionPage> {
    return waits.waitForClaimable(this.#core, agent, cursor, options);
  }

  claim(agent: AgentIdentity, id: ActionId): Promise<ClaimOutcome> {
    return actions.claim(this.#core, agent, id);
  }

  claimNext(agent: AgentIdentity): Promise<ClaimNextOutcome> {
    return actions.claimNext(this.#core, agent);
  }

  complete(
    agent: AgentIdentity,
    id: ActionId,
    result?: string,
    options?: CompleteOptions,
  ): Promise<CompleteOutcome> {
    return actions.complete(this.#core, agent, id, result, options);
  }

  cancel(by: string, id: ActionId, reason?: string): Promise<CancelledAction> {
    return actions.cancel(this.#core, by, id, reason);
  }

  requestApproval(request: ApprovalRequest): Promise<OpenAction> {
    return approvals.requestApproval(this.#core, request);
  }

  decide(by: string, id: ActionId, decision: ApprovalDecision, reason?: string): Promise<DecideOutcome> {
    return approvals.decide(this.#core, by, id, decision, reason);
  }

  waitForAction(id: ActionId, until: ActionWaitUntil, options: ActionWaitOptions): Promise<ActionWaitResult> {
    return waits.waitForAction(this.#core, id, until, options);
  }

  waitForChanges(cursor: Cursor | undefined, options: ChangesWaitOptions): Promise<BoardChanges> {
    return waits.waitForChanges(this.#core, cursor, options);
  }

  register(name: string, options?: RegisterOptions): Promise<ActiveAgent> {
    return agents.register(this.#core, name, options);
  }

  renew(agent: AgentIdentity): Promise<ActiveAgent> {
    return agents.renew(this.#core, agent);
  }

  expireLeases(): Promise<LeaseSweep> {
    return agents.expireLeases(this.#core);
  }

  retire(agent: AgentIdentity, options?: RetireOptions): Promise<Retirement> {
    return agents.retire(this.#core, agent, options);
  }

  depart(agent: AgentIdentity): Promise<Departure> {
    return agents.depart(this.#core, agent);
  }

  agents(): Promise<AgentRecord[]> {
    return agents.agents(this.#core);
  }

  settings(): Promise<BoardSettings> {
    return agents.settings(this.#core);
  }

  configure(settings: Partial<BoardSettings>): Promise<BoardSettings> {
    return agents.configure(this.#core, settings);
  }

  async close(): Promise<void> {
    if (this.#closing.signal.aborted) return;
    this.#closing.abort();
    await this.#core.runner.close();
  }
}
