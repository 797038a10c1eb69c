import { type ChildProcess, spawn } from "node:child_process";
import { isProcessAlive, waitUntil } from "@bridgeworks/test-harness";
import { afterEach, describe, expect, test } from "vitest";
import {
  fenceProcess,
  findProcessesBySpawnMarker,
  isSameProcess,
  mintSpawnMarker,
  type ProcessEnvironment,
  type RunningCli,
  readLinuxProcessTable,
  readProcessStatus,
  spawnMarkerVariable,
  startCliProcess,
} from "../src/index.js";

const children: ChildProcess[] = [];
const clis: RunningCli[] = [];
afterEach(async () => {
  await Promise.all(clis.splice(0).map((cli) => cli.stop(200)));
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
});

/** A long-lived node process carrying `marker`, in its own process group unless told otherwise. */
function idleNode(marker: string, detached = true): ChildProcess & { pid: number } {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", [spawnMarkerVariable]: marker },
    detached,
    stdio: "ignore",
  });
  children.push(child);
  if (child.pid === undefined) throw new Error("node did not start");
  return child as ChildProcess & { pid: number };
}

function pidsOf(found: Map<string, { pid: number }[]>, marker: string): number[] {
  return (found.get(marker) ?? []).map((identity) => identity.pid);
}

describe("spawn markers", () => {
  test("are 16 CSPRNG bytes in hex, from the injected source", () => {
    expect(mintSpawnMarker()).toMatch(/^[0-9a-f]{32}$/);
    expect(mintSpawnMarker()).not.toBe(mintSpawnMarker());
    expect(mintSpawnMarker((size) => new Uint8Array(size).fill(0xab))).toBe("ab".repeat(16));
  });

  test("only this user's processes are looked at", () => {
    const marker = mintSpawnMarker();
    const carrier = idleNode(marker);
    const uid = process.getuid!();
    expect(
      pidsOf(
        findProcessesBySpawnMarker([marker], () => readLinuxProcessTable(uid)),
        marker,
      ),
    ).toEqual([carrier.pid]);
    expect(
      pidsOf(
        findProcessesBySpawnMarker([marker], () => readLinuxProcessTable(uid + 1)),
        marker,
      ),
    ).toEqual([]);
  });

  test("find a real detached process by its marker, not one with another marker; fencing ends it", async () => {
    const marker = mintSpawnMarker();
    const otherMarker = mintSpawnMarker();
    const absentMarker = mintSpawnMarker();
    const carrier = idleNode(marker);
    const other = idleNode(otherMarker);
    const found = findProcessesBySpawnMarker([marker, absentMarker]);
    expect(found.get(marker)).toEqual([
      { pid: carrier.pid, startTime: readProcessStatus(carrier.pid)?.startTime },
    ]);
    expect(pidsOf(found, absentMarker)).toEqual([]);
    expect(pidsOf(found, marker)).not.toContain(other.pid);

    expect(await fenceProcess(found.get(marker)![0]!, { graceMs: 2_000 })).toBe("terminated");
    await waitUntil(() => !isProcessAlive(carrier.pid), 5_000, "the carrier ended");
    expect(isProcessAlive(other.pid)).toBe(true);
    expect(pidsOf(findProcessesBySpawnMarker([otherMarker]), otherMarker)).toEqual([other.pid]);
  });

  test("a CLI's marker wins over the session's environment and reaches its children; fencing ends them", async () => {
    const marker = mintSpawnMarker();
    const lines: string[] = [];
    const cli = await startCliProcess(
      {
        command: "sh",
        args: ["-c", "sleep 300 & echo $!; wait"],
        cwd: process.cwd(),
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", [spawnMarkerVariable]: "not the marker" },
        spawnMarker: marker,
      },
      { onSpawned: () => {}, onLine: (line) => lines.push(line) },
    );
    clis.push(cli);
    await waitUntil(() => lines.length > 0, 5_000, "the CLI's first line");
    const grandchild = Number(lines[0]);
    const found = findProcessesBySpawnMarker([marker]).get(marker)!;
    expect(found.map((identity) => identity.pid).sort()).toEqual([cli.identity.pid, grandchild].sort());
    const outcomes = [];
    for (const identity of found) outcomes.push(await fenceProcess(identity, { graceMs: 2_000 }));
    expect(outcomes).toContain("terminated");
    await waitUntil(() => !isProcessAlive(grandchild), 5_000, "the grandchild ended");
    expect(isSameProcess(cli.identity)).toBe(false);
  });

  test("a marked process in the caller's own process group is ended alone, the group is spared", async () => {
    const marker = mintSpawnMarker();
    const carrier = idleNode(marker, false);
    const [identity] = findProcessesBySpawnMarker([marker]).get(marker)!;
    expect(identity?.pid).toBe(carrier.pid);
    expect(readProcessStatus(carrier.pid)?.processGroup).toBe(readProcessStatus(process.pid)?.processGroup);
    expect(await fenceProcess(identity!, { graceMs: 2_000 })).toBe("terminated");
    await waitUntil(() => !isProcessAlive(carrier.pid), 5_000, "the carrier ended");
  });

  test("match the whole entry exactly, skip the caller itself, and refuse a malformed marker", () => {
    const marker = "0123456789abcdef0123456789abcdef";
    const table: ProcessEnvironment[] = [
      { identity: { pid: 11, startTime: "1" }, environment: ["HOME=/h", `${spawnMarkerVariable}=${marker}`] },
      { identity: { pid: 12, startTime: "1" }, environment: [`${spawnMarkerVariable}=${marker}0`] },
      { identity: { pid: 13, startTime: "1" }, environment: [`${spawnMarkerVariable}=${marker.slice(1)}`] },
      { identity: { pid: 14, startTime: "1" }, environment: [`OTHER_${spawnMarkerVariable}=${marker}`] },
      { identity: { pid: 15, startTime: "1" }, environment: [`X=${spawnMarkerVariable}=${marker}`] },
      {
        identity: { pid: process.pid, startTime: "1" },
        environment: [`${spawnMarkerVariable}=${marker}`],
      },
    ];
    expect(findProcessesBySpawnMarker([marker], () => table).get(marker)).toEqual([
      { pid: 11, startTime: "1" },
    ]);
    expect(() => findProcessesBySpawnMarker([""], () => table)).toThrow(/32 lowercase hex digits/);
    expect(findProcessesBySpawnMarker([], () => table).size).toBe(0);
  });
});
