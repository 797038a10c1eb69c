import { BoardError } from "@bridgeworks/board";
import { describeError, type Logger } from "@bridgeworks/runtime";
import type { BoardAccess } from "./board-access.js";
import type { BridgeIdentity } from "./identity.js";

export interface LeaseKeeperOptions {
  access: BoardAccess;
  identity: BridgeIdentity;
  log: Logger;
  /** Renew this often until the board's TTL is known. */
  initialIntervalMs?: number;
  /** How many renewals between reads of the board's TTL (a board setting that may change). */
  settingsEvery?: number;
}

export interface LeaseKeeper {
  stop(): void;
}

/**
 * Keeps the bridge's identity alive on the board: renews its lease every third of the board's TTL,
 * so a claim is held exactly as long as this process lives and reaches the board. A lease that
 * lapsed anyway (the process was suspended, the board was out of reach for longer than the TTL)
 * gives the bridge a new identity; its old claims were released to others meanwhile.
 */
export function keepLease(options: LeaseKeeperOptions): LeaseKeeper {
  const { access, identity, log } = options;
  const settingsEvery = options.settingsEvery ?? 10;
  let intervalMs = options.initialIntervalMs ?? 200;
  let renewals = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const tick = async () => {
    const current = identity.peek();
    try {
      const board = await access.board();
      if (renewals++ % settingsEvery === 0) {
        intervalMs = Math.max(50, Math.floor((await board.settings()).leaseTtlMs / 3));
      }
      if (current !== undefined) await board.renew(current);
    } catch (error) {
      if (current !== undefined && error instanceof BoardError && error.code === "agent_not_active") {
        await identity.replaceLapsed(current).catch((replaceError: unknown) => {
          log.error("could not register a new identity after a lapsed lease", {
            error: describeError(replaceError),
          });
        });
      } else if (!stopped) {
        log.warn("lease renewal failed; trying again", { error: describeError(error) });
      }
    }
    schedule();
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => void tick(), intervalMs);
    // The stdio transport keeps the bridge alive; the lease alone must not.
    timer.unref();
  };
  schedule();
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
