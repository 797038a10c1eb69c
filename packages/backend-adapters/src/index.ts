export {
  type CliExit,
  type CliLaunch,
  type CliProcessDeps,
  type CliProcessHooks,
  type RunningCli,
  startCliProcess,
} from "./cli-process.js";
export { LineSplitter } from "./line-splitter.js";
export {
  type FenceOptions,
  type FenceOutcome,
  fenceProcess,
  isSameProcess,
  type ProcessIdentity,
  type ProcessStatus,
  type ProcessStatusReader,
  readProcessStatus,
  signalProcessGroup,
} from "./process-identity.js";
