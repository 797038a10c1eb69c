import { chmod, lstat, mkdir, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { beeRunDirRule, ensureRunDir, RunDirError, type RunDirRule, resolveRunDir } from "../src/index.js";
import { useTempDirs } from "./helpers.js";

const tempDir = useTempDirs();

async function modeOf(path: string): Promise<number> {
  return (await stat(path)).mode & 0o7777;
}

describe("resolveRunDir", () => {
  const homeDir = "/home/ada";

  test("BEE_RUN_DIR wins over everything", () => {
    const env = { BEE_RUN_DIR: "/srv/bee", XDG_RUNTIME_DIR: "/run/user/1000" };
    expect(resolveRunDir(beeRunDirRule, { env, homeDir })).toBe("/srv/bee");
  });

  test("else $XDG_RUNTIME_DIR/bee", () => {
    expect(resolveRunDir(beeRunDirRule, { env: { XDG_RUNTIME_DIR: "/run/user/1000" }, homeDir })).toBe(
      "/run/user/1000/bee",
    );
  });

  test("else ~/.bee/run", () => {
    expect(resolveRunDir(beeRunDirRule, { env: {}, homeDir })).toBe("/home/ada/.bee/run");
  });

  test("empty values count as unset, a relative XDG_RUNTIME_DIR is ignored", () => {
    expect(resolveRunDir(beeRunDirRule, { env: { BEE_RUN_DIR: "", XDG_RUNTIME_DIR: "" }, homeDir })).toBe(
      "/home/ada/.bee/run",
    );
    expect(resolveRunDir(beeRunDirRule, { env: { XDG_RUNTIME_DIR: "run/user" }, homeDir })).toBe(
      "/home/ada/.bee/run",
    );
  });

  test("a relative BEE_RUN_DIR is refused, naming the variable", () => {
    expect(() => resolveRunDir(beeRunDirRule, { env: { BEE_RUN_DIR: "run" }, homeDir })).toThrow(
      /BEE_RUN_DIR must be an absolute path/,
    );
  });

  test("another family of processes reuses the rule under its own names", () => {
    const flootRule: RunDirRule = {
      overrideVar: "FLOOT_RUN_DIR",
      runtimeSubdir: "floot",
      fallback: { kind: "home", subdir: ".floot/run" },
    };
    expect(
      resolveRunDir(flootRule, { env: { FLOOT_RUN_DIR: "/srv/floot", BEE_RUN_DIR: "/srv/bee" }, homeDir }),
    ).toBe("/srv/floot");
    expect(
      resolveRunDir(flootRule, { env: { BEE_RUN_DIR: "/srv/bee", XDG_RUNTIME_DIR: "/run/u" }, homeDir }),
    ).toBe("/run/u/floot");
    expect(resolveRunDir(flootRule, { env: {}, homeDir })).toBe("/home/ada/.floot/run");
  });

  test("a tmpfs fallback is a per-user dir in shared memory, else in the temp dir", () => {
    const secretRule: RunDirRule = {
      overrideVar: "FLOOT_RUNTIME_DIR",
      runtimeSubdir: "floot",
      fallback: { kind: "tmpfs", prefix: "floot" },
    };
    const sources = { env: {}, homeDir, uid: 1000 };
    expect(resolveRunDir(secretRule, { ...sources, sharedMemoryDir: "/dev/shm" })).toBe(
      "/dev/shm/floot-1000",
    );
    expect(resolveRunDir(secretRule, { ...sources, sharedMemoryDir: undefined, tmpDir: "/tmp" })).toBe(
      "/tmp/floot-1000",
    );
    expect(resolveRunDir(secretRule, { ...sources, env: { XDG_RUNTIME_DIR: "/run/user/1000" } })).toBe(
      "/run/user/1000/floot",
    );
    expect(() => resolveRunDir(secretRule, { ...sources, env: { FLOOT_RUNTIME_DIR: "run" } })).toThrow(
      /FLOOT_RUNTIME_DIR must be an absolute path/,
    );
  });
});

describe("ensureRunDir", () => {
  test("creates missing parents and the dir with mode 0700", async () => {
    const dir = join(await tempDir(), "a", "b", "run");
    await ensureRunDir(dir);
    expect(await modeOf(dir)).toBe(0o700);
  });

  test.each([0o755, 0o777, 0o750, 0o1777])("forces 0700 on an existing dir with mode %o", async (mode) => {
    const dir = join(await tempDir(), "run");
    await mkdir(dir);
    await chmod(dir, mode);
    expect(await modeOf(dir)).toBe(mode);
    await ensureRunDir(dir);
    expect(await modeOf(dir)).toBe(0o700);
  });

  test("refuses a symlinked run dir and leaves its target alone", async () => {
    const base = await tempDir();
    const target = join(base, "elsewhere");
    await mkdir(target);
    await chmod(target, 0o755);
    const link = join(base, "run");
    await symlink(target, link);

    const error = await ensureRunDir(link).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RunDirError);
    expect(error).toMatchObject({ code: "symlink", path: link });
    expect((error as Error).message).toMatch(/symlink/);
    expect(await modeOf(target)).toBe(0o755);
    expect((await lstat(link)).isSymbolicLink()).toBe(true);
  });

  test("refuses a dir owned by another uid", async () => {
    const dir = join(await tempDir(), "run");
    await mkdir(dir, { mode: 0o755 });
    const owner = (await stat(dir)).uid;
    await expect(ensureRunDir(dir, { expectedUid: owner + 1 })).rejects.toMatchObject({
      code: "foreign_owner",
      message: expect.stringMatching(new RegExp(`owned by uid ${owner}, not by uid ${owner + 1}`)),
    });
    expect(await modeOf(dir)).toBe(0o755);
  });

  test("refuses a path that is a file, and a dangling symlink", async () => {
    const base = await tempDir();
    const file = join(base, "run");
    await writeFile(file, "");
    await expect(ensureRunDir(file)).rejects.toMatchObject({ code: "not_a_directory" });
    const dangling = join(base, "dangling");
    await symlink(join(base, "missing"), dangling);
    await expect(ensureRunDir(dangling)).rejects.toMatchObject({ code: "symlink" });
  });
});
