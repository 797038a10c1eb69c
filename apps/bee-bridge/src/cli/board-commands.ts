import { migrateBoard, redactBoardLocation } from "@bridgeworks/board";
import { defineCommand, defineGroup } from "@bridgeworks/cli";
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

export const boardGroup = defineGroup<BeeContext>("board", "the board's store", [migrateCommand]);
