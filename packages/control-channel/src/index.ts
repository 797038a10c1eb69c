export {
  type BridgeGeneration,
  type BridgeGenerationOptions,
  bridgeGenerationDir,
  removeStaleGenerations,
  startBridgeGeneration,
} from "./bridge-generation.js";
export {
  claudeCommNames,
  type FindClaudePidInput,
  findClaudePid,
  InvalidClaudePidError,
  isClaudeComm,
} from "./claude-pid.js";
export {
  type ConnectionLimiter,
  type ConnectionLimits,
  type HttpConnectionLimits,
  type IdleCloseReason,
  type LimitConnectionsOptions,
  limitConnections,
  limitHttpConnections,
} from "./connection-limits.js";
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
  defaultControlConnectionLimits,
  maxRetireBodyBytes,
  type RequestRetire,
  retirePath,
  type SettledRetireOutcome,
  startControlServer,
} from "./control-server.js";
export {
  type ClaudeMcpConfig,
  type CodexMcpOverrides,
  claudeMcpConfig,
  codexMcpOverrides,
  defaultGateHookScriptPath,
  defaultShimCommand,
  defaultShimScriptPath,
  type McpStdioMount,
  type MintTurnMountOptions,
  mintTurnMount,
  type ShimCommand,
  type WriteMcpConfigFileOptions,
  writeMcpConfigFile,
} from "./mcp-mount.js";
export {
  defaultShimRebindWaitMs,
  parseRebind,
  type RebindCredentials,
  runShim,
  ShimExitCode,
  type ShimOptions,
  shimMain,
  shimRebindFileEnvVar,
  shimSocketEnvVar,
  shimTokenEnvVar,
  shimTokenFileEnvVar,
  takeRebindFile,
  takeTokenFile,
} from "./mcp-shim.js";
export {
  assertGeneration,
  assertSocketPath,
  defaultHelloTimeoutMs,
  defaultMcpConnectionLimits,
  McpMountError,
  type McpMountErrorCode,
  type McpRefusalReason,
  type McpServerLike,
  type McpSocketEvent,
  type McpSocketServer,
  type McpSocketServerOptions,
  maxHelloBytes,
  maxSocketPathBytes,
  mcpSocketName,
  type SocketChannel,
  startMcpSocketServer,
} from "./mcp-socket-server.js";
export { SocketTransport, type SocketTransportOptions } from "./mcp-socket-transport.js";
export { TurnTokenRegistry } from "./mcp-turn-tokens.js";
export { isPidAlive, type SignalSender } from "./pid.js";
export { type WritePrivateFileOptions, writePrivateFileAtomic } from "./private-file.js";
export {
  checkControlProcess,
  type ExecFile,
  type ProcessInfo,
  type ProcessReader,
  parseProcStat,
  type ReadTextFile,
  readProcessFromProcfs,
  readProcessWithPs,
  readStartTimeFromProcfs,
  readStartTimeWithPs,
  type StartTimeReader,
  systemProcessReader,
  systemStartTimeReader,
} from "./process-reader.js";
export {
  bridgeProof,
  challengeAuthorization,
  macsEqual,
  mintNonce,
  parseRetireAuthorization,
  parseServerChallenge,
  type RetireAuthorization,
  retireAuthorization,
  retireMac,
  serverChallenge,
} from "./retire-proof.js";
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
export {
  maxAnswerBytes,
  maxRequestBytes,
  requestChannelName,
  type SendSocketRequestOptions,
  type SocketRequestHandler,
  type SocketRequestResult,
  sendSocketRequest,
  serveSocketRequest,
} from "./socket-request.js";
export { mintToken, type RandomBytes, tokenMatcher, tokensEqual } from "./token.js";
export {
  defaultToolGateDeadlineMs,
  gateRebindFileEnvVar,
  maxHookInputBytes,
  runToolGateHook,
  ToolGateHookExit,
  type ToolGateHookOptions,
  toolGateHookMain,
} from "./tool-gate-hook.js";
