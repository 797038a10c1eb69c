export { BoardProcess } from "./board-process.js";
export {
  type BoardContractHarness,
  describeBoardContract,
  killByPid,
  refusal,
  tickingClock,
} from "./contract.js";
export type { RemoteMethod } from "./rpc.js";
