import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";

const requireFromHere = createRequire(import.meta.url);

/**
 * Where better-sqlite3's build put its addon (`build/Release`, beside its `lib/`), or undefined if it
 * is not there (then better-sqlite3 searches for it itself, through `bindings`).
 */
export function sqliteAddonPath(): string | undefined {
  const lib = dirname(requireFromHere.resolve("better-sqlite3"));
  const addon = join(lib, "..", "build", "Release", "better_sqlite3.node");
  return existsSync(addon) ? addon : undefined;
}

/**
 * Opens a better-sqlite3 database with its addon named by path: `bindings`' search for it costs a start
 * a few milliseconds, and it cannot work from a bundle (floot's bundles inline better-sqlite3's
 * JavaScript, its addon stays in the installed package).
 */
export function openSqlite(path: string, options: Database.Options = {}): Database.Database {
  const nativeBinding = sqliteAddonPath();
  return new Database(path, { ...(nativeBinding !== undefined && { nativeBinding }), ...options });
}
