export type { Board, BoardDeps, ListOptions, RetireOptions, WaitOptions } from "./board.js";
export { BoardError, RetireIncompleteError } from "./errors.js";
export { resolveBoardLocation } from "./location.js";
export { openSqliteBoard, type SqliteBoardOptions } from "./sqlite/sqlite-board.js";
export { type ChangeSource, type Scan, type WaitForRecordsInput, waitForRecords } from "./wait.js";
