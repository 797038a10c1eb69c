import { Cursor } from "@bridgeworks/protocol";
import { parseArgument } from "./arguments.js";
import { argumentError } from "./errors.js";

const cursorVersion = 1;

/**
 * Cursors are base64url JSON `{v, b, s}`: a format version, the board's id (so a cursor from another
 * board file is refused rather than silently skipping records) and a board position.
 */
export function mintCursor(boardId: string, seq: number): Cursor {
  const text = JSON.stringify({ v: cursorVersion, b: boardId, s: seq });
  return Cursor.parse(Buffer.from(text, "utf8").toString("base64url"));
}

/** The board position a cursor names; anything this board did not mint is refused naming `cursor`. */
export function readCursor(value: unknown, boardId: string): number {
  const cursor = parseArgument(Cursor, value, "cursor");
  let content: unknown;
  try {
    content = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw argumentError("cursor", "is not a cursor the board returned");
  }
  if (!isCursorContent(content)) throw argumentError("cursor", "is not a cursor the board returned");
  if (content.v !== cursorVersion) {
    throw argumentError("cursor", `has version ${content.v}, this board reads version ${cursorVersion}`);
  }
  if (content.b !== boardId) {
    throw argumentError("cursor", "belongs to another board; start again without a cursor");
  }
  return content.s;
}

interface CursorContent {
  v: number;
  b: string;
  s: number;
}

function isCursorContent(value: unknown): value is CursorContent {
  if (typeof value !== "object" || value === null) return false;
  const { v, b, s } = value as Record<string, unknown>;
  return Number.isInteger(v) && typeof b === "string" && Number.isSafeInteger(s) && (s as number) >= 0;
}
