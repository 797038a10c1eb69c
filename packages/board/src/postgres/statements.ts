import type pg from "pg";
import { serverNowMs } from "./functions-v3.js";

/**
 * Columns by name, never `*`: a prepared statement's result shape is fixed when it is parsed, so a
 * later migration that adds a column must not change what a running bee's statements return.
 */
const actionColumns =
  "id, seq, kind, recipient, sender, sender_agent, body, state, claimed_by, claimed_at, fence, cancelled_by, result, created_at, closed_at, deciders, decision, decided_by";
const agentColumns =
  "identity, name, status, registered_at, ended_at, successor, lease_expires_at, host, pid";
const lookupAgentColumns = agentColumns
  .split(", ")
  .map((column) => `g.${column} AS agent_${column}`)
  .join(", ");

function prefixed(alias: string, columns: string): string {
  return columns
    .split(", ")
    .map((column) => `${alias}.${column}`)
    .join(", ");
}

/** The SQL text of every statement, built once per schema; each is prepared under its own name. */
function statements(schema: string) {
  const actions = `${schema}.actions`;
  const agents = `${schema}.agents`;
  const head = `(SELECT coalesce(max(seq), 0) FROM ${actions})`;
  // A write is one call of its function (see schema.ts), so one statement and its own transaction.
  const call = (name: string, parameters: number, columns = actionColumns) =>
    `SELECT ${columns} FROM ${schema}.${name}(${Array.from({ length: parameters }, (_, index) => `$${index + 1}`).join(", ")})`;
  // One row, whatever exists: the rows and the head come from one statement, so one snapshot.
  const scan = (where: string) =>
    `SELECT latest.board_head, latest.lease_expires_in_ms, latest.agents_version, found.*
     FROM (SELECT ${head} AS board_head,
       (SELECT min(l.lease_expires_at) FROM ${agents} AS l WHERE l.status = 'active') - ${serverNowMs}
         AS lease_expires_in_ms,
       (SELECT b.agents_version FROM ${schema}.board AS b) AS agents_version) AS latest
     LEFT JOIN LATERAL (
       SELECT ${actionColumns} FROM ${actions} WHERE ${where} ORDER BY seq LIMIT $2
     ) AS found ON true
     ORDER BY found.seq`;
  return {
    boardId: `SELECT id FROM ${schema}.board`,
    insertAction: call("insert_action", 8),
    action: `SELECT ${actionColumns} FROM ${actions} WHERE id = $1`,
    lookup: `SELECT ${head} AS board_head, ${prefixed("a", actionColumns)}, ${lookupAgentColumns},
       g.lease_expires_at - ${serverNowMs} AS agent_lease_expires_in_ms
     FROM (VALUES (1)) AS one (x)
     LEFT JOIN ${actions} AS a ON a.id = $1::text
     LEFT JOIN ${agents} AS g ON g.identity = $2::text`,
    actionsAfter: scan("seq > $1"),
    // An approval reaches only the one it is addressed to, never everyone.
    claimableAfter: scan(
      "state = 'open' AND seq > $1 AND (recipient = $3 OR (recipient = '*' AND kind <> 'approval'))",
    ),
    claim: call("claim", 4),
    claimNext: call("claim_next", 3),
    complete: call("complete", 5),
    cancel: call("cancel", 5),
    decide: call("decide", 7),
    insertAgent: call("insert_agent", 6, agentColumns),
    renewLease: call("renew_lease", 1, agentColumns),
    agents: `SELECT ${agentColumns} FROM ${agents} ORDER BY position`,
    endAgent: `SELECT ${prefixed("(ended.agent)", agentColumns)}, ended.released
     FROM ${schema}.end_agent($1, $2, $3, $4) AS ended`,
    expireLeases: `SELECT expired, released FROM ${schema}.expire_leases($1)`,
    settings: `SELECT lease_ttl_ms FROM ${schema}.board`,
    setLeaseTtl: `SELECT ${schema}.set_lease_ttl($1) AS lease_ttl_ms`,
  };
}

type Statements = ReturnType<typeof statements>;
export type StatementName = keyof Statements;

/** The statements of one board, prepared per connection under names unique to the schema. */
export class PostgresStatements {
  readonly #text: Statements;
  readonly #prefix: string;

  /** `schema` is a validated identifier (see `parsePostgresLocation`), safe to splice into SQL. */
  constructor(schema: string) {
    this.#text = statements(schema);
    this.#prefix = `${schema}.`;
  }

  /** A named statement: PostgreSQL parses and plans it once per connection. */
  prepared(name: StatementName, values: unknown[]): pg.QueryConfig {
    return { name: this.#prefix + name, text: this.#text[name], values };
  }

  /** A statement sent as text: one-off. */
  text(name: "boardId"): string {
    return this.#text[name];
  }
}
