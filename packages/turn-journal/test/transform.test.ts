import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { DecisionActor, TurnEvent } from "@bridgeworks/protocol";
import { describe, expect, test } from "vitest";
import { journalAreas, openJournalCore, type TurnJournal } from "../src/journal.js";
import type { EventTransform } from "../src/options.js";
import { requireTurnRow } from "../src/records.js";
import {
  createTestJournal,
  failNextEventOfType,
  ManualClock,
  runningTurn,
  sequentialIds,
  tempDir,
} from "./helpers.js";

const person: DecisionActor = { via: "socket", peer: { pid: 4242, uid: 1000, executable: "/usr/bin/node" } };

/** Fields a transform must keep (ids, names, statuses, who decided). */
const structural = new Set([
  "type",
  "requestId",
  "toolId",
  "toolCallKey",
  "name",
  "toolName",
  "status",
  "phase",
  "outcome",
  "code",
  "by",
  "conversationId",
  "continuedBy",
  "effectFree",
  "isError",
]);

/**
 * Hides "hunter2" in every text of an event. Not idempotent on purpose: text it already hid becomes
 * `[hidden][again]`, so an event transformed twice shows it.
 */
function hide(value: unknown): unknown {
  if (typeof value === "string") {
    return value.replace(/hunter2|\[hidden\]/g, (found) =>
      found === "hunter2" ? "[hidden]" : "[hidden][again]",
    );
  }
  if (Array.isArray(value)) return value.map(hide);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([field, each]) => [field, structural.has(field) ? each : hide(each)]),
    );
  }
  return value;
}

/** Holds back a streamed text's end that could begin "hunter2". */
function holdPrefixOfSecret(text: string): number {
  for (let start = Math.max(0, text.length - 6); start < text.length; start += 1) {
    if ("hunter2".startsWith(text.slice(start))) return start;
  }
  return text.length;
}

const hiding: EventTransform = {
  event: (event) => hide(event) as typeof event,
  streamCut: holdPrefixOfSecret,
};

/** Every byte of the journal's files (database, WAL), as latin1 text. */
function fileBytes(journal: TurnJournal): string {
  journal.events.flush();
  const dir = dirname(journal.path);
  return readdirSync(dir)
    .map((name) => readFileSync(join(dir, name)).toString("latin1"))
    .join("\n");
}

/** What a reader can get back of a turn and its session: events, the turn, requests, rules. */
function everythingOf(journal: TurnJournal, turnId: string, sessionId: string): string {
  return JSON.stringify([
    journal.events.readEvents(turnId),
    journal.turns.getTurn(turnId),
    journal.gate.listToolAdmissions(turnId),
    journal.secrets.listSecretRequests(turnId),
    journal.permissions.listRecentPermissionRequests(100),
    journal.permissions.listSessionRules(sessionId),
  ]);
}

function expectHiddenOnce(text: string): void {
  expect(text).not.toContain("hunter2");
  expect(text).not.toContain("[again]");
  expect(text).toContain("[hidden]");
}

describe("the event transform: every event passes it once, on the one write path", () => {
  test("stream events, a tool admission, secret and permission requests, decisions, a cause and an error: events and rows", () => {
    const { journal } = createTestJournal({ transform: hiding });
    const turn = runningTurn(journal);
    journal.events.appendEvents(turn.id, [
      { type: "tool.started", toolId: "t1", name: "Bash", input: { command: "echo hunter2" } },
      { type: "tool.completed", toolId: "t1", output: "hunter2", isError: false },
      { type: "assistant.text", text: "the token is hunter2" },
      { type: "warning", message: "saw hunter2" },
    ]);
    const admission = journal.gate.admitToolCall(turn.id, {
      toolCallId: "t2",
      toolName: "Bash",
      inputPreview: '{"command":"echo hunter2"}',
      effectFree: false,
    });
    expect(admission.inputPreview).toBe('{"command":"echo [hidden]"}');
    const ask = (key: string) =>
      journal.permissions.requestPermission(turn.id, {
        toolCallKey: key,
        toolName: "Bash",
        inputSummary: "echo hunter2",
        inputDigest: "0".repeat(64),
        unmatchedRules: ["Bash(echo hunter2:*)"],
        suggestedRule: "Bash(hunter2:*)",
      });
    const forSession = ask("p1");
    expect(forSession).toMatchObject({
      inputSummary: "echo [hidden]",
      unmatchedRules: ["Bash(echo [hidden]:*)"],
      suggestedRule: "Bash([hidden]:*)",
    });
    const decision = { behavior: "allow", scope: "session", rule: "Bash(echo hunter2:*)" } as const;
    expect(journal.permissions.decidePermissionRequest(forSession.id, decision, person).decision).toEqual({
      ...decision,
      rule: "Bash(echo [hidden]:*)",
    });
    const once = { behavior: "allow", scope: "once", rule: "Bash(hunter2 once:*)" } as const;
    expect(journal.permissions.decidePermissionRequest(ask("p2").id, once, person).decision).toEqual({
      ...once,
      rule: "Bash([hidden] once:*)",
    });
    const deny = { behavior: "deny", message: "not with hunter2" } as const;
    expect(journal.permissions.decidePermissionRequest(ask("p3").id, deny, person).decision).toEqual({
      behavior: "deny",
      message: "not with [hidden]",
    });
    const secret = journal.secrets.requestSecret(turn.id, {
      toolCallKey: "s1",
      name: "TOKEN",
      prompt: "hunter2?",
    });
    expect(secret.prompt).toBe("[hidden]?");
    journal.secrets.resolveSecretRequest(secret.id, "cancelled");
    const failed = journal.turns.transition(turn.id, {
      phase: "failed",
      cause: { type: "error", code: "cli_crashed", message: "crashed on hunter2" },
      error: { code: "cli_crashed", message: "died at hunter2" },
    });
    expect(failed.error).toEqual({ code: "cli_crashed", message: "died at [hidden]" });
    expect(journal.permissions.listSessionRules(turn.sessionId)).toEqual(["Bash(echo [hidden]:*)"]);
    expectHiddenOnce(everythingOf(journal, turn.id, turn.sessionId));
    expect(fileBytes(journal)).not.toContain("hunter2");
    // Structure kept: every event type, in order, and the ids and names.
    expect(journal.events.readEvents(turn.id).map(({ event }) => event.type)).toEqual([
      "phase",
      "phase",
      "phase",
      "tool.started",
      "tool.completed",
      "assistant.text",
      "warning",
      "tool.admitted",
      "permission.requested",
      "permission.resolved",
      "permission.requested",
      "permission.resolved",
      "permission.requested",
      "permission.resolved",
      "secret.requested",
      "phase",
      "secret.resolved",
      "phase",
      "error",
      "terminal",
    ]);
  });

  test("a replay's reason, a live phase's error, and a decision on an ended turn (no event) are kept as transformed", () => {
    const { journal } = createTestJournal({ transform: hiding });
    const session = journal.sessions.createSession({ backend: "claude" });
    const first = journal.turns.submitTurn(session.id, { prompt: "go" });
    journal.turns.transition(first.id, { phase: "spawning" });
    const running = journal.turns.transition(first.id, {
      phase: "running",
      process: { pid: 1, startTime: "1" },
      error: { code: "warned", message: "spawned beside hunter2" },
    });
    expect(running.error).toEqual({ code: "warned", message: "spawned beside [hidden]" });
    const replay = journal.turns.replayTurn(first.id, { code: "restarted", message: "lost hunter2" });
    expect(journal.turns.getTurn(first.id)?.error).toEqual({ code: "restarted", message: "lost [hidden]" });
    journal.turns.transition(replay.id, { phase: "spawning" });
    journal.turns.transition(replay.id, { phase: "running", process: { pid: 2, startTime: "2" } });
    const request = journal.permissions.requestPermission(replay.id, {
      toolCallKey: "p1",
      toolName: "Bash",
      inputSummary: "ls",
      inputDigest: "0".repeat(64),
      unmatchedRules: [],
    });
    journal.turns.transition(replay.id, { phase: "interrupted" });
    const rule = "Bash(hunter2:*)";
    const decided = journal.permissions.decidePermissionRequest(
      request.id,
      { behavior: "allow", scope: "session", rule },
      person,
    );
    expect(journal.events.readEvents(replay.id).at(-1)?.event.type).toBe("terminal");
    expect(decided.decision).toEqual({ behavior: "allow", scope: "session", rule: "Bash([hidden]:*)" });
    expect(journal.permissions.listSessionRules(session.id)).toEqual(["Bash([hidden]:*)"]);
    for (const turnId of [first.id, replay.id]) expectHiddenOnce(everythingOf(journal, turnId, session.id));
  });

  test("a write path added beside the journal's own, on its core, is transformed too", () => {
    const core = openJournalCore({
      path: join(tempDir(), "journal.sqlite"),
      clock: new ManualClock(),
      newId: sequentialIds(),
      transform: hiding,
    });
    const journal = journalAreas(core);
    try {
      const turn = runningTurn(journal);
      // A new area's write method, written as the journal's own are: a transaction that changes the turn.
      const note = (turnId: string, message: string) => {
        core.connection.transaction(() =>
          core.writes.changeTurn(requireTurnRow(core.connection, turnId), {
            events: [{ type: "warning", code: "note", message }],
          }),
        );
        core.connection.feed.notify([turnId]);
      };
      // And one that writes stream events itself.
      const stream = (turnId: string, text: string) => {
        core.connection.transaction(() =>
          core.writes.writeStream(requireTurnRow(core.connection, turnId), [
            { at: 0, event: { type: "reasoning", text } },
          ]),
        );
      };
      const heard: TurnEvent[] = [];
      journal.events.subscribe(turn.id, (_, committed) =>
        heard.push(...(committed ?? []).map((each) => each.event)),
      );
      note(turn.id, "note: hunter2");
      stream(turn.id, "thinking of hunter2");
      const written = journal.events.readEvents(turn.id).slice(-2);
      expect(written.map(({ event }) => event)).toEqual([
        { type: "warning", code: "note", message: "note: [hidden]" },
        { type: "reasoning", text: "thinking of [hidden]" },
      ]);
      expect(heard).toEqual([written[0]!.event]);
      expect(fileBytes(journal)).not.toContain("hunter2");
    } finally {
      journal.maintenance.close();
    }
  });

  test("a commit that rolled back is transformed again from what was appended, not from what it made", () => {
    const { journal, path } = createTestJournal({
      transform: hiding,
      batch: { maxEvents: 1000, maxDelayMs: 10_000 },
    });
    const turn = runningTurn(journal);
    journal.events.appendEvents(turn.id, [{ type: "reasoning", text: "about hunter2" }]);
    const heal = failNextEventOfType(path, "reasoning");
    try {
      expect(() => journal.events.flush()).toThrow("injected failure");
    } finally {
      heal();
    }
    journal.events.flush();
    expect(journal.events.readEvents(turn.id).at(-1)?.event).toEqual({
      type: "reasoning",
      text: "about [hidden]",
    });
  });

  test("streamed text is held where the transform's cut says, until the next piece, event or transition", () => {
    const { journal } = createTestJournal({ transform: hiding });
    const turn = runningTurn(journal);
    const delta = (text: string) => ({ type: "assistant.delta" as const, text });
    journal.events.appendEvents(turn.id, [delta("say hun")]);
    journal.events.appendEvents(turn.id, [delta("ter2 now")]);
    journal.events.appendEvents(turn.id, [delta(" and hu"), { type: "reasoning", text: "hm" }]);
    journal.events.appendEvents(turn.id, [delta("end hunt")]);
    journal.turns.transition(turn.id, { phase: "completed" });
    const events = journal.events.readEvents(turn.id).map(({ event }) => event);
    expect(events.filter((event) => event.type !== "phase")).toEqual([
      delta("say "),
      delta("[hidden] now"),
      delta(" and "),
      delta("hu"),
      { type: "reasoning", text: "hm" },
      delta("end "),
      delta("hunt"),
      { type: "terminal", outcome: "completed" },
    ]);
  });

  test("a transform that changes an event's type is refused, and nothing of that commit is kept", () => {
    const retyping: EventTransform = {
      event: (event) => (event.type === "warning" ? ({ type: "reasoning", text: "x" } as never) : event),
    };
    const { journal } = createTestJournal({ transform: retyping });
    const turn = runningTurn(journal);
    expect(() =>
      journal.turns.transition(turn.id, { phase: "failed", cause: { type: "warning", message: "w" } }),
    ).toThrow(
      expect.objectContaining({
        code: "invalid_input",
        message: expect.stringContaining("warning event's type"),
      }),
    );
    expect(journal.turns.getTurn(turn.id)).toMatchObject({ phase: "running", eventCount: 3 });
  });
});
