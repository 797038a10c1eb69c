import type pg from "pg";
import { latestVersion, type Migration, mintBoardId, refuseNewerSchema } from "../migrations.js";

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
];

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
): Promise<MigrationResult> {
  const before = await readVersion(client, schema);
  if (before === postgresSchemaVersion) return { previousVersion: before, schemaVersion: before };
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
      if (migration.version <= current) continue;
      await migration.up(client, schema, randomBytes);
      await client.query(`INSERT INTO ${schema}.schema_migrations (version) VALUES ($1)`, [
        migration.version,
      ]);
    }
    await client.query("COMMIT");
    return { previousVersion: current, schemaVersion: postgresSchemaVersion };
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
