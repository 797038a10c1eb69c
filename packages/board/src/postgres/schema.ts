import type pg from "pg";
import { latestVersion, type Migration, mintBoardId, refuseNewerSchema } from "../migrations.js";
import { boardChannel, eventsChannel } from "./connection.js";
import { schemaV3 } from "./functions-v3.js";

const migrations: readonly Migration<
  (client: pg.ClientBase, schema: string, randomBytes: (size: number) => Uint8Array) => Promise<void>
>[] = [
  {
    version: 1,
    async up(client, schema, randomBytes) {
      await client.query(`
        CREATE TABLE ${schema}.board (
          id text NOT NULL,
          -- One row: the board's id, and the row every write locks so positions follow commit order.
          singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton)
        );

        CREATE TABLE ${schema}.actions (
          id text PRIMARY KEY,
          seq bigint NOT NULL UNIQUE,
          kind text NOT NULL,
          recipient text NOT NULL,
          sender text NOT NULL,
          -- The posting agent's name (NULL when a human posted): its identities may cancel.
          sender_agent text,
          body text NOT NULL,
          state text NOT NULL CHECK (state IN ('open', 'claimed', 'done', 'cancelled')),
          claimed_by text,
          claimed_at bigint,
          cancelled_by text,
          result text,
          created_at bigint NOT NULL,
          closed_at bigint
        );
        CREATE INDEX actions_open ON ${schema}.actions (recipient, seq) WHERE state = 'open';
        CREATE INDEX actions_claimed ON ${schema}.actions (claimed_by) WHERE state = 'claimed';

        CREATE TABLE ${schema}.agents (
          identity text PRIMARY KEY,
          -- Registration order; registrations are serialized by the board lock, so this is commit order.
          position bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
          name text NOT NULL,
          status text NOT NULL CHECK (status IN ('active', 'retired', 'departed')),
          registered_at bigint NOT NULL,
          ended_at bigint,
          successor text
        );
      `);
      await client.query(`INSERT INTO ${schema}.board (id) VALUES ($1)`, [mintBoardId(randomBytes)]);
    },
  },
  {
    // Every write as one function: called as one statement, it runs its whole transaction in the
    // server in one round trip, so the board's row lock is held only for the server's own work.
    version: 2,
    async up(client, schema) {
      await client.query(boardFunctions(schema, boardChannel(schema)));
    },
  },
  {
    // Leases and fencing tokens, approvals, the events channel (functions-v3.ts).
    version: 3,
    async up(client, schema) {
      await client.query(schemaV3(schema, boardChannel(schema), eventsChannel(schema)));
    },
  },
];

/**
 * The board's writes, one function each. Each first locks the board's one row, so writers queue
 * there and positions are assigned in commit order; in a function each statement then reads a
 * fresh snapshot that includes every earlier write. Each changes what it changes only if every
 * condition still holds (a compare-and-set), and answers no row when nothing changed. A change to
 * an action that already reads as impossible (taken, closed, nothing to claim) answers at once,
 * without queueing for the lock: a lost race costs no writer any time. Only a post and a release
 * make an action claimable, so only they NOTIFY `channel`, with the new head.
 * `schema` and `channel` are validated identifiers, safe to splice into SQL.
 */
function boardFunctions(schema: string, channel: string): string {
  const lock = `PERFORM 1 FROM ${schema}.board FOR UPDATE;`;
  const nextSeq = `(SELECT coalesce(max(seq), 0) + 1 FROM ${schema}.actions)`;
  const isActive = (identity: string) =>
    `EXISTS (SELECT 1 FROM ${schema}.agents AS g WHERE g.identity = ${identity} AND g.status = 'active')`;
  // `possible`: what the change needs, read before queueing for the lock; the change checks it again.
  const actionFunction = (name: string, parameters: string, body: string, possible?: string) => `
    CREATE FUNCTION ${schema}.${name}(${parameters}) RETURNS SETOF ${schema}.actions
    LANGUAGE plpgsql AS $fn$
    BEGIN
      ${possible === undefined ? "" : `IF NOT EXISTS (${possible}) THEN RETURN; END IF;`}
      ${lock}
      ${body}
    END
    $fn$;`;
  const claimFor = `SET state = 'claimed', claimed_by = p_agent, claimed_at = p_now, seq = ${nextSeq}`;
  const openAction = (where: string) =>
    `SELECT 1 FROM ${schema}.actions AS q WHERE q.state = 'open' AND ${where}`;
  return `
    ${actionFunction(
      "insert_action",
      "p_id text, p_kind text, p_recipient text, p_sender text, p_sender_agent text, p_body text, p_now bigint",
      `DECLARE inserted ${schema}.actions;
      BEGIN
        INSERT INTO ${schema}.actions (id, seq, kind, recipient, sender, sender_agent, body, state, created_at)
        SELECT p_id, ${nextSeq}, p_kind, p_recipient, p_sender, p_sender_agent, p_body, 'open', p_now
        WHERE p_sender_agent IS NULL OR ${isActive("p_sender")}
        ON CONFLICT (id) DO NOTHING
        RETURNING * INTO inserted;
        IF FOUND THEN
          PERFORM pg_notify('${channel}', inserted.seq::text);
          RETURN NEXT inserted;
        END IF;
      END;`,
    )}
    ${actionFunction(
      "claim",
      "p_id text, p_agent text, p_name text, p_now bigint",
      `RETURN QUERY
        UPDATE ${schema}.actions AS a ${claimFor}
        WHERE a.id = p_id AND a.state = 'open' AND a.recipient IN (p_name, '*') AND ${isActive("p_agent")}
        RETURNING a.*;`,
      openAction("q.id = p_id"),
    )}
    ${actionFunction(
      "claim_next",
      "p_agent text, p_name text, p_now bigint",
      // Two index probes (one per recipient), not a sort of every open action.
      `RETURN QUERY
        UPDATE ${schema}.actions AS a ${claimFor}
        WHERE a.id = (
            SELECT oldest.id FROM (
              (SELECT o.id, o.seq FROM ${schema}.actions AS o
               WHERE o.state = 'open' AND o.recipient = p_name ORDER BY o.seq LIMIT 1)
              UNION ALL
              (SELECT o.id, o.seq FROM ${schema}.actions AS o
               WHERE o.state = 'open' AND o.recipient = '*' ORDER BY o.seq LIMIT 1)
            ) AS oldest
            ORDER BY oldest.seq LIMIT 1
          )
          AND a.state = 'open' AND ${isActive("p_agent")}
        RETURNING a.*;`,
      `${openAction("q.recipient = p_name")} UNION ALL ${openAction("q.recipient = '*'")}`,
    )}
    ${actionFunction(
      "complete",
      "p_id text, p_agent text, p_result text, p_now bigint",
      `RETURN QUERY
        UPDATE ${schema}.actions AS a
        SET state = 'done', result = p_result, closed_at = p_now, seq = ${nextSeq}
        WHERE a.id = p_id AND a.state = 'claimed' AND a.claimed_by = p_agent
        RETURNING a.*;`,
      `SELECT 1 FROM ${schema}.actions AS q WHERE q.id = p_id AND q.state = 'claimed' AND q.claimed_by = p_agent`,
    )}
    ${actionFunction(
      "cancel",
      "p_id text, p_by text, p_by_agent text, p_reason text, p_now bigint",
      `RETURN QUERY
        UPDATE ${schema}.actions AS a
        SET state = 'cancelled', cancelled_by = p_by, result = p_reason, closed_at = p_now, seq = ${nextSeq}
        WHERE a.id = p_id AND a.state IN ('open', 'claimed')
          AND (p_by_agent IS NULL OR (a.sender_agent = p_by_agent AND ${isActive("p_by")}))
        RETURNING a.*;`,
      `SELECT 1 FROM ${schema}.actions AS q WHERE q.id = p_id AND q.state IN ('open', 'claimed')`,
    )}
    -- Registrations take the lock too, so agents.position follows commit order.
    CREATE FUNCTION ${schema}.insert_agent(p_identity text, p_name text, p_now bigint)
    RETURNS SETOF ${schema}.agents
    LANGUAGE plpgsql AS $fn$
    BEGIN
      ${lock}
      RETURN QUERY
        INSERT INTO ${schema}.agents AS g (identity, name, status, registered_at)
        VALUES (p_identity, p_name, 'active', p_now)
        ON CONFLICT (identity) DO NOTHING
        RETURNING g.*;
    END
    $fn$;

    -- The identity ends and its claims return to open, each at the next position in their old order.
    CREATE FUNCTION ${schema}.end_agent(p_identity text, p_status text, p_now bigint, p_successor text)
    RETURNS TABLE (agent ${schema}.agents, released text[], released_head bigint)
    LANGUAGE plpgsql AS $fn$
    DECLARE
      ended ${schema}.agents;
    BEGIN
      ${lock}
      UPDATE ${schema}.agents AS g SET status = p_status, ended_at = p_now, successor = p_successor
      WHERE g.identity = p_identity AND g.status = 'active'
      RETURNING g.* INTO ended;
      IF NOT FOUND THEN
        RETURN;
      END IF;
      WITH held AS (
          SELECT h.id, row_number() OVER (ORDER BY h.seq) AS n FROM ${schema}.actions AS h
          WHERE h.state = 'claimed' AND h.claimed_by = p_identity
        ),
        base AS (SELECT coalesce(max(b.seq), 0) AS head FROM ${schema}.actions AS b),
        freed AS (
          UPDATE ${schema}.actions AS a
          SET state = 'open', claimed_by = NULL, claimed_at = NULL, seq = base.head + held.n
          FROM held, base WHERE a.id = held.id
          RETURNING a.id, a.seq
        )
      SELECT coalesce(array_agg(f.id ORDER BY f.seq), '{}'), max(f.seq) INTO released, released_head FROM freed AS f;
      IF released_head IS NOT NULL THEN
        PERFORM pg_notify('${channel}', released_head::text);
      END IF;
      agent := ended;
      RETURN NEXT;
    END
    $fn$;
  `;
}

export const postgresSchemaVersion = latestVersion(migrations);

// Any fixed key will do; it only has to be the same for every bee. The second key is the schema's.
const migrationLockKey = 0x62656521;

export interface MigrationResult {
  previousVersion: number;
  schemaVersion: number;
}

/**
 * Brings the board's schema (a validated identifier, `bee` by default) to `postgresSchemaVersion`. Bees starting at once against a new
 * database serialize on a transaction-scoped advisory lock, so the migrations run exactly once. An
 * up-to-date schema is recognised without the lock or any DDL, so a role that may not create tables
 * can use a board that `bee board migrate` prepared. A schema from a newer bee is refused.
 */
export async function migratePostgres(
  client: pg.ClientBase,
  schema: string,
  randomBytes: (size: number) => Uint8Array,
  /** Tests only: stop at this version, to leave a board as an older bee did. */
  targetVersion = postgresSchemaVersion,
): Promise<MigrationResult> {
  const before = await readVersion(client, schema);
  if (before === targetVersion) return { previousVersion: before, schemaVersion: before };
  refuseNewer(before);
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock($1, hashtext($2))", [migrationLockKey, schema]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${schema}.schema_migrations (
         version integer PRIMARY KEY,
         applied_at timestamptz NOT NULL DEFAULT now()
       )`,
    );
    const current = await readVersion(client, schema);
    refuseNewer(current);
    for (const migration of migrations) {
      if (migration.version <= current || migration.version > targetVersion) continue;
      await migration.up(client, schema, randomBytes);
      await client.query(`INSERT INTO ${schema}.schema_migrations (version) VALUES ($1)`, [
        migration.version,
      ]);
    }
    await client.query("COMMIT");
    return { previousVersion: current, schemaVersion: Math.max(current, targetVersion) };
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  }
}

async function readVersion(client: pg.ClientBase, schema: string): Promise<number> {
  const present = await client.query<{ present: boolean }>("SELECT to_regclass($1) IS NOT NULL AS present", [
    `${schema}.schema_migrations`,
  ]);
  if (present.rows[0]?.present !== true) return 0;
  const version = await client.query<{ version: number | null }>(
    `SELECT max(version) AS version FROM ${schema}.schema_migrations`,
  );
  return version.rows[0]?.version ?? 0;
}

function refuseNewer(version: number): void {
  refuseNewerSchema(version, postgresSchemaVersion, "board database");
}
