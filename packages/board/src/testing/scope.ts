import type { ActionDraft } from "@bridgeworks/protocol";
import type { Board, BoardDeps } from "../board.js";
import type { BoardProcess } from "./board-process.js";
import type { BoardContractHarness } from "./contract.js";

/** What every area of the contract suite gets from `describeBoardContract`, fresh for each test. */
export interface ContractScope {
  /** Opens a board on this test's store (or on `on`), closed after the test; a ticking clock unless `deps` says. */
  open(deps?: Partial<BoardDeps>, on?: BoardContractHarness): Promise<Board>;
  /** A process serving a board on this test's store, killed after the test. */
  spawn(): Promise<BoardProcess>;
  /** Another store, disposed after the test. */
  newHarness(): Promise<BoardContractHarness>;
  /** What `promise` settled with by the next turn of the event loop, or `pending`. */
  settlesAtOnce<T>(promise: Promise<T>): Promise<{ value?: T; reason?: unknown } | "pending">;
  draft(overrides?: Partial<ActionDraft>): ActionDraft;
  /** A wait bound shorter than a test's timeout, so a wake-up that never comes fails as an empty page. */
  never: number;
  /** Sixteen node processes take a while to start on a loaded machine; this only bounds a hang. */
  sixteenProcesses: { timeout: number };
}
