import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FlootMoment } from "@bridgeworks/protocol";
import { silentLogger } from "@bridgeworks/runtime";
import { mayHaveRunError, openJournal, type TurnJournal } from "@bridgeworks/turn-journal";
import { expect, test } from "vitest";
import { Moments } from "../src/daemon/moments.js";

// The moments the daemon announces, from a real journal's commits: each approval and secret asked, each
// turn's end but one a replay carries on, once; nothing before a listener subscribed.

/** A journal in a fresh temp dir, for `use`; closed and removed after. */
function withJournal(use: (journal: TurnJournal) => void): void {
  const dir = mkdtempSync(join(tmpdir(), "floot-moments-"));
  const journal = openJournal({ path: join(dir, "journal.sqlite") });
  try {
    use(journal);
  } finally {
    journal.maintenance.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function runningTurn(j: TurnJournal, prompt: string) {
  const session = j.sessions.createSession({ backend: "claude" });
  const turn = j.turns.submitTurn(session.id, { prompt });
  j.turns.transition(turn.id, { phase: "spawning" });
  return j.turns.transition(turn.id, { phase: "running", process: { pid: 4242, startTime: "1" } });
}

test("approvals, secrets and turn ends, once each, with the session's link; not a replayed turn's end", () => {
  withJournal((j) => {
    const before = runningTurn(j, "asked before anyone listened");
    j.secrets.requestSecret(before.id, { toolCallKey: "k0", name: "EARLY", prompt: "" });

    const moments = new Moments(j, silentLogger);
    moments.linkTo(4321);
    const heard: FlootMoment[] = [];
    const stop = moments.subscribe((moment) => heard.push(moment));
    const turn = runningTurn(j, "deploy\nthe   thing");
    const permission = j.permissions.requestPermission(turn.id, {
      toolCallKey: "k1",
      toolName: "Bash",
      inputSummary: `npm publish ${"x".repeat(300)}`,
      inputDigest: "a".repeat(64),
      unmatchedRules: [],
    });
    j.permissions.requestPermission(turn.id, {
      toolCallKey: "k1",
      toolName: "Bash",
      inputSummary: "npm publish",
      inputDigest: "a".repeat(64),
      unmatchedRules: [],
    });
    const secret = j.secrets.requestSecret(turn.id, {
      toolCallKey: "k2",
      name: "NPM_TOKEN",
      prompt: "to publish",
    });
    j.turns.transition(turn.id, { phase: "failed", error: { code: "cli_crashed", message: "gone" } });
    // A turn a restart replays: its end is no moment, its replay's is.
    const replayed = runningTurn(j, "again");
    const replay = j.turns.replayTurn(replayed.id, { code: "daemon_restarted", message: "restart" });
    j.turns.transition(replay.id, { phase: "spawning" });
    j.turns.transition(replay.id, { phase: "running", process: { pid: 4343, startTime: "2" } });
    j.turns.transition(replay.id, { phase: "completed" });
    stop();
    j.turns.transition(before.id, { phase: "cancelled" });

    const url = `http://127.0.0.1:4321/#/s/${turn.sessionId}`;
    expect(heard.map(({ at, ...rest }) => rest)).toEqual([
      {
        kind: "approval",
        session: turn.sessionId,
        turn: turn.id,
        request: permission.id,
        summary: `Approve Bash: npm publish ${"x".repeat(200 - "Approve Bash: npm publish ".length - 1)}…`,
        url,
      },
      {
        kind: "secret",
        session: turn.sessionId,
        turn: turn.id,
        request: secret.id,
        summary: "Secret asked: NPM_TOKEN (to publish)",
        url,
      },
      {
        kind: "turn_ended",
        session: turn.sessionId,
        turn: turn.id,
        outcome: "failed",
        summary: "Turn 1 failed (cli_crashed): deploy the thing",
        url,
      },
      {
        kind: "turn_ended",
        session: replayed.sessionId,
        turn: replay.id,
        outcome: "completed",
        summary: "Turn 2 completed: again",
        url: `http://127.0.0.1:4321/#/s/${replayed.sessionId}`,
      },
    ]);
  });
});

test("a turn ended waiting on a decision (a call may have run) is a decision, not a plain turn end", () => {
  withJournal((j) => {
    const moments = new Moments(j, silentLogger);
    const heard: FlootMoment[] = [];
    const stop = moments.subscribe((moment) => heard.push(moment));
    const turn = runningTurn(j, "build it");
    j.turns.transition(turn.id, {
      phase: "interrupted",
      error: mayHaveRunError([{ toolName: "Bash", inputPreview: '{"command":"make install"}' }]),
    });
    stop();
    expect(heard.map(({ at, url, ...rest }) => rest)).toEqual([
      {
        kind: "decision",
        session: turn.sessionId,
        turn: turn.id,
        outcome: "interrupted",
        summary: expect.stringMatching(
          /^Turn 1 waits on you: .*make install.*Run it again, skip it, or stop\.$/,
        ),
      },
    ]);
  });
});

test("what a start's recovery ended is announced once it is up (announceEnded), to those listening then", () => {
  withJournal((j) => {
    const decided = runningTurn(j, "build it");
    j.turns.transition(decided.id, {
      phase: "interrupted",
      error: mayHaveRunError([{ toolName: "Bash", inputPreview: '{"command":"make install"}' }]),
    });
    const interrupted = runningTurn(j, "write the docs");
    j.turns.transition(interrupted.id, { phase: "interrupted" });
    const stillRunning = runningTurn(j, "keep going");

    // Committed before anyone listened (the start's recovery): nothing heard until announced.
    const moments = new Moments(j, silentLogger);
    const heard: FlootMoment[] = [];
    const stop = moments.subscribe((moment) => heard.push(moment));
    expect(heard).toEqual([]);
    moments.announceEnded([decided.id, interrupted.id, stillRunning.id, "no-such-turn"]);
    stop();
    expect(heard.map(({ kind, turn, outcome }) => ({ kind, turn, outcome }))).toEqual([
      { kind: "decision", turn: decided.id, outcome: "interrupted" },
      { kind: "turn_ended", turn: interrupted.id, outcome: "interrupted" },
    ]);
  });
});
