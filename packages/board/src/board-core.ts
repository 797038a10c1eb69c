import { randomBytes as cryptoRandomBytes } from "node:crypto";
import type { Board, BoardDeps } from "./board.js";
import { actionsArea } from "./core/actions.js";
import { agentsArea } from "./core/agents.js";
import { approvalsArea } from "./core/approvals.js";
import type { CoreContext, StoreRunner } from "./core/context.js";
import { waitsArea } from "./core/waits.js";
import { mintCursor, readCursor } from "./cursor.js";
import { argumentError, BoardError } from "./errors.js";
import type { Awaitable, Store } from "./store.js";

export type { StoreRunner, StoreWaitInput } from "./core/context.js";

/** `now` and `randomBytes` as given, else the clock and the system's randomness. */
export function boardDeps(options: Partial<BoardDeps>): BoardDeps {
  return { now: options.now ?? Date.now, randomBytes: options.randomBytes ?? cryptoRandomBytes };
}

/**
 * The board's rules, written once for every store (`core/`, one module per area: actions, approvals,
 * waits, agents): argument checks, who may post, claim, complete, cancel and decide, what a lost
 * compare-and-set means, leases, minting, retire and depart. A store brings only its SQL (`Store`)
 * and the mechanics of running it (`StoreRunner`). Every change is one compare-and-set statement;
 * when it changes nothing, one read in one snapshot explains why.
 */
export function storeBoard(runner: StoreRunner, deps: BoardDeps, boardId: string): Board {
  const closing = new AbortController();
  const core = coreContext(runner, deps, boardId, closing.signal);
  return {
    ...actionsArea(core),
    ...approvalsArea(core),
    ...waitsArea(core),
    ...agentsArea(core),
    async close() {
      if (closing.signal.aborted) return;
      closing.abort();
      await runner.close();
    },
  };
}

/** What every area shares: the runner's reads and writes, refused once `closing` aborts; cursors of this board. */
function coreContext(
  runner: StoreRunner,
  deps: BoardDeps,
  boardId: string,
  closing: AbortSignal,
): CoreContext {
  const requireOpen = () => {
    if (closing.aborted) throw new BoardError("closed", "the board is closed");
  };
  return {
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
