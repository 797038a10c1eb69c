import type { ChildProcess } from "node:child_process";
import { type BoardContractHarness, BoardProcess } from "../src/testing/index.js";

/**
 * Starts `count` board processes on the harness's store at once (each tracked in `children` from the
 * moment it exists, to be killed after the test), and has each register `name`; their identities.
 */
export async function registerFromProcesses(
  harness: BoardContractHarness,
  children: ChildProcess[],
  count: number,
  name = "bee",
): Promise<string[]> {
  const started = await Promise.all(
    Array.from({ length: count }, () => {
      const child = harness.spawnBoardProcess();
      children.push(child);
      return BoardProcess.start(child);
    }),
  );
  return Promise.all(started.map(async (each) => (await each.call("register", name)).identity));
}
