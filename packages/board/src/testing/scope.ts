import type { ChildProcess } from "node:child_process";
import type { ActionDraft } from "@bridgeworks/protocol";
import type { Board, BoardDeps } from "../board.js";
import type { BoardProcess } from "./board-process.js";

/** One store (a file, a database) that a contract test opens boards and board processes on. */
export interface BoardContractHarness {
  /**
   * Opens another board on this harness's store; each call is a separate connection. The board's
   * safety re-check must be slower than a test's timeout, so the tests prove the prompt wake-ups.
   */
  openBoard(deps?: Partial<BoardDeps>): Promise<Board>;
  /** Starts a process serving a board on the same store with `serveBoardOverStdio`; stdin and stdout piped. */
  spawnBoardProcess(): ChildProcess;
  /** Removes the store. Every board and process the suite opened is closed or killed by then. */
  dispose(): Promise<void>;
}

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
