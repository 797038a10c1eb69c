import { isAbsolute } from "node:path";
import {
  type Board,
  isPostgresLocation,
  redactBoardLocation,
  resolveBoardLocation,
} from "@bridgeworks/board";
import { UsageError } from "@bridgeworks/cli";
import { issueProblems } from "@bridgeworks/protocol";
import type { z } from "zod";
import { openBeeBoard } from "../board-access.js";
import type { BeeContext } from "./context.js";

/** The options every board command takes. */
export const boardOptions = {
  board: {
    type: "string",
    placeholder: "PATH|URL",
    summary:
      "the board: an absolute SQLite path or a postgres:// URL (default BEE_BOARD, else the state dir)",
    complete: "file",
  },
  json: { type: "boolean", summary: "print the result as JSON" },
} as const;

/** `--board`, else `BEE_BOARD`, else the default file: an absolute SQLite path or a `postgres://` URL. */
export function boardLocation(context: BeeContext, board: string | undefined): string {
  if (board === undefined) return resolveBoardLocation(context.env, context.homeDir);
  if (!isPostgresLocation(board) && !isAbsolute(board)) {
    throw new UsageError(
      "--board",
      `must be an absolute path or a postgres:// URL, got ${redactBoardLocation(board)}`,
    );
  }
  return board;
}

export async function withBoard<T>(
  context: BeeContext,
  board: string | undefined,
  use: (board: Board) => Promise<T>,
): Promise<T> {
  const opened = await openBeeBoard(boardLocation(context, board), { busyTimeoutMs: 2000 });
  try {
    return await use(opened);
  } finally {
    await opened.close();
  }
}

/** A value typed on the command line, against its protocol schema; a refusal names `argument`. */
export function parseValue<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  argument: string,
): z.output<Schema> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new UsageError(
      argument,
      issueProblems(parsed.error.issues)
        .map((issue) => issue.problem)
        .join("; "),
    );
  }
  return parsed.data;
}
