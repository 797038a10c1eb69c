export { type CliLostNote, cliLostNote, describeCall } from "./cli-lost-notes.js";
export { type Clock, systemClock } from "./clock.js";
export type { ConsistencyProblem, ConsistencyProblemKind } from "./consistency.js";
export { JournalError, type JournalErrorCode } from "./errors.js";
export { defaultMaxReadEvents, type JournalEvents } from "./events.js";
export { type FollowHandle, type FollowOptions, type FollowSource, followTurn } from "./follow.js";
export type { JournalGate } from "./gate.js";
export { createUuidV7Generator, type RandomBytes } from "./ids.js";
export { openJournal, type TurnJournal } from "./journal.js";
export type { JournalMaintenance } from "./maintenance.js";
export { latestSchemaVersion } from "./migrations.js";
export {
  type BatchPolicy,
  defaultBatchPolicy,
  type EventTransform,
  type JournalOptions,
  type Synchronous,
} from "./options.js";
export type { JournalPermissions } from "./permissions.js";
export {
  applyRecovery,
  defaultRecoveryPolicy,
  mayHaveRunError,
  planRecovery,
  type RecoveryDecision,
  type RecoveryJournal,
  type RecoveryOutcome,
  type RecoveryPolicy,
  recoverJournal,
  unfinishedCalls,
} from "./recovery.js";
export type { JournalSecrets } from "./secrets.js";
export { defaultSessionPageLimit } from "./session-pages.js";
export { defaultSearchPageSize, searchRankWindow } from "./session-search.js";
export type { JournalSessions, SessionPage, WaitingSessionPage } from "./sessions.js";
export { openSqlite, sqliteAddonPath } from "./sqlite.js";
export type { TurnListener } from "./subscribers.js";
export type { JournalTurns } from "./turns.js";
