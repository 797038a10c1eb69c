import { RetireIncompleteError } from "@bridgeworks/board";
import type { ActiveAgent, AgentIdentity, AgentName, AgentProcess, Retirement } from "@bridgeworks/protocol";
import type { Logger } from "@bridgeworks/runtime";
import type { BoardAccess } from "./board-access.js";
import { retryWhileBusy } from "./board-access.js";

export interface RetireReport {
  retired: AgentIdentity;
  current: AgentIdentity;
}

/** What asked for the retire: the `mcp_tool` hook (with its new session id) or `POST /retire`. */
export type ClearTrigger = { via: "session-event"; sessionId: string } | { via: "control" };

export interface BridgeIdentityOptions {
  access: BoardAccess;
  name: AgentName;
  /** This process, recorded with each identity so people watching the board see who holds what. */
  process?: AgentProcess | undefined;
  log: Logger;
  now?: () => number;
  /**
   * `bee setup claude` installs both /clear paths, so one /clear can arrive twice (hook tool and
   * `/retire`) within milliseconds, in either order. Requests this close to a retire join it.
   */
  coalesceWindowMs?: number;
  /** How long a retire keeps retrying while another process holds the board's write lock. */
  busyRetryMs?: number;
}

interface ClearInFlight {
  startedAt: number;
  sessionId: string | undefined;
  result: Promise<RetireReport>;
}

/**
 * The bridge's identity on the board. Registered at start (or on first use when the board was
 * unavailable), replaced on /clear: the successor is registered first, then the old one retired. A
 * retire that registered the successor but failed to retire the old one still moves the bridge to
 * the successor and reports the failure.
 */
export class BridgeIdentity {
  readonly #options: BridgeIdentityOptions;
  readonly #now: () => number;
  #current: ActiveAgent | undefined;
  #registering: Promise<ActiveAgent> | undefined;
  #lastClear: ClearInFlight | undefined;
  #unfinished: { old: AgentIdentity; successor: ActiveAgent } | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: BridgeIdentityOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  get name(): AgentName {
    return this.#options.name;
  }

  /** The identity as far as known without touching the board. */
  peek(): AgentIdentity | undefined {
    return this.#current?.identity;
  }

  /** The current identity, registering one first if the bridge has none yet. */
  async current(): Promise<AgentIdentity> {
    if (this.#current) return this.#current.identity;
    this.#registering ??= this.#register().finally(() => {
      this.#registering = undefined;
    });
    return (await this.#registering).identity;
  }

  async #register(): Promise<ActiveAgent> {
    const board = await this.#options.access.board();
    const agent = await retryWhileBusy(
      () => board.register(this.#options.name, { process: this.#options.process }),
      {
        withinMs: this.#options.busyRetryMs ?? 3000,
      },
    );
    this.#current = agent;
    this.#options.log.info("identity registered", { identity: agent.identity });
    return agent;
  }

  /**
   * The lease of `lapsed` lapsed (the bridge could not renew it in time: a suspended machine, a
   * board out of reach): the board has ended it and released its claims, so the bridge registers a
   * fresh identity, unless something else already moved it on.
   */
  replaceLapsed(lapsed: AgentIdentity): Promise<AgentIdentity> {
    return this.#serialized(async () => {
      if (this.#current !== undefined && this.#current.identity !== lapsed) return this.#current.identity;
      this.#current = undefined;
      const agent = await this.#register();
      this.#options.log.warn("lease lapsed; registered a new identity", {
        lapsed,
        current: agent.identity,
      });
      return agent.identity;
    });
  }

  /** Retires the current identity for a /clear, joining a retire of the same /clear. */
  clear(trigger: ClearTrigger): Promise<RetireReport> {
    const now = this.#now();
    const last = this.#lastClear;
    const windowMs = this.#options.coalesceWindowMs ?? 5000;
    if (last !== undefined) {
      const recent = now - last.startedAt < windowMs;
      if (trigger.via === "session-event") {
        if (last.sessionId === trigger.sessionId) return last.result;
        if (recent && last.sessionId === undefined) {
          last.sessionId = trigger.sessionId;
          return last.result;
        }
      } else if (recent) {
        return last.result;
      }
    }
    const result = this.#serialized(() => this.#retire());
    this.#lastClear = {
      startedAt: now,
      sessionId: trigger.via === "session-event" ? trigger.sessionId : undefined,
      result,
    };
    result.catch(() => {});
    return result;
  }

  #serialized<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(work, work);
    this.#queue = next.catch(() => {});
    return next;
  }

  async #retire(): Promise<RetireReport> {
    const old = await this.current();
    const board = await this.#options.access.board();
    await this.#finishUnfinished();
    let retirement: Retirement;
    try {
      retirement = await retryWhileBusy(() => board.retire(old), {
        withinMs: this.#options.busyRetryMs ?? 30_000,
      });
    } catch (error) {
      if (error instanceof RetireIncompleteError) {
        // Never stay on the identity we meant to retire: move on, and finish the retire later.
        this.#current = error.successor;
        this.#unfinished = { old, successor: error.successor };
        this.#options.log.error("retire incomplete", { retired: old, current: error.successor.identity });
      }
      throw error;
    }
    this.#current = retirement.current;
    this.#options.log.info("identity retired", { retired: old, current: retirement.current.identity });
    return { retired: old, current: retirement.current.identity };
  }

  async #finishUnfinished(): Promise<void> {
    const unfinished = this.#unfinished;
    if (!unfinished) return;
    const board = await this.#options.access.board();
    await board.retire(unfinished.old, { successor: unfinished.successor.identity });
    this.#unfinished = undefined;
  }

  /** Leaves the board at shutdown: the current identity departs and its claims go back to open. */
  async depart(): Promise<void> {
    const current = this.#current;
    if (!current) return;
    const board = await this.#options.access.board();
    await board.depart(current.identity);
    this.#options.log.info("identity departed", { identity: current.identity });
  }
}
