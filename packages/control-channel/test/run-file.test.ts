import { randomBytes } from "node:crypto";
import { watch } from "node:fs";
import { mkdir, readdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { RunFile } from "@bridgeworks/protocol";
import { describe, expect, test } from "vitest";
import {
  ensureRunDir,
  mintToken,
  readRunFile,
  removeRunFileSync,
  runFilePath,
  sweepStaleRunFiles,
  writeRunFile,
} from "../src/index.js";
import { deadPid, useTempDirs } from "./helpers.js";

const tempDir = useTempDirs();

function aRunFile(port = 40123): RunFile {
  return { port, token: mintToken(randomBytes), pid: process.pid, startTime: "12345" };
}

async function runDir(): Promise<string> {
  const dir = join(await tempDir(), "run");
  await ensureRunDir(dir);
  return dir;
}

describe("writeRunFile", () => {
  test("writes <claudePid>.json with mode 0600 in a dir forced to 0700", async () => {
    const dir = join(await tempDir(), "run");
    await mkdir(dir, { mode: 0o777 });
    await ensureRunDir(dir);
    const runFile = aRunFile();
    const path = await writeRunFile(dir, 4242, runFile);

    expect(path).toBe(join(dir, "4242.json"));
    expect(path).toBe(runFilePath(dir, 4242));
    expect((await stat(dir)).mode & 0o7777).toBe(0o700);
    expect((await stat(path)).mode & 0o7777).toBe(0o600);
    expect(JSON.parse(await readFile(path, "utf8"))).toEqual(runFile);
  });

  test("the mode is 0600 whatever the umask", async () => {
    const dir = await runDir();
    const previous = process.umask(0o277);
    try {
      const path = await writeRunFile(dir, 4242, aRunFile());
      expect((await stat(path)).mode & 0o7777).toBe(0o600);
    } finally {
      process.umask(previous);
    }
  });

  test("leaves no temp file behind and replaces an existing run file", async () => {
    const dir = await runDir();
    await writeRunFile(dir, 4242, aRunFile(1111));
    const second = aRunFile(2222);
    await writeRunFile(dir, 4242, second);
    expect(await readdir(dir)).toEqual(["4242.json"]);
    await expect(readRunFile(join(dir, "4242.json"))).resolves.toEqual({ ok: true, runFile: second });
  });

  test("its temp file is never named *.json, so a reader never sees a partial run file", async () => {
    const dir = await runDir();
    const seen = new Set<string>();
    const watcher = watch(dir, (_event, name) => {
      if (name) seen.add(name.toString());
    });
    try {
      for (let attempt = 0; attempt < 20; attempt += 1)
        await writeRunFile(dir, 4242, aRunFile(3000 + attempt));
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      watcher.close();
    }
    const others = [...seen].filter((name) => name !== "4242.json");
    expect(others.length).toBeGreaterThan(0);
    for (const name of others) {
      expect(name).toMatch(/^\.4242\.[0-9a-f]+\.tmp$/);
    }
  });

  test("a reader polling during rewrites only ever sees whole run files", async () => {
    const dir = await runDir();
    const path = join(dir, "4242.json");
    await writeRunFile(dir, 4242, aRunFile(1000));
    let writing = true;
    const writes = (async () => {
      for (let port = 1001; port < 1101; port += 1) await writeRunFile(dir, 4242, aRunFile(port));
      writing = false;
    })();
    let reads = 0;
    const partialReads: string[] = [];
    while (writing) {
      const result = await readRunFile(path);
      if (!result.ok) partialReads.push(result.message);
      reads += 1;
    }
    await writes;
    expect(partialReads).toEqual([]);
    expect(reads).toBeGreaterThan(0);
  });

  test("a failed rename removes the temp file and throws", async () => {
    const dir = await runDir();
    await mkdir(join(dir, "4242.json"));
    await writeFile(join(dir, "4242.json", "keep"), "");
    await expect(writeRunFile(dir, 4242, aRunFile())).rejects.toThrow();
    expect(await readdir(dir)).toEqual(["4242.json"]);
  });

  test("an invalid run file or claude pid is refused and nothing is written", async () => {
    const dir = await runDir();
    await expect(writeRunFile(dir, 4242, { ...aRunFile(), token: "not-a-token" })).rejects.toThrow(/token/);
    await expect(writeRunFile(dir, 4242, { ...aRunFile(), extra: 1 } as RunFile)).rejects.toThrow();
    await expect(writeRunFile(dir, 0, aRunFile())).rejects.toThrow(/claudePid/);
    expect(await readdir(dir)).toEqual([]);
  });
});

describe("readRunFile", () => {
  test("a missing file is reported as missing", async () => {
    const dir = await runDir();
    await expect(readRunFile(join(dir, "1.json"))).resolves.toMatchObject({ ok: false, reason: "missing" });
  });

  test("broken JSON, a wrong shape, an unknown key or a symlink are invalid, and the token is never echoed", async () => {
    const dir = await runDir();
    const token = mintToken(randomBytes);
    const cases: Record<string, string> = {
      "1.json": "{",
      "2.json": JSON.stringify({ port: "80", token, pid: 1, startTime: "9" }),
      "3.json": JSON.stringify({ port: 80, token, pid: 1, startTime: "9", extra: true }),
      "4.json": JSON.stringify({ port: 80, token: `${token}0`, pid: 1, startTime: "9" }),
      "6.json": JSON.stringify({ port: 80, token, pid: 1, startTime: "" }),
    };
    for (const [name, text] of Object.entries(cases)) await writeFile(join(dir, name), text);
    await writeFile(join(dir, "target"), JSON.stringify({ port: 80, token, pid: 1 }));
    await symlink(join(dir, "target"), join(dir, "5.json"));

    for (const name of [...Object.keys(cases), "5.json"]) {
      const result = await readRunFile(join(dir, name));
      expect(result, name).toMatchObject({ ok: false, reason: "invalid" });
      expect(JSON.stringify(result)).not.toContain(token);
    }
  });

  test("a run file of an older bee (no start time) is outdated, said in words, and the token is never echoed", async () => {
    const dir = await runDir();
    const token = mintToken(randomBytes);
    const path = join(dir, "7.json");
    await writeFile(path, JSON.stringify({ port: 80, token, pid: 1 }));
    const result = await readRunFile(path);
    expect(result).toEqual({
      ok: false,
      reason: "outdated",
      message: `run file ${path} was written by an older bee (it names no process start time), so its bridge cannot be told from a reused pid`,
    });
  });
});

describe("removeRunFileSync", () => {
  test("removes the file and is idempotent", async () => {
    const dir = await runDir();
    const path = await writeRunFile(dir, 4242, aRunFile());
    removeRunFileSync(path);
    expect(await readdir(dir)).toEqual([]);
    expect(() => removeRunFileSync(path)).not.toThrow();
  });
});

describe("sweepStaleRunFiles", () => {
  test("removes run files of dead pids and keeps live ones and unrelated files", async () => {
    const dir = await runDir();
    const dead = await deadPid();
    const live = process.pid;
    await writeRunFile(dir, dead, aRunFile());
    await writeRunFile(dir, live, aRunFile());
    await writeFile(join(dir, `.${dead}.00ff.tmp`), "{");
    await writeFile(join(dir, "notes.txt"), "");
    await writeFile(join(dir, "bridge.json"), "{}");

    const removed = await sweepStaleRunFiles(dir);

    expect(removed.sort()).toEqual([join(dir, `${dead}.json`), join(dir, `.${dead}.00ff.tmp`)].sort());
    expect((await readdir(dir)).sort()).toEqual([`${live}.json`, "bridge.json", "notes.txt"].sort());
  });

  test("asks the injected liveness check about the pid in each run file's name", async () => {
    const dir = await runDir();
    await writeRunFile(dir, 101, aRunFile());
    await writeRunFile(dir, 202, aRunFile());
    const asked: number[] = [];
    const removed = await sweepStaleRunFiles(dir, {
      isPidAlive: (pid) => {
        asked.push(pid);
        return pid === 202;
      },
    });
    expect(asked.sort()).toEqual([101, 202]);
    expect(removed).toEqual([join(dir, "101.json")]);
  });
});
