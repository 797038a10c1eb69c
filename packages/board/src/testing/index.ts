export { BoardProcess } from "./board-process.js";
export {
  type BoardContractHarness,
  describeBoardContract,
  killByPid,
  refusal,
  tickingClock,
} from "./contract.js";
export { RoundTripTap } from "./round-trips.js";
export type { RemoteMethod } from "./rpc.js";
