import { defaultLeaseTtlMs } from "@bridgeworks/protocol";
import type Database from "better-sqlite3";
import { latestVersion, type Migration, mintBoardId, refuseNewerSchema } from "../migrations.js";

const migrations: readonly Migration<
  (db: Database.Database, randomBytes: (size: number) => Uint8Array) => void
>[] = [
  {
    version: 1,
    up(db, randomBytes) {
      db.exec(`
        CREATE TABLE board (id TEXT NOT NULL) STRICT;

        CREATE TABLE actions (
          id TEXT PRIMARY KEY,
          seq INTEGER NOT NULL UNIQUE,
          kind TEXT NOT NULL,
          recipient TEXT NOT NULL,
          sender TEXT NOT NULL,
          -- The posting agent's name (NULL when a human posted): its identities may cancel.
          sender_agent TEXT,
          body TEXT NOT NULL,
          state TEXT NOT NULL CHECK (state IN ('open', 'claimed', 'done', 'cancelled')),
          claimed_by TEXT,
          claimed_at INTEGER,
          cancelled_by TEXT,
          result TEXT,
          created_at INTEGER NOT NULL,
          closed_at INTEGER
        ) STRICT;
        CREATE INDEX actions_open ON actions (recipient, seq) WHERE state = 'open';
        CREATE INDEX actions_claimed ON actions (claimed_by) WHERE state = 'claimed';

        CREATE TABLE agents (
          identity TEXT PRIMARY KEY,
          name TEXT NOT NULL,
          status TEXT NOT NULL CHECK (status IN ('active', 'retired', 'departed')),
          registered_at INTEGER NOT NULL,
          ended_at INTEGER,
          successor TEXT
        ) STRICT;
      `);
      db.prepare("INSERT INTO board (id) VALUES (?)").run(mintBoardId(randomBytes));
    },
  },
  {
    // Leases and fencing tokens, approvals, and the agents version of a live view. SQLite cannot
    // change a CHECK constraint, so both tables are rebuilt (rowids, and so registration order, kept).
    version: 2,
    up(db) {
      db.exec(`
        ALTER TABLE board ADD COLUMN lease_ttl_ms INTEGER NOT NULL DEFAULT ${defaultLeaseTtlMs};
        ALTER TABLE board ADD COLUMN agents_version INTEGER NOT NULL DEFAULT 0;

        CREATE TABLE actions_v2 (
          id TEXT PRIMARY KEY,
          seq INTEGER NOT NULL UNIQUE,
          kind TEXT NOT NULL,
          recipient TEXT NOT NULL,
          sender TEXT NOT NULL,
          sender_agent TEXT,
          body TEXT NOT NULL,
          state TEXT NOT NULL CHECK (state IN ('open', 'claimed', 'done', 'cancelled', 'decided')),
          claimed_by TEXT,
          claimed_at INTEGER,
          -- The number of claims so far: the current claim's fencing token.
          fence INTEGER NOT NULL DEFAULT 0,
          cancelled_by TEXT,
          result TEXT,
          created_at INTEGER NOT NULL,
          closed_at INTEGER,
          -- An approval's deciders, a JSON array; NULL for any other action.
          deciders TEXT,
          decision TEXT CHECK (decision IN ('allow', 'deny')),
          decided_by TEXT
        ) STRICT;
        INSERT INTO actions_v2 (id, seq, kind, recipient, sender, sender_agent, body, state, claimed_by,
            claimed_at, fence, cancelled_by, result, created_at, closed_at)
          SELECT id, seq, kind, recipient, sender, sender_agent, body, state, claimed_by,
            claimed_at, CASE WHEN claimed_by IS NULL THEN 0 ELSE 1 END, cancelled_by, result, created_at, closed_at
          FROM actions ORDER BY rowid;
        DROP TABLE actions;
        ALTER TABLE actions_v2 RENAME TO actions;
        CREATE INDEX actions_open ON actions (recipient, seq) WHERE state = 'open';
        CREATE INDEX actions_claimed ON actions (claimed_by) WHERE state = 'claimed';
        CREATE INDEX actions_asked ON actions (sender) WHERE state = 'open' AND kind = 'approval';

        CREATE TABLE agents_v2 (
          identity TEXT PRIMARY KEY,
          name TEXT NOT NULL,
          status TEXT NOT NULL CHECK (status IN ('active', 'retired', 'departed', 'expired')),
          registered_at INTEGER NOT NULL,
          ended_at INTEGER,
          successor TEXT,
          -- The machine's clock, epoch ms; NULL: no lease (a person's, or one an older bee registered).
          lease_expires_at INTEGER,
          host TEXT,
          pid INTEGER
        ) STRICT;
        INSERT INTO agents_v2 (rowid, identity, name, status, registered_at, ended_at, successor)
          SELECT rowid, identity, name, status, registered_at, ended_at, successor FROM agents ORDER BY rowid;
        DROP TABLE agents;
        ALTER TABLE agents_v2 RENAME TO agents;
        CREATE INDEX agents_leased ON agents (lease_expires_at) WHERE status = 'active';
      `);
    },
  },
];

export const schemaVersion = latestVersion(migrations);

/**
 * Brings the file to `schemaVersion` under the write lock, so bridges opening the same new file at
 * once migrate it exactly once. A file from a newer bee is refused rather than misread.
 */
export function migrate(
  db: Database.Database,
  randomBytes: (size: number) => Uint8Array,
  /** Tests only: stop at this version, to leave a file as an older bee did. */
  targetVersion = schemaVersion,
): void {
  const readVersion = () => db.pragma("user_version", { simple: true }) as number;
  if (readVersion() === targetVersion) return;
  db.transaction(() => {
    const current = readVersion();
    refuseNewerSchema(current, schemaVersion, "board file");
    for (const migration of migrations) {
      if (migration.version > current && migration.version <= targetVersion) migration.up(db, randomBytes);
    }
    db.pragma(`user_version = ${Math.max(current, targetVersion)}`);
  }).immediate();
}
