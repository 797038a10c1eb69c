import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import {
  checkControlProcess,
  readStartTimeFromProcfs,
  readStartTimeWithPs,
  systemStartTimeReader,
} from "../src/index.js";
import { deadPid, spawnSleeper, useChildren } from "./helpers.js";

const track = useChildren();

/** A child that has exited but is never reaped: `sleep 30` took over the shell that forked it. */
async function zombiePid(): Promise<number> {
  const parent = track(
    spawn("sh", ["-c", "sleep 0 & echo $!; exec sleep 30"], { stdio: ["ignore", "pipe", "ignore"] }),
  );
  const pid = Number(await new Promise<string>((resolve) => parent.stdout!.once("data", resolve)));
  // The background sleep ends at once; wait until the kernel reports it a zombie.
  for (let waited = 0; waited < 10_000; waited += 20) {
    const state = readState(pid);
    if (state === "Z") return pid;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`process ${pid} never became a zombie`);
}

function readState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  } catch {
    return undefined;
  }
}

describe("start time readers", () => {
  test("a live process has a start time that does not change between reads, from /proc and from ps", async () => {
    const child = track(spawnSleeper());
    const pid = child.pid!;
    const fromProc = readStartTimeFromProcfs(pid);
    expect(fromProc).toMatch(/^[0-9]+$/);
    expect(readStartTimeFromProcfs(pid)).toBe(fromProc);
    const fromPs = readStartTimeWithPs(pid);
    expect(fromPs).toMatch(/^[A-Z][a-z]{2} [A-Z][a-z]{2} +[0-9]+ [0-9:]{8} [0-9]{4}$/);
    expect(readStartTimeWithPs(pid)).toBe(fromPs);
    expect(systemStartTimeReader(pid)).toBe(fromProc);
  });

  test("a dead pid and a zombie have none", async () => {
    const dead = await deadPid();
    expect(readStartTimeFromProcfs(dead)).toBeUndefined();
    expect(readStartTimeWithPs(dead)).toBeUndefined();
    const zombie = await zombiePid();
    expect(readStartTimeFromProcfs(zombie)).toBeUndefined();
    expect(readStartTimeWithPs(zombie)).toBeUndefined();
  });

  test("ps output is read by its state column first, whatever the spacing of the date", () => {
    const answer = (line: string) => () => line;
    expect(readStartTimeWithPs(7, answer("Ss   Mon Dec  6 21:30:00 2025\n"))).toBe("Mon Dec 6 21:30:00 2025");
    expect(readStartTimeWithPs(7, answer("Z+   Mon Dec  6 21:30:00 2025\n"))).toBeUndefined();
    expect(readStartTimeWithPs(7, answer(""))).toBeUndefined();
    expect(
      readStartTimeWithPs(7, () => {
        throw new Error("exit 1");
      }),
    ).toBeUndefined();
  });

  test("/proc's stat is read past a comm holding spaces and parentheses", () => {
    const fields = (state: string) => `${state} 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 987654 20 21`;
    expect(readStartTimeFromProcfs(7, () => `7 (a) b (c) ${fields("S")}`)).toBe("987654");
    expect(readStartTimeFromProcfs(7, () => `7 (x) ${fields("Z")}`)).toBeUndefined();
    expect(readStartTimeFromProcfs(7, () => "7 (x) S 1 2")).toBeUndefined();
  });
});

describe("checkControlProcess", () => {
  test("running for the same pid and start time, replaced for another start time, gone for no process", async () => {
    const child = track(spawnSleeper());
    const pid = child.pid!;
    const startTime = systemStartTimeReader(pid)!;
    expect(checkControlProcess({ pid, startTime })).toBe("running");
    expect(checkControlProcess({ pid, startTime: `${startTime}1` })).toBe("replaced");
    expect(checkControlProcess({ pid: await deadPid(), startTime })).toBe("gone");
  });

  test("asks the injected reader", () => {
    const asked: number[] = [];
    const reader = (pid: number) => {
      asked.push(pid);
      return pid === 5 ? "100" : undefined;
    };
    expect(checkControlProcess({ pid: 5, startTime: "100" }, reader)).toBe("running");
    expect(checkControlProcess({ pid: 6, startTime: "100" }, reader)).toBe("gone");
    expect(asked).toEqual([5, 6]);
  });
});
