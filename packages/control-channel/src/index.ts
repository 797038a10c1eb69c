export {
  claudeCommNames,
  type FindClaudePidInput,
  findClaudePid,
  InvalidClaudePidError,
  isClaudeComm,
} from "./claude-pid.js";
export {
  defaultPostRetireTimeoutMs,
  type PostRetireOptions,
  type PostRetireResult,
  postRetire,
} from "./control-client.js";
export {
  type ControlServer,
  type ControlServerOptions,
  controlHost,
  defaultAnswerWithinMs,
  maxRetireBodyBytes,
  type RequestRetire,
  retirePath,
  type SettledRetireOutcome,
  startControlServer,
} from "./control-server.js";
export { isPidAlive, type SignalSender } from "./pid.js";
export {
  type ExecFile,
  type ProcessInfo,
  type ProcessReader,
  parseProcStat,
  type ReadTextFile,
  readProcessFromProcfs,
  readProcessWithPs,
  systemProcessReader,
} from "./process-reader.js";
export {
  beeRunDirRule,
  type EnsureRunDirOptions,
  ensureRunDir,
  RunDirError,
  type RunDirErrorCode,
  type RunDirRule,
  type RunDirSources,
  resolveRunDir,
} from "./run-dir.js";
export {
  type ReadRunFileResult,
  readRunFile,
  removeRunFileSync,
  runFileName,
  runFilePath,
  type SweepOptions,
  sweepStaleRunFiles,
  type WriteRunFileOptions,
  writeRunFile,
} from "./run-file.js";
export { mintToken, type RandomBytes, tokensEqual } from "./token.js";
