import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { openSqlite, sqliteAddonPath } from "../src/sqlite.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("openSqlite", () => {
  test("names better-sqlite3's built addon by path, so no start searches for it", () => {
    expect(sqliteAddonPath()).toMatch(/better-sqlite3[\\/]build[\\/]Release[\\/]better_sqlite3\.node$/);
  });

  test("opens a database file with the options given", () => {
    const dir = mkdtempSync(join(tmpdir(), "sqlite-"));
    dirs.push(dir);
    const db = openSqlite(join(dir, "a.sqlite"), { timeout: 0 });
    try {
      db.exec("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (42)");
      expect(db.prepare("SELECT x FROM t").pluck().get()).toBe(42);
      expect(db.pragma("busy_timeout", { simple: true })).toBe(0);
    } finally {
      db.close();
    }
    const readOnly = openSqlite(join(dir, "a.sqlite"), { readonly: true, fileMustExist: true });
    try {
      expect(() => readOnly.exec("INSERT INTO t VALUES (1)")).toThrow(/readonly/);
    } finally {
      readOnly.close();
    }
    expect(() => openSqlite(join(dir, "missing.sqlite"), { fileMustExist: true })).toThrow();
  });
});
