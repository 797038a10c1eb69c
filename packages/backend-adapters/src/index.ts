export {
  type BackendAdapter,
  type ClassifyContext,
  type ConversationRef,
  defaultMcpServerName,
  type McpMount,
  type McpSpec,
  type PreparedTurn,
  type StreamTranslator,
  type ToolGateSpec,
  type TranslatedLine,
  type TurnOutcome,
  type TurnSpec,
} from "./backend-adapter.js";
export {
  type ClaudeAdapterOptions,
  type ClaudeFileSystem,
  claudeEffectFreeTools,
  claudeInstallHint,
  createClaudeAdapter,
} from "./claude-adapter.js";
export { claudeConfigDir, claudeProjectDirName, claudeTranscriptPath } from "./claude-transcript.js";
export { type ClaudeTranslatorOptions, createClaudeTranslator } from "./claude-translator.js";
export {
  type CliExit,
  type CliLaunch,
  type CliProcessDeps,
  type CliProcessHooks,
  CliStartError,
  type CliStartErrorCode,
  type LinePosition,
  type RunningCli,
  startCliProcess,
} from "./cli-process.js";
export {
  type EndSessionOptions,
  endSession,
  fenceCli,
  linuxProcessTable,
  type ProcessTable,
  sessionMembers,
} from "./cli-session.js";
export {
  type CliExitStatus,
  type CliSpawner,
  CliSpawnFailure,
  type CliSpawnSpec,
  type InProcessSpawnerDeps,
  inProcessSpawner,
  type SpawnedCli,
} from "./cli-spawner.js";
export {
  type CodexAdapterOptions,
  codexEffectFreeTools,
  codexInstallHint,
  createCodexAdapter,
} from "./codex-adapter.js";
export { type CodexTranslatorOptions, createCodexTranslator } from "./codex-translator.js";
export {
  type ConfinementSpec,
  claudeConfinementSettings,
  codexConfinementKeys,
  codexConfinementOverrides,
  codexPermissionProfile,
} from "./confinement.js";
export { type ExecutableLookup, findExecutable } from "./executable.js";
export {
  connectKeeper,
  defaultKeeperScriptPath,
  type KeeperClient,
  type KeeperProcessOptions,
  KeeperUnavailable,
  type KeptCliSink,
  openKeeper,
} from "./keeper-client.js";
export { type KeeperOptions, runKeeper } from "./keeper-server.js";
export type { KeptCliDeps } from "./kept-cli.js";
export {
  defaultMaxLineBytes,
  LineSplitter,
  type LineSplitterOptions,
  LineTooLongError,
} from "./line-splitter.js";
export {
  type FenceOptions,
  type FenceOutcome,
  fenceProcess,
  isSameProcess,
  type ProcessIdentity,
  type ProcessStatus,
  type ProcessStatusReader,
  readProcessStatus,
  readProcStat,
  signalProcessGroup,
} from "./process-identity.js";
export { lowerProcessPriority } from "./process-priority.js";
export { type RunningTurn, type RunTurnHooks, runTurn, type TurnResult } from "./run-turn.js";
export {
  findProcessesBySpawnMarker,
  mintSpawnMarker,
  type ProcessEnvironment,
  type ProcessTableReader,
  readLinuxProcessTable,
  readProcessTable,
  spawnMarkerVariable,
} from "./spawn-marker.js";
export {
  defaultSpawnerScriptPath,
  type SpawnerProcess,
  type SpawnerProcessOptions,
  startSpawnerProcess,
} from "./spawner-process.js";
export { runCliSpawner } from "./spawner-server.js";
export { gateHookShellCommand, gateHookTimeoutSeconds } from "./tool-gate.js";
export { TurnErrorCode } from "./turn-error-code.js";
