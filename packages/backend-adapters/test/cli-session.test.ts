import { spawn } from "node:child_process";
import { isProcessAlive, waitUntil } from "@bridgeworks/test-harness";
import { describe, expect, test } from "vitest";
import {
  fenceCli,
  type ProcessStatus,
  type ProcessTable,
  readProcStat,
  sessionMembers,
} from "../src/index.js";

function table(processes: Record<number, ProcessStatus>): ProcessTable {
  return {
    pids: () => Object.keys(processes).map(Number),
    stat: (pid) => {
      const status = processes[pid];
      if (status === undefined) throw Object.assign(new Error("ENOENT"), { code: "ENOENT" });
      return status;
    },
  };
}

const status = (startTime: string, session: number, zombie = false): ProcessStatus => ({
  startTime,
  zombie,
  processGroup: session,
  session,
});

describe("a CLI's session", () => {
  test("its members are the live processes of the session it leads, started no earlier than it", () => {
    const leader = { pid: 100, startTime: "500" };
    const processes = table({
      100: status("500", 100),
      101: status("501", 100),
      102: status("502", 100, true),
      103: status("503", 7),
      104: status("499", 100),
    });
    expect(sessionMembers(leader, processes)).toEqual([100, 101]);
  });

  test("a leader gone leaves its members found; a leader's pid now another process's finds nothing", () => {
    const members = { 101: status("501", 100) };
    expect(sessionMembers({ pid: 100, startTime: "500" }, table(members))).toEqual([101]);
    expect(
      sessionMembers({ pid: 100, startTime: "500" }, table({ ...members, 100: status("900", 100) })),
    ).toEqual([]);
  });

  test("fencing a CLI that already died still ends the grouped-off child it left in its session", {
    timeout: 20_000,
  }, async () => {
    // The CLI (sh) leads its session, forks a child into a process group of its own, and exits, as a
    // CLI does when its keeper is killed under it: fencing by pid or group alone reaches neither.
    const cli = spawn(
      "sh",
      ["-c", `perl -e 'my $p = fork; if (!$p) { setpgrp(0, 0); exec "sleep", "300" } print "$p\\n"'`],
      { detached: true, stdio: ["ignore", "pipe", "ignore"] },
    );
    const identity = { pid: cli.pid!, startTime: readProcStat(cli.pid!).startTime };
    const firstLine = await new Promise<string>((resolve) =>
      cli.stdout.setEncoding("utf8").once("data", (text: string) => resolve(text)),
    );
    const grouped = Number(firstLine.trim());
    await new Promise((resolve) => cli.once("exit", resolve));
    cli.stdout.destroy();
    try {
      expect(readProcStat(grouped)).toMatchObject({ session: identity.pid });
      expect(readProcStat(grouped).processGroup).not.toBe(identity.pid);
      expect(await fenceCli(identity, { graceMs: 200 })).toBe("not-running");
      await waitUntil(() => !isProcessAlive(grouped), 5_000, "the grouped-off child ended");
    } finally {
      if (isProcessAlive(grouped)) process.kill(grouped, "SIGKILL");
    }
  });
});
