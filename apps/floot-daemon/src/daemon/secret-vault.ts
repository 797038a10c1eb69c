import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { ensureRunDir } from "@bridgeworks/control-channel";

export interface Credential {
  /** Fresh for every submission: a restart or a second answer never reuses one. */
  id: string;
  name: string;
  /** A 0600 file in its turn's 0700 dir on the runtime dir (tmpfs where there is one), removed when the turn ends. */
  path: string;
}

/**
 * Where secret bytes live, and nowhere else: credential files in a 0700 runtime dir outside the state
 * dir, and, for an answer to a request whose turn had already ended, memory until its retry asks again.
 */
export class SecretVault {
  readonly dir: string;
  readonly #newId: () => string;
  readonly #byTurn = new Map<string, Credential[]>();
  readonly #held = new Map<string, string>();
  /** Turns whose CLI the keeper runs on after this daemon: their credential dirs outlive it. */
  readonly #left = new Set<string>();

  constructor(dir: string, newId: () => string) {
    this.dir = dir;
    this.#newId = newId;
  }

  /**
   * Creates the dir and its parent (0700, this user's, no symlink: on a shared tmpfs another user could
   * have made either first) and removes the credential files an earlier daemon left behind, but those
   * of the turns in `kept`: their CLIs run on under the keeper, and this daemon adopts them.
   */
  async open(kept: ReadonlySet<string> = new Set()): Promise<void> {
    await ensureRunDir(dirname(this.dir));
    await ensureRunDir(this.dir);
    for (const name of await readdir(this.dir))
      if (!kept.has(name)) await rm(join(this.dir, name), { recursive: true, force: true });
  }

  /**
   * The turn's own credential dir (0700), made before its CLI starts: a confined turn's commands may
   * read this dir and no other of the vault.
   */
  turnDir(turnId: string): string {
    const dir = join(this.dir, turnId);
    mkdirSync(dir, { mode: 0o700, recursive: true });
    return dir;
  }

  materialize(turnId: string, name: string, value: string): Credential {
    const id = this.#newId();
    const path = join(this.turnDir(turnId), `cred-${id}`);
    writeFileSync(path, value, { mode: 0o600, flag: "wx" });
    const credential = { id, name, path };
    const list = this.#byTurn.get(turnId) ?? [];
    list.push(credential);
    this.#byTurn.set(turnId, list);
    return credential;
  }

  /** Keeps an answer for the session's next request of `name` (the explicit retry of an ended turn). */
  hold(sessionId: string, name: string, value: string): void {
    this.#held.set(heldKey(sessionId, name), value);
  }

  take(sessionId: string, name: string): string | undefined {
    const key = heldKey(sessionId, name);
    const value = this.#held.get(key);
    this.#held.delete(key);
    return value;
  }

  releaseTurn(turnId: string): void {
    rmSync(join(this.dir, turnId), { recursive: true, force: true });
    this.#byTurn.delete(turnId);
    this.#left.delete(turnId);
  }

  /**
   * The daemon stops under the turn and the keeper keeps its CLI running: its commands may still read
   * its credential files (a sandbox binds its dir), so they stay for the daemon that adopts it.
   */
  leaveTurn(turnId: string): void {
    this.#byTurn.delete(turnId);
    this.#left.add(turnId);
  }

  /** Removes every credential file but those of the turns left to the keeper. */
  close(): void {
    for (const turnId of [...this.#byTurn.keys()]) this.releaseTurn(turnId);
    this.#held.clear();
    if (this.#left.size === 0) {
      rmSync(this.dir, { recursive: true, force: true });
      return;
    }
    for (const name of readdirSync(this.dir))
      if (!this.#left.has(name)) rmSync(join(this.dir, name), { recursive: true, force: true });
  }
}

function heldKey(sessionId: string, name: string): string {
  return `${sessionId}\u0000${name}`;
}
