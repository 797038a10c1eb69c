import { migrateBoard, redactBoardLocation } from "@bridgeworks/board";
import { defineCommand, defineGroup, integer } from "@bridgeworks/cli";
import { maxLeaseTtlMs, minLeaseTtlMs } from "@bridgeworks/protocol";
import { retryWhileBusy } from "../board-access.js";
import { boardLocation, boardOptions, withBoard } from "./board-options.js";
import type { BeeContext } from "./context.js";
import { describeAgent } from "./describe-records.js";

const command = defineCommand<BeeContext>();

export const agentsCommand = command({
  name: "agents",
  summary: "list the board's identities: active, retired and departed",
  options: boardOptions,
  async run({ options }, context) {
    const agents = await withBoard(context, options.board, (board) => board.agents());
    if (options.json) context.stdout(`${JSON.stringify(agents)}\n`);
    else if (agents.length === 0) context.stdout("no agents on the board\n");
    else for (const agent of agents) context.stdout(`${describeAgent(agent)}\n`);
  },
});

const migrateCommand = command({
  name: "migrate",
  summary: "create or migrate the board's schema ahead of time; prints the versions",
  options: boardOptions,
  examples: [
    {
      command: "BEE_BOARD='postgres://bee@db.example.com/team?schema=bee_team' bee board migrate",
      summary: "a team board on PostgreSQL, by a role that may create tables",
    },
  ],
  async run({ options }, context) {
    const location = boardLocation(context, options.board);
    const migration = await migrateBoard(location);
    if (options.json) {
      context.stdout(`${JSON.stringify({ ...migration, board: redactBoardLocation(location) })}\n`);
      return;
    }
    const change =
      migration.previousVersion === migration.schemaVersion
        ? `already at schema version ${migration.schemaVersion}`
        : `migrated from schema version ${migration.previousVersion} to ${migration.schemaVersion}`;
    context.stdout(`${migration.store} board ${redactBoardLocation(location)}: ${change}\n`);
  },
});

const settingsCommand = command({
  name: "settings",
  summary: "show the board's shared settings, or change them",
  description:
    "--lease-ttl: how long an agent's claims outlive its bridge. A bridge renews its identity's lease\n" +
    "every third of it; when a bridge dies (or loses the board) its claims are claimable again once it\n" +
    "lapses, and its late completes are refused (stale_fence). Applies from each lease's next renewal.",
  options: {
    "lease-ttl": {
      type: "string",
      placeholder: "MS",
      summary: `the lease TTL in milliseconds (${minLeaseTtlMs} to ${maxLeaseTtlMs}; default 15000)`,
      parse: integer(minLeaseTtlMs, maxLeaseTtlMs),
    },
    ...boardOptions,
  },
  async run({ options }, context) {
    const leaseTtlMs = options["lease-ttl"];
    const settings = await withBoard(context, options.board, (board) =>
      retryWhileBusy(() => (leaseTtlMs === undefined ? board.settings() : board.configure({ leaseTtlMs })), {
        withinMs: 5000,
      }),
    );
    context.stdout(options.json ? `${JSON.stringify(settings)}\n` : `lease TTL ${settings.leaseTtlMs} ms\n`);
  },
});

export const boardGroup = defineGroup<BeeContext>("board", "the board's store and settings", [
  migrateCommand,
  settingsCommand,
]);
