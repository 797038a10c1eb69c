import { spawn } from "node:child_process";
import { symlink } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import {
  findClaudePid,
  InvalidClaudePidError,
  isClaudeComm,
  type ProcessInfo,
  type ProcessReader,
  parseProcStat,
  readProcessFromProcfs,
  readProcessWithPs,
  systemProcessReader,
} from "../src/index.js";
import { useChildren, useTempDirs } from "./helpers.js";

const tempDir = useTempDirs();
const track = useChildren();

/** pid -> [ppid, comm] */
function fakeTable(rows: Record<number, [number, string]>): { readProcess: ProcessReader; reads: number[] } {
  const reads: number[] = [];
  return {
    reads,
    readProcess: (pid) => {
      reads.push(pid);
      const row = rows[pid];
      return row && { ppid: row[0], comm: row[1] };
    },
  };
}

describe("findClaudePid", () => {
  test("CLAUDE_PID wins without reading any process", () => {
    const table = fakeTable({ 50: [40, "claude"] });
    expect(findClaudePid({ env: { CLAUDE_PID: "777" }, startPid: 50, readProcess: table.readProcess })).toBe(
      777,
    );
    expect(table.reads).toEqual([]);
  });

  test("an invalid CLAUDE_PID is a clear error naming it", () => {
    const table = fakeTable({ 50: [40, "claude"] });
    for (const value of ["abc", "-5", "0", "12.5", " 12", "0x10", "99999999999999999999"]) {
      expect(
        () => findClaudePid({ env: { CLAUDE_PID: value }, startPid: 50, readProcess: table.readProcess }),
        value,
      ).toThrow(InvalidClaudePidError);
    }
    expect(() =>
      findClaudePid({ env: { CLAUDE_PID: "abc" }, startPid: 50, readProcess: table.readProcess }),
    ).toThrow(/CLAUDE_PID must be a positive integer, got "abc"/);
  });

  test("without CLAUDE_PID, the start pid itself counts (a stdio server passes its ppid, Claude)", () => {
    const table = fakeTable({ 50: [40, "claude"], 40: [1, "zsh"], 1: [0, "init"] });
    expect(findClaudePid({ env: { CLAUDE_PID: "" }, startPid: 50, readProcess: table.readProcess })).toBe(50);
  });

  test("walks up to the nearest claude ancestor (a hook under sh -c)", () => {
    // hook -> sh -> claude -> bash -> claude (an outer session) -> init
    const table = fakeTable({
      60: [50, "sh"],
      50: [40, "claude"],
      40: [30, "bash"],
      30: [1, "claude"],
      1: [0, "init"],
    });
    expect(findClaudePid({ env: {}, startPid: 60, readProcess: table.readProcess })).toBe(50);
    expect(table.reads).toEqual([60, 50]);
  });

  test("claude.exe counts; names with spaces, paths, prefixes and suffixes do not", () => {
    const table = fakeTable({
      70: [60, "claude helper"],
      60: [55, "claude "],
      55: [50, "/usr/bin/claude"],
      50: [45, "claude-code"],
      45: [40, "Claude"],
      40: [30, "node"],
      30: [1, "claude.exe"],
      1: [0, "init"],
    });
    expect(findClaudePid({ env: {}, startPid: 70, readProcess: table.readProcess })).toBe(30);
  });

  test("a comm read with its trailing newline still matches", () => {
    expect(isClaudeComm("claude\n")).toBe(true);
    expect(isClaudeComm("claude.exe\n")).toBe(true);
    expect(isClaudeComm("claude helper\n")).toBe(false);
    expect(isClaudeComm("claude\n\n")).toBe(false);
  });

  test("no claude ancestor gives undefined, also when a process vanishes mid-walk or the table loops", () => {
    const plain = fakeTable({ 60: [50, "sh"], 50: [1, "bash"], 1: [0, "init"] });
    expect(findClaudePid({ env: {}, startPid: 60, readProcess: plain.readProcess })).toBeUndefined();
    expect(plain.reads).toEqual([60, 50, 1]);

    const vanished = fakeTable({ 60: [50, "sh"] });
    expect(findClaudePid({ env: {}, startPid: 60, readProcess: vanished.readProcess })).toBeUndefined();

    const loop = fakeTable({ 60: [50, "sh"], 50: [60, "bash"] });
    expect(findClaudePid({ env: {}, startPid: 60, readProcess: loop.readProcess })).toBeUndefined();
    expect(loop.reads).toEqual([60, 50]);
  });
});

describe("process readers", () => {
  test("parseProcStat takes the comm up to the last parenthesis", () => {
    expect(parseProcStat("4247 (bash) S 4241 4247 4247 0 -1")).toEqual({ ppid: 4241, comm: "bash" });
    expect(parseProcStat("4247 (claude (x) y) S 12 4247 0")).toEqual({ ppid: 12, comm: "claude (x) y" });
    expect(parseProcStat("4247 (a) b) S 12 4247")).toEqual({ ppid: 12, comm: "a) b" });
    expect(parseProcStat("garbage")).toBeUndefined();
  });

  test("the ps reader keeps spaces in the comm and drops only the newline", () => {
    const calls: string[][] = [];
    const info = readProcessWithPs(123, (file, args) => {
      calls.push([file, ...args]);
      return args.includes("ppid=") ? "    7\n" : "claude helper\n";
    });
    expect(info).toEqual({ ppid: 7, comm: "claude helper" } satisfies ProcessInfo);
    expect(calls).toEqual([
      ["ps", "-o", "ppid=", "-p", "123"],
      ["ps", "-o", "comm=", "-p", "123"],
    ]);
    expect(
      readProcessWithPs(123, () => {
        throw new Error("exit 1");
      }),
    ).toBeUndefined();
  });

  test("ps and /proc agree on real processes, including a comm with spaces and parentheses", async () => {
    const dir = await tempDir();
    const oddName = join(dir, "claude (x) y");
    await symlink(process.execPath, oddName);
    const child = track(spawn(oddName, ["-e", "setTimeout(() => {}, 60_000)"], { stdio: "ignore" }));
    await new Promise((resolve) => child.once("spawn", resolve));

    for (const pid of [process.pid, child.pid!]) {
      expect(readProcessFromProcfs(pid), String(pid)).toEqual(readProcessWithPs(pid));
    }
    expect(readProcessWithPs(child.pid!)).toEqual({ ppid: process.pid, comm: "claude (x) y" });
    expect(systemProcessReader(child.pid!)).toEqual({ ppid: process.pid, comm: "claude (x) y" });
  });

  test("a process that does not exist reads as undefined", async () => {
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    await new Promise((resolve) => child.once("exit", resolve));
    expect(readProcessWithPs(child.pid!)).toBeUndefined();
    expect(readProcessFromProcfs(child.pid!)).toBeUndefined();
  });
});
