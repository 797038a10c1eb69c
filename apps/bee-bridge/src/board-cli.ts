import { isAbsolute } from "node:path";
import {
  type Board,
  BoardError,
  isPostgresLocation,
  migrateBoard,
  redactBoardLocation,
  resolveBoardLocation,
} from "@bridgeworks/board";
import {
  ActionBody,
  ActionId,
  ActionKind,
  ActionRecipient,
  type ActionRecord,
  ActionResult,
  AgentName,
  type AgentRecord,
  Cursor,
  HumanSender,
} from "@bridgeworks/protocol";
import type { z } from "zod";
import { openBeeBoard, retryWhileBusy } from "./board-access.js";
import { UsageError } from "./log.js";
import { defaultPostKind } from "./tool-arguments.js";

export interface CliIo {
  env: Readonly<Record<string, string | undefined>>;
  homeDir: string;
  stdout: (text: string) => void;
}

/** Exit codes of the board commands: 0 done, 1 the board refused or failed, 2 bad usage, 3 lost a claim race. */
export const exitCodes = { ok: 0, failed: 1, usage: 2, taken: 3 } as const;

export interface BoardCommandOptions {
  board?: string | undefined;
}

/** `--board`, else `BEE_BOARD`, else the default file: an absolute SQLite path or a `postgres://` URL. */
export function boardLocation(io: CliIo, options: BoardCommandOptions): string {
  if (options.board === undefined) return resolveBoardLocation(io.env, io.homeDir);
  if (!isPostgresLocation(options.board) && !isAbsolute(options.board)) {
    throw new UsageError(
      "--board",
      `must be an absolute path or a postgres:// URL, got ${redactBoardLocation(options.board)}`,
    );
  }
  return options.board;
}

export async function withBoard<T>(
  io: CliIo,
  options: BoardCommandOptions,
  use: (board: Board) => Promise<T>,
): Promise<T> {
  const board = await openBeeBoard(boardLocation(io, options), { busyTimeoutMs: 2000 });
  try {
    return await use(board);
  } finally {
    await board.close();
  }
}

export function parseValue<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  argument: string,
): z.output<Schema> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new UsageError(argument, parsed.error.issues[0]?.message ?? "invalid");
  return parsed.data;
}

export async function postCommand(
  io: CliIo,
  options: BoardCommandOptions & {
    to: string | undefined;
    kind: string | undefined;
    from: string | undefined;
    body: string | undefined;
    json: boolean;
  },
): Promise<number> {
  if (options.to === undefined) throw new UsageError("--to", "is required (an agent name or *)");
  if (options.body === undefined) throw new UsageError("body", "is required");
  const draft = {
    to: parseValue(ActionRecipient, options.to, "--to"),
    kind: parseValue(ActionKind, options.kind ?? defaultPostKind, "--kind"),
    from: parseValue(HumanSender, options.from ?? "human", "--from"),
    body: parseValue(ActionBody, options.body, "body"),
  };
  const record = await withBoard(io, options, (board) =>
    retryWhileBusy(() => board.post(draft), { withinMs: 5000 }),
  );
  io.stdout(options.json ? `${JSON.stringify(record)}\n` : `posted ${record.id} to ${record.to}\n`);
  return exitCodes.ok;
}

export async function listCommand(
  io: CliIo,
  options: BoardCommandOptions & { since: string | undefined; limit: string | undefined; json: boolean },
): Promise<number> {
  const cursor = options.since === undefined ? undefined : parseValue(Cursor, options.since, "--since");
  const limit = options.limit === undefined ? undefined : parseLimit(options.limit);
  const page = await withBoard(io, options, (board) => board.list({ cursor, limit }));
  if (options.json) {
    io.stdout(`${JSON.stringify(page)}\n`);
  } else {
    for (const record of page.records) io.stdout(`${describeRecord(record)}\n`);
    io.stdout(`cursor ${page.cursor}\n`);
  }
  return exitCodes.ok;
}

export async function agentsCommand(
  io: CliIo,
  options: BoardCommandOptions & { json: boolean },
): Promise<number> {
  const agents = await withBoard(io, options, (board) => board.agents());
  if (options.json) io.stdout(`${JSON.stringify(agents)}\n`);
  else for (const agent of agents) io.stdout(`${describeAgent(agent)}\n`);
  return exitCodes.ok;
}

export async function claimCommand(
  io: CliIo,
  options: BoardCommandOptions & { id: string | undefined; as: string | undefined; json: boolean },
): Promise<number> {
  const id = parseValue(ActionId, options.id, "id");
  const name = parseValue(AgentName, options.as ?? "human", "--as");
  const outcome = await withBoard(io, options, async (board) => {
    const agent = await retryWhileBusy(() => board.register(name), { withinMs: 5000 });
    return retryWhileBusy(() => board.claim(agent.identity, id), { withinMs: 5000 });
  });
  if (options.json) io.stdout(`${JSON.stringify(outcome)}\n`);
  else if (outcome.outcome === "claimed") io.stdout(`claimed ${id} as ${outcome.record.claimedBy}\n`);
  else io.stdout(`taken: ${id} is ${describeHolder(outcome.record)}\n`);
  return outcome.outcome === "claimed" ? exitCodes.ok : exitCodes.taken;
}

export async function completeCommand(
  io: CliIo,
  options: BoardCommandOptions & {
    id: string | undefined;
    as: string | undefined;
    result: string | undefined;
    json: boolean;
  },
): Promise<number> {
  const id = parseValue(ActionId, options.id, "id");
  const name = parseValue(AgentName, options.as ?? "human", "--as");
  const result =
    options.result === undefined ? undefined : parseValue(ActionResult, options.result, "--result");
  const outcome = await withBoard(io, options, async (board) => {
    const record = await board.get(id);
    // The CLI completes as the identity that claimed the action, which must carry the name it acts as.
    if (record.state !== "claimed" && record.state !== "done") {
      throw new UsageError("id", `${id} is ${record.state}; only a claimed action can be completed`);
    }
    if (!record.claimedBy.startsWith(`agent:${name}#`)) {
      throw new UsageError("--as", `${id} is claimed by ${record.claimedBy}, not by an identity of ${name}`);
    }
    return retryWhileBusy(() => board.complete(record.claimedBy, id, result), { withinMs: 5000 });
  });
  if (options.json) io.stdout(`${JSON.stringify(outcome)}\n`);
  else io.stdout(outcome.outcome === "completed" ? `completed ${id}\n` : `cancelled: ${id} was cancelled\n`);
  return outcome.outcome === "completed" ? exitCodes.ok : exitCodes.failed;
}

/** `bee board migrate`: creates or migrates the board's schema ahead of time and reports the versions. */
export async function migrateCommand(
  io: CliIo,
  options: BoardCommandOptions & { json: boolean },
): Promise<number> {
  const location = boardLocation(io, options);
  const migration = await migrateBoard(location);
  if (options.json) {
    io.stdout(`${JSON.stringify({ ...migration, board: redactBoardLocation(location) })}\n`);
  } else {
    const change =
      migration.previousVersion === migration.schemaVersion
        ? `already at schema version ${migration.schemaVersion}`
        : `migrated from schema version ${migration.previousVersion} to ${migration.schemaVersion}`;
    io.stdout(`${migration.store} board ${redactBoardLocation(location)}: ${change}\n`);
  }
  return exitCodes.ok;
}

function parseLimit(raw: string): number {
  if (!/^[0-9]+$/.test(raw) || Number(raw) < 1 || Number(raw) > 500) {
    throw new UsageError("--limit", `must be an integer from 1 to 500, got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

function describeRecord(record: ActionRecord): string {
  const firstLine = record.body.split("\n")[0] ?? "";
  const holder = record.state === "open" ? "" : ` (${describeHolder(record)})`;
  return `${record.id} ${record.state}${holder} ${record.kind} ${record.from} -> ${record.to}: ${firstLine}`;
}

function describeHolder(record: ActionRecord): string {
  switch (record.state) {
    case "open":
      return "open";
    case "claimed":
      return `claimed by ${record.claimedBy}`;
    case "done":
      return `done by ${record.claimedBy}`;
    case "cancelled":
      return `cancelled by ${record.cancelledBy}`;
  }
}

function describeAgent(agent: AgentRecord): string {
  switch (agent.status) {
    case "active":
      return `${agent.identity} active since ${agent.registeredAt}`;
    case "retired":
      return `${agent.identity} retired ${agent.endedAt} (successor ${agent.successor})`;
    case "departed":
      return `${agent.identity} departed ${agent.endedAt}`;
  }
}

export function isBoardError(error: unknown): error is BoardError {
  return error instanceof BoardError;
}
