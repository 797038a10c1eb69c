export type {
  Board,
  BoardActions,
  BoardAgents,
  BoardApprovals,
  BoardDeps,
  BoardWaits,
  ListOptions,
  RetireOptions,
  WaitOptions,
} from "./board.js";
export { BoardError, RetireIncompleteError } from "./errors.js";
export { isPostgresLocation, redactBoardLocation, resolveBoardLocation } from "./location.js";
export {
  type BoardMigration,
  type BoardStore,
  boardStoreOf,
  migrateBoard,
  type OpenBoardOptions,
  openBoard,
} from "./open-board.js";
export { openPostgresBoard, type PostgresBoardOptions } from "./postgres/postgres-board.js";
export { openSqliteBoard, type SqliteBoardOptions } from "./sqlite/sqlite-board.js";
export { type ChangeSource, type Scan, type WaitForRecordsInput, waitForRecords } from "./wait.js";
