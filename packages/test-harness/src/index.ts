export { type RealClient, type RealClientName, resolveRealClient } from "./clients.js";
export { type DoubledEnvironment, type DoubledEnvironments, doubledEnvironments } from "./doubled.js";
export {
  createIsolatedEnvironment,
  DOUBLE_API_KEY,
  type IsolatedEnvironment,
  type IsolatedEnvironmentOptions,
  type SpawnInEnvironment,
  writeCodexConfig,
  writePiModels,
} from "./environment.js";
export {
  type FaultHit,
  type FaultPlan,
  type FaultRule,
  faultInjection,
  faultPreloadPath,
  loopDelayPreloadPath,
  readFaultLog,
  testOnlyNames,
} from "./faults.js";
export {
  type FloodTarget,
  type FullBacklog,
  fullBacklog,
  type IdleFlood,
  idleFlood,
  openDescriptors,
} from "./flood.js";
export {
  postgresClusterScript,
  postgresGlobalSetup,
  postgresServerUrl,
  startPostgresCluster,
  type TestCluster,
} from "./postgres.js";
export { type ExitStatus, isProcessAlive, ProcessTracker, type TrackedProcess } from "./processes.js";
export { parseJsonLines, waitUntil, withTimeout } from "./waiting.js";
