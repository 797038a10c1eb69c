import type { ChildProcess } from "node:child_process";
import { afterEach, beforeEach, describe } from "vitest";
import type { Board } from "../board.js";
import { BoardProcess } from "./board-process.js";
import { describeActionWaitContract } from "./contract-action-waits.js";
import { describeActionContract } from "./contract-actions.js";
import { describeAgentContract } from "./contract-agents.js";
import { describeApprovalContract } from "./contract-approvals.js";
import { describeClaimContract } from "./contract-claims.js";
import { describeCloseOutContract } from "./contract-closing.js";
import { describeLeaseContract } from "./contract-leases.js";
import { describeWaitContract } from "./contract-waits.js";
import { draftAction, killByPid, tickingClock } from "./helpers.js";
import type { BoardContractHarness, ContractScope } from "./scope.js";

export { claimedOutcome, draftAction, killByPid, refusal, tickingClock } from "./helpers.js";

/**
 * The behaviour every `Board` implementation shares, one module per area. Run it once per
 * implementation: `describeBoardContract("sqlite", async () => sqliteHarness())`.
 */
export function describeBoardContract(name: string, makeHarness: () => Promise<BoardContractHarness>): void {
  describe(`Board contract: ${name}`, () => {
    const harnesses: BoardContractHarness[] = [];
    const boards: Board[] = [];
    const children: ChildProcess[] = [];
    let harness: BoardContractHarness;

    const newHarness = async () => {
      const made = await makeHarness();
      harnesses.push(made);
      return made;
    };

    beforeEach(async () => {
      harness = await newHarness();
    });

    afterEach(async () => {
      await Promise.all(children.splice(0).map(killByPid));
      await Promise.all(boards.splice(0).map((board) => board.close()));
      await Promise.all(harnesses.splice(0).map((made) => made.dispose()));
    });

    const scope: ContractScope = {
      newHarness,
      async open(deps = {}, on = harness) {
        const board = await on.openBoard({ ...tickingClock(), ...deps });
        boards.push(board);
        return board;
      },
      // Every child is tracked from the moment it exists, so one that never gets ready is killed too.
      async spawn() {
        const child = harness.spawnBoardProcess();
        children.push(child);
        return BoardProcess.start(child);
      },
      settlesAtOnce(promise) {
        const settled = promise.then(
          (value) => ({ value }),
          (reason: unknown) => ({ reason }),
        );
        const later = new Promise<"pending">((resolve) => setImmediate(() => resolve("pending")));
        return Promise.race([settled, later]);
      },
      draft: draftAction,
      never: 10_000,
      sixteenProcesses: { timeout: 120_000 },
    };

    describeActionContract(scope);
    describeWaitContract(scope);
    describeClaimContract(scope);
    describeCloseOutContract(scope);
    describeAgentContract(scope);
    describeLeaseContract(scope);
    describeApprovalContract(scope);
    describeActionWaitContract(scope);
  });
}
