export { BoardProcess } from "./board-process.js";
export {
  claimedOutcome,
  describeBoardContract,
  draftAction,
  killByPid,
  refusal,
  tickingClock,
} from "./contract.js";
export { sleep, withoutLease } from "./helpers.js";
export { RoundTripTap } from "./round-trips.js";
export type { RemoteMethod } from "./rpc.js";
export type { BoardContractHarness } from "./scope.js";
