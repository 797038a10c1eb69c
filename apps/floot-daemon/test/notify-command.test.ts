import { execFile } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { FlootMoment, type PermissionRequest } from "@bridgeworks/protocol";
import { isProcessAlive, waitUntil } from "@bridgeworks/test-harness";
import { afterEach, expect, test } from "vitest";
import { bashCallsScript } from "./bash-calls-script.js";
import { bundlePath, FlootWorld, providedSecret, requestSecretStep } from "./daemon-harness.js";
import { killRecorded } from "./recorded-pids.js";

// `floot daemon --notify-command CMD` (issue 32) with the built daemon, the real claude and the model
// double: the command gets one JSON line on stdin per moment (an approval asked, a secret asked, a turn
// ended); one that hangs holds up no turn and is killed with its process group at the timeout or at the
// daemon's stop; one that fails is logged.

let world: FlootWorld | undefined;
let scratch: string | undefined;

afterEach(async () => {
  const problems = (await world?.dispose()) ?? [];
  world = undefined;
  if (scratch) killRecorded(join(scratch, "pids"), scratch);
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
  expect(problems).toEqual([]);
});

/** An executable shell script in the scratch dir. */
function script(name: string, body: string): string {
  const path = join(scratch!, name);
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
  return path;
}

const lines = (path: string) =>
  existsSync(path)
    ? readFileSync(path, "utf8")
        .split("\n")
        .filter((line) => line !== "")
    : [];

async function waitForLines(path: string, count: number, what: string): Promise<string[]> {
  await waitUntil(() => lines(path).length >= count, 90_000, `${count} line(s) in ${path}: ${what}`);
  return lines(path);
}

async function openPermissionRequest(w: FlootWorld, sessionId: string): Promise<PermissionRequest> {
  let found: PermissionRequest | undefined;
  await waitUntil(
    async () => {
      const { requests } = await w.client.request<{ requests: PermissionRequest[] }>(
        "GET",
        "/v1/permission-requests",
      );
      found = requests.find((request) => request.sessionId === sessionId);
      return found !== undefined;
    },
    90_000,
    "a permission request",
  );
  return found!;
}

const askingSession = { allowedTools: [], permissionMode: "default" };

function scriptWithApprovalAndSecret() {
  const bash = bashCallsScript([["[approve]", "toolu_approve", "touch approved.txt", "APPROVED DONE"]]);
  return {
    steps: [
      {
        match: providedSecret(),
        repeat: true,
        response: { events: [{ type: "text" as const, text: "SECRET DONE" }] },
      },
      ...bash.steps,
      requestSecretStep("[secret]"),
      {
        match: { lastUserTextIncludes: "[plain]" },
        repeat: true,
        response: { events: [{ type: "text" as const, text: "PLAIN DONE" }] },
      },
    ],
  };
}

test("the command reads exactly one JSON line per moment: approval, secret, each turn's end", async () => {
  scratch = mkdtempSync(join(tmpdir(), "floot-notify-"));
  const out = join(scratch, "moments.jsonl");
  const record = script("record.sh", 'cat >> "$1"');
  world = await FlootWorld.create("claude", scriptWithApprovalAndSecret());
  const w = world;
  const { port } = (await w.startDaemon({}, {}, ["--notify-command", `${record} ${out}`])).file;
  const approving = await w.createSession(askingSession);
  const asking = await w.createSession();

  const first = await w.send(approving.id, "[approve] touch a file");
  const request = await openPermissionRequest(w, approving.id);
  const [approval] = await waitForLines(out, 1, "the approval");
  expect(FlootMoment.parse(JSON.parse(approval!))).toEqual({
    kind: "approval",
    session: approving.id,
    turn: first.id,
    request: request.id,
    summary: "Approve Bash: touch approved.txt",
    url: `http://127.0.0.1:${port}/#/s/${approving.id}`,
    at: expect.any(String),
  });
  expect((await w.floot("approval", "allow", request.id)).code).toBe(0);
  expect((await w.waitForEnd(first.id, 90_000)).phase).toBe("completed");
  const ended = JSON.parse((await waitForLines(out, 2, "the first turn's end"))[1]!);
  expect(FlootMoment.parse(ended)).toMatchObject({
    kind: "turn_ended",
    session: approving.id,
    turn: first.id,
    outcome: "completed",
    summary: "Turn 1 completed: [approve] touch a file",
  });
  expect(ended.request).toBeUndefined();

  const second = await w.send(asking.id, "[secret] deploy it");
  await w.waitForTurn(second.id, (turn) => turn.phase === "awaiting_secret", "awaiting_secret", 90_000);
  const [secretRequest] = await w.secretRequests();
  const secret = JSON.parse((await waitForLines(out, 3, "the secret"))[2]!);
  expect(FlootMoment.parse(secret)).toMatchObject({
    kind: "secret",
    session: asking.id,
    turn: second.id,
    request: secretRequest!.id,
    summary: "Secret asked: API_TOKEN (the deploy token)",
  });
  await w.client.request("POST", `/v1/secret-requests/${secretRequest!.id}/submit`, {
    value: "a-long-enough-token",
  });
  expect((await w.waitForEnd(second.id, 90_000)).phase).toBe("completed");
  await waitForLines(out, 4, "the second turn's end");
  // Stopped: no command is left to write a late line.
  await w.stopDaemon();
  const all = lines(out).map((line) => FlootMoment.parse(JSON.parse(line)));
  expect(all.map((moment) => [moment.kind, moment.turn])).toEqual([
    ["approval", first.id],
    ["turn_ended", first.id],
    ["secret", second.id],
    ["turn_ended", second.id],
  ]);
  // The value never reaches the command.
  expect(readFileSync(out, "utf8")).not.toContain("a-long-enough-token");
}, 300_000);

test("a turn the start's recovery ended (its CLI gone with the keeper) is one line once the daemon is up, and not again at the next start", async () => {
  scratch = mkdtempSync(join(tmpdir(), "floot-notify-"));
  const out = join(scratch, "moments.jsonl");
  const record = script("record.sh", 'cat >> "$1"');
  world = await FlootWorld.create("claude", {
    steps: [
      {
        match: { lastUserTextIncludes: "[long]" },
        response: { events: [{ type: "text", text: "Working on it" }, { type: "stall" }] },
      },
    ],
  });
  const w = world;
  const notify = ["--notify-command", `${record} ${out}`];
  await w.startDaemon({}, {}, notify);
  const session = await w.createSession();
  const turn = await w.send(session.id, "[long] keep going");
  await w.waitForTurn(turn.id, (t) => t.effects.includes("assistant_text"), "text journaled", 90_000);
  // A reboot: the keeper and its CLI gone with the daemon; the next start's recovery ends the turn.
  await w.killDaemonAndKeeper();
  const { port } = (await w.startDaemon({}, {}, notify)).file;
  expect((await w.waitForEnd(turn.id, 90_000)).phase).toBe("interrupted");
  const [ended] = await waitForLines(out, 1, "the interrupted turn");
  expect(FlootMoment.parse(JSON.parse(ended!))).toMatchObject({
    kind: "turn_ended",
    session: session.id,
    turn: turn.id,
    outcome: "interrupted",
    url: `http://127.0.0.1:${port}/#/s/${session.id}`,
  });
  await w.stopDaemon();
  await w.startDaemon({}, {}, notify);
  await w.stopDaemon();
  expect(lines(out)).toHaveLength(1);
}, 300_000);

/** A command's body that hangs, with a child in its group, after recording both pids in `$1`. */
const hangs = `sleep 600 & echo $! >> "$1"; echo $$ >> "$1"; wait`;

/**
 * A daemon running `body` (a script, given the scratch dir's pids file) for each moment at the
 * timeout given, and a turn asking for an approval whose command has started.
 */
async function approvalUnder(body: string, timeoutMs: number) {
  scratch = mkdtempSync(join(tmpdir(), "floot-notify-"));
  const pids = join(scratch, "pids");
  const command = script("notify.sh", body);
  world = await FlootWorld.create("claude", scriptWithApprovalAndSecret());
  const w = world;
  const settings = { FLOOT_NOTIFY_TIMEOUT_MS: String(timeoutMs) };
  await w.startDaemon(settings, {}, ["--notify-command", `${command} ${pids}`]);
  const session = await w.createSession(askingSession);
  const turn = await w.send(session.id, "[approve] touch a file");
  const request = await openPermissionRequest(w, session.id);
  await waitForLines(pids, 2, "the approval's command started");
  return { w, session, turn, request, pids };
}

test("a command that hangs holds up no turn, and a stopping daemon kills it with its group", async () => {
  // The approval's command hangs; the turn is decided and ends while it still runs.
  const { w, session, turn, request, pids } = await approvalUnder(hangs, 600_000);
  expect((await w.floot("approval", "allow", request.id)).code).toBe(0);
  expect((await w.waitForEnd(turn.id, 90_000)).phase).toBe("completed");
  const hung = lines(pids).map(Number);
  expect(hung.every(isProcessAlive)).toBe(true);
  // Another turn runs to its end too, with two commands hanging meanwhile.
  const plain = await w.send(session.id, "[plain] say hi");
  expect((await w.waitForEnd(plain.id, 90_000)).phase).toBe("completed");
  await waitForLines(pids, 6, "the commands of both ends started");
  const started = lines(pids).map(Number);
  expect(started.every(isProcessAlive)).toBe(true);
  // A stopping daemon kills what still runs, with its group.
  await w.stopDaemon();
  await waitUntil(() => started.every((pid) => !isProcessAlive(pid)), 10_000, "hung commands killed at stop");
}, 300_000);

test("a command still running at the timeout is killed with its group and logged; one that fails is logged", async () => {
  // A turn's end fails at once; anything else hangs.
  const failsOnEnd = `read line; case "$line" in *'"turn_ended"'*) echo "no route to the phone" >&2; exit 3;; esac`;
  const { w, turn, request, pids } = await approvalUnder(`${failsOnEnd}\n${hangs}`, 1_500);
  const timedOut = lines(pids).map(Number);
  await waitUntil(() => timedOut.every((pid) => !isProcessAlive(pid)), 30_000, "killed at the timeout");
  expect((await w.floot("approval", "allow", request.id)).code).toBe(0);
  expect((await w.waitForEnd(turn.id, 90_000)).phase).toBe("completed");
  const logged = () =>
    w
      .daemon!.process.stderr()
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  await waitUntil(
    () => logged().some((r) => r.message === "notify command failed"),
    30_000,
    "failure logged",
  );
  expect(
    logged().find((r) => r.message === "notify command timed out; its process group was killed"),
  ).toMatchObject({ level: "warn", kind: "approval", turn: turn.id, timeoutMs: 1500 });
  expect(logged().find((r) => r.message === "notify command failed")).toMatchObject({
    level: "warn",
    kind: "turn_ended",
    turn: turn.id,
    code: 3,
    stderr: "no route to the phone",
  });
}, 300_000);

test("a command a shell would have to read, or one that is not there, stops the start with exit 2", async () => {
  const run = (...argv: string[]) =>
    promisify(execFile)(
      process.execPath,
      [bundlePath, "daemon", "--state", join(tmpdir(), "floot-none"), ...argv],
      {
        env: { PATH: process.env.PATH, HOME: tmpdir() },
      },
    ).then(
      () => ({ code: 0, stderr: "" }),
      (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
    );
  const quoted = await run("--notify-command", "notify-send 'Floot'");
  expect(quoted.code).toBe(2);
  expect(quoted.stderr).toContain("--notify-command: no shell runs it");
  const piped = await run("--notify-command", "jq .summary | notify-send");
  expect(piped.code).toBe(2);
  expect(piped.stderr).toContain('"|" would reach the program as is');
  const missing = await run("--notify-command", "floot-no-such-notifier --flag");
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain("--notify-command: floot-no-such-notifier: no such program");
  const fromEnv = await promisify(execFile)(
    process.execPath,
    [bundlePath, "daemon", "--state", join(tmpdir(), "floot-none")],
    {
      env: { PATH: process.env.PATH, HOME: tmpdir(), FLOOT_NOTIFY_COMMAND: "~/bin/notify" },
    },
  ).then(
    () => ({ code: 0, stderr: "" }),
    (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
  );
  expect(fromEnv.code).toBe(2);
  expect(fromEnv.stderr).toContain("FLOOT_NOTIFY_COMMAND: no shell runs it");
}, 60_000);
