import { randomUUID } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "@bridgeworks/runtime";
import { afterEach, describe, expect, test } from "vitest";
import { startDaemon } from "../src/daemon/daemon.js";
import { removeDeadDaemonFiles, resolveRuntimeDir } from "../src/daemon/runtime-dir.js";
import { SecretVault } from "../src/daemon/secret-vault.js";
import { ensurePrivateDir, PrivateDirError } from "../src/private-dir.js";

// One resolver for every private dir: created 0700, and a symlink, another user's dir or one that
// others can write is refused with the path and the problem (the shared-tmpfs fallback is replaced
// instead: test/hostile-user-cli.test.ts, as a second uid).

let root: string;
afterEach(() => rmSync(root, { recursive: true, force: true }));
const fresh = () => {
  root = mkdtempSync(join(tmpdir(), "floot-private-"));
  return root;
};

describe("ensurePrivateDir", () => {
  test("creates the dir and its parents 0700; tightens an own dir others can only read", () => {
    const path = join(fresh(), "a", "b");
    ensurePrivateDir(path, "state dir");
    expect(statSync(path).mode & 0o777).toBe(0o700);
    chmodSync(path, 0o755);
    ensurePrivateDir(path, "state dir");
    expect(statSync(path).mode & 0o777).toBe(0o700);
  });

  const openDir = (mode: number) => (path: string) => {
    mkdirSync(path);
    chmodSync(path, mode);
  };
  test.each([
    ["open_to_others", openDir(0o777), "is writable by group or others (mode 0777)"],
    ["open_to_others", openDir(0o770), "is writable by group or others (mode 0770)"],
    [
      "symlink",
      (path: string) => {
        mkdirSync(`${path}-target`, { mode: 0o700 });
        symlinkSync(`${path}-target`, path);
      },
      "is a symlink",
    ],
  ])("refuses %s: %#", (code, make, problem) => {
    const path = join(fresh(), "dir");
    make(path);
    let error: unknown;
    try {
      ensurePrivateDir(path, "runtime dir");
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(PrivateDirError);
    expect(error).toMatchObject({ code, path });
    expect((error as Error).message).toContain(`runtime dir ${path} `);
    expect((error as Error).message).toContain(`${problem}; refusing to use it`);
  });
});

describe("the daemon's dirs", () => {
  test("a state dir others can write is refused before anything is opened", async () => {
    const stateDir = join(fresh(), "state");
    mkdirSync(stateDir, { mode: 0o777 });
    chmodSync(stateDir, 0o777);
    await expect(
      startDaemon({ stateDir, env: { FLOOT_RUNTIME_DIR: join(root, "run") }, logger: silentLogger }),
    ).rejects.toThrow(`state dir ${stateDir} is writable by group or others (mode 0777); refusing to use it`);
  });

  test("a named runtime dir others can write is refused, naming it", () => {
    const base = join(fresh(), "run");
    mkdirSync(base, { mode: 0o777 });
    chmodSync(base, 0o777);
    expect(() => resolveRuntimeDir("/s", { FLOOT_RUNTIME_DIR: base })).toThrow(
      `runtime dir ${base} is writable by group or others (mode 0777); refusing to use it`,
    );
  });

  test("a dead daemon's secret files, socket and sign-in pages are removed at start, in its own dir and a previous one; a kept turn's credential files stay", async () => {
    const current = join(fresh(), "current");
    const previous = join(root, "previous");
    for (const dir of [current, previous])
      for (const sub of ["", "secrets", "secrets/turn-ended", "secrets/turn-kept", "open"])
        mkdirSync(join(dir, sub), { mode: 0o700 });
    for (const dir of [current, previous]) {
      chmodSync(dir, 0o700);
      writeFileSync(join(dir, "secrets", "turn-ended", "cred-1"), "s3cret", { mode: 0o600 });
      writeFileSync(join(dir, "secrets", "turn-kept", "cred-2"), "s3cret", { mode: 0o600 });
      writeFileSync(join(dir, "open", "sign-in-1.html"), "#login=code", { mode: 0o600 });
      writeFileSync(join(dir, "api.sock"), "");
    }
    removeDeadDaemonFiles(current, join(previous, "api.sock"));
    expect(statSync(current).isDirectory()).toBe(true);
    expect(() => statSync(join(current, "open"))).toThrow();
    expect(() => statSync(join(current, "api.sock"))).toThrow();
    expect(() => statSync(previous)).toThrow();
    // The vault, opened with the turns the keeper kept, removes the others' files.
    await new SecretVault(join(current, "secrets"), randomUUID).open(new Set(["turn-kept"]));
    expect(readdirSync(join(current, "secrets"))).toEqual(["turn-kept"]);
    expect(readdirSync(join(current, "secrets", "turn-kept"))).toEqual(["cred-2"]);
    await new SecretVault(join(current, "secrets"), randomUUID).open();
    expect(readdirSync(join(current, "secrets"))).toEqual([]);
  });

  test("a stop leaves the credential files of the turns left to the keeper, and only those", () => {
    const vault = new SecretVault(join(fresh(), "secrets"), randomUUID);
    const ended = vault.materialize("turn-ended", "A", "one");
    const left = vault.materialize("turn-left", "B", "two");
    const other = vault.materialize("turn-other", "C", "three");
    vault.releaseTurn("turn-ended");
    vault.leaveTurn("turn-left");
    vault.close();
    expect(existsSync(ended.path)).toBe(false);
    expect(existsSync(other.path)).toBe(false);
    expect(readFileSync(left.path, "utf8")).toBe("two");
    expect(readdirSync(join(root, "secrets"))).toEqual(["turn-left"]);
  });
});
