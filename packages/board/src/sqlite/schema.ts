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
];

export const schemaVersion = latestVersion(migrations);

/**
 * Brings the file to `schemaVersion` under the write lock, so bridges opening the same new file at
 * once migrate it exactly once. A file from a newer bee is refused rather than misread.
 */
export function migrate(db: Database.Database, randomBytes: (size: number) => Uint8Array): void {
  const readVersion = () => db.pragma("user_version", { simple: true }) as number;
  if (readVersion() === schemaVersion) return;
  db.transaction(() => {
    const current = readVersion();
    refuseNewerSchema(current, schemaVersion, "board file");
    for (const migration of migrations) {
      if (migration.version > current) migration.up(db, randomBytes);
    }
    db.pragma(`user_version = ${schemaVersion}`);
  }).immediate();
}
