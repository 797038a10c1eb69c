export { type Clock, systemClock } from "./clock.js";
export type { ConsistencyProblem, ConsistencyProblemKind } from "./consistency.js";
export { JournalError, type JournalErrorCode } from "./errors.js";
export { type FollowHandle, type FollowOptions, followTurn } from "./follow.js";
export { createUuidV7Generator, type RandomBytes } from "./ids.js";
export {
  type BatchPolicy,
  defaultBatchPolicy,
  defaultMaxReadEvents,
  type JournalOptions,
  openJournal,
  type Synchronous,
  TurnJournal,
} from "./journal.js";
export { latestSchemaVersion } from "./migrations.js";
export {
  applyRecovery,
  defaultRecoveryPolicy,
  planRecovery,
  type RecoveryDecision,
  type RecoveryOutcome,
  type RecoveryPolicy,
  recoverJournal,
} from "./recovery.js";
export { defaultSessionPageLimit } from "./session-pages.js";
export { openSqlite, sqliteAddonPath } from "./sqlite.js";
export type { TurnListener } from "./subscribers.js";
