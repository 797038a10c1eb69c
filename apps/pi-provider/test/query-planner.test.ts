import { describe, expect, test } from "vitest";
import type { AssistantMessage, ToolResultMessage, UserMessage } from "../src/pi-types.js";
import { planQuery, type QueryAction, type QueryEvent, type QueryEventType } from "../src/query-planner.js";
import {
  type ConversationMessage,
  checkpointOf,
  type QueryState,
  type QueryStateKind,
} from "../src/query-state.js";
import { emptyUsage } from "../src/turn.js";

const user = (text: string, timestamp: number): UserMessage => ({ role: "user", content: text, timestamp });
const assistant = (timestamp: number, toolCallId?: string): AssistantMessage => ({
  role: "assistant",
  content: toolCallId ? [{ type: "toolCall", id: toolCallId, name: "bash", arguments: {} }] : [],
  api: "claude-code-agent-sdk",
  provider: "claude-code",
  model: "sonnet",
  usage: emptyUsage(),
  stopReason: toolCallId ? "toolUse" : "stop",
  timestamp,
});
const result = (toolCallId: string, timestamp: number): ToolResultMessage => ({
  role: "toolResult",
  toolCallId,
  toolName: "bash",
  content: [{ type: "text", text: "ok" }],
  isError: false,
  timestamp,
});

// Pi's history: a completed turn (u1, a1), then the next prompt and its tool round.
const u1 = user("one", 1);
const a1 = assistant(2);
const u2 = user("two", 3);
const a2 = assistant(4, "toolu_2");
const r2 = result("toolu_2", 5);
const firstTurn: ConversationMessage[] = [u1, a1];
const anchor = { checkpoint: checkpointOf(firstTurn), uuid: "uuid-after-one" };

const states = {
  none: { kind: "none" },
  running: {
    kind: "running",
    claude: { id: "session-S", lastGood: anchor },
    known: checkpointOf(firstTurn),
    settings: "A",
  },
  "running, session not reported yet": {
    kind: "running",
    claude: { id: undefined, lastGood: undefined },
    known: checkpointOf(firstTurn),
    settings: "A",
  },
  idle: { kind: "idle", claude: { id: "session-S", lastGood: anchor }, known: checkpointOf(firstTurn) },
  diverged: { kind: "diverged", claude: { id: "session-S", lastGood: anchor } },
  "diverged, no completed turn": { kind: "diverged", claude: { id: "session-S", lastGood: undefined } },
  disposed: { kind: "disposed" },
} satisfies Record<string, QueryState>;

const events = {
  "request: next prompt": { type: "request", messages: [...firstTurn, u2], settings: "A" },
  "request: tool results, new settings": {
    type: "request",
    messages: [...firstTurn, u2, a2, r2],
    settings: "B",
  },
  "request: next prompt, new settings": { type: "request", messages: [...firstTurn, u2], settings: "B" },
  "request: rewritten history": {
    type: "request",
    messages: [user("summary", 9), user("three", 10)],
    settings: "A",
  },
  "request: nothing new": { type: "request", messages: [...firstTurn], settings: "A" },
  "prepare: same settings": { type: "prepare", settings: "A" },
  "prepare: new settings": { type: "prepare", settings: "B" },
  suspend: { type: "suspend" },
  restore: { type: "restore", claude: { id: "session-R", lastGood: anchor } },
  answered: { type: "answered", checkpoint: checkpointOf([...firstTurn, u2, a2]) },
  session_reported: { type: "session_reported", sessionId: "session-R" },
  turn_completed: { type: "turn_completed", uuid: "uuid-later" },
  turn_failed: { type: "turn_failed" },
  aborted: { type: "aborted" },
  query_ended: { type: "query_ended" },
  session_lost: { type: "session_lost" },
  dispose: { type: "dispose" },
} satisfies Record<string, QueryEvent>;

type StateName = keyof typeof states;
type EventName = keyof typeof events;

const none: QueryAction = { kind: "none" };
const close: QueryAction = { kind: "close" };
const fresh: QueryAction = { kind: "fresh", tellFrom: 0 };
const resumeAtAnchor: QueryAction = {
  kind: "resume-at",
  sessionId: "session-S",
  at: "uuid-after-one",
  tellFrom: 2,
};
const resumeKnown: QueryAction = { kind: "resume", sessionId: "session-S", tellFrom: 2 };

/** Every state x event pair: the action, and the kind of the state after it. */
const table: Record<StateName, Record<EventName, [QueryAction, QueryStateKind]>> = {
  none: {
    "request: next prompt": [fresh, "running"],
    "request: tool results, new settings": [fresh, "running"],
    "request: next prompt, new settings": [fresh, "running"],
    "request: rewritten history": [fresh, "running"],
    "request: nothing new": [fresh, "running"],
    "prepare: same settings": [fresh, "running"],
    "prepare: new settings": [fresh, "running"],
    suspend: [none, "none"],
    restore: [none, "diverged"],
    answered: [none, "none"],
    session_reported: [none, "none"],
    turn_completed: [none, "none"],
    turn_failed: [none, "none"],
    aborted: [none, "none"],
    query_ended: [none, "none"],
    session_lost: [none, "none"],
    dispose: [none, "disposed"],
  },
  running: {
    "request: next prompt": [{ kind: "continue", tellFrom: 2, midRound: false }, "running"],
    "request: tool results, new settings": [{ kind: "continue", tellFrom: 2, midRound: true }, "running"],
    "request: next prompt, new settings": [
      { kind: "resume", sessionId: "session-S", tellFrom: 2 },
      "running",
    ],
    "request: rewritten history": [fresh, "running"],
    "request: nothing new": [{ kind: "resume", sessionId: "session-S", tellFrom: 2 }, "running"],
    "prepare: same settings": [none, "running"],
    "prepare: new settings": [resumeKnown, "running"],
    suspend: [close, "idle"],
    restore: [none, "running"],
    answered: [none, "running"],
    session_reported: [none, "running"],
    turn_completed: [none, "running"],
    turn_failed: [close, "diverged"],
    aborted: [close, "diverged"],
    query_ended: [none, "diverged"],
    session_lost: [close, "none"],
    dispose: [close, "disposed"],
  },
  "running, session not reported yet": {
    "request: next prompt": [{ kind: "continue", tellFrom: 2, midRound: false }, "running"],
    "request: tool results, new settings": [{ kind: "continue", tellFrom: 2, midRound: true }, "running"],
    "request: next prompt, new settings": [fresh, "running"],
    "request: rewritten history": [fresh, "running"],
    "request: nothing new": [fresh, "running"],
    "prepare: same settings": [none, "running"],
    "prepare: new settings": [fresh, "running"],
    suspend: [close, "idle"],
    restore: [none, "running"],
    answered: [none, "running"],
    session_reported: [none, "running"],
    turn_completed: [none, "running"],
    turn_failed: [close, "diverged"],
    aborted: [close, "diverged"],
    query_ended: [none, "diverged"],
    session_lost: [close, "none"],
    dispose: [close, "disposed"],
  },
  idle: {
    "request: next prompt": [resumeKnown, "running"],
    "request: tool results, new settings": [resumeKnown, "running"],
    "request: next prompt, new settings": [resumeKnown, "running"],
    "request: rewritten history": [fresh, "running"],
    "request: nothing new": [resumeKnown, "running"],
    "prepare: same settings": [resumeKnown, "running"],
    "prepare: new settings": [resumeKnown, "running"],
    suspend: [none, "idle"],
    restore: [none, "idle"],
    answered: [none, "idle"],
    session_reported: [none, "idle"],
    turn_completed: [none, "idle"],
    turn_failed: [none, "idle"],
    aborted: [none, "idle"],
    query_ended: [none, "idle"],
    session_lost: [none, "none"],
    dispose: [none, "disposed"],
  },
  diverged: {
    "request: next prompt": [resumeAtAnchor, "running"],
    "request: tool results, new settings": [resumeAtAnchor, "running"],
    "request: next prompt, new settings": [resumeAtAnchor, "running"],
    "request: rewritten history": [fresh, "running"],
    "request: nothing new": [resumeAtAnchor, "running"],
    "prepare: same settings": [resumeAtAnchor, "running"],
    "prepare: new settings": [resumeAtAnchor, "running"],
    suspend: [none, "diverged"],
    restore: [none, "diverged"],
    answered: [none, "diverged"],
    session_reported: [none, "diverged"],
    turn_completed: [none, "diverged"],
    turn_failed: [none, "diverged"],
    aborted: [none, "diverged"],
    query_ended: [none, "diverged"],
    session_lost: [none, "none"],
    dispose: [none, "disposed"],
  },
  "diverged, no completed turn": {
    "request: next prompt": [fresh, "running"],
    "request: tool results, new settings": [fresh, "running"],
    "request: next prompt, new settings": [fresh, "running"],
    "request: rewritten history": [fresh, "running"],
    "request: nothing new": [fresh, "running"],
    "prepare: same settings": [fresh, "running"],
    "prepare: new settings": [fresh, "running"],
    suspend: [none, "diverged"],
    restore: [none, "diverged"],
    answered: [none, "diverged"],
    session_reported: [none, "diverged"],
    turn_completed: [none, "diverged"],
    turn_failed: [none, "diverged"],
    aborted: [none, "diverged"],
    query_ended: [none, "diverged"],
    session_lost: [none, "none"],
    dispose: [none, "disposed"],
  },
  disposed: {
    "request: next prompt": [none, "disposed"],
    "request: tool results, new settings": [none, "disposed"],
    "request: next prompt, new settings": [none, "disposed"],
    "request: rewritten history": [none, "disposed"],
    "request: nothing new": [none, "disposed"],
    "prepare: same settings": [none, "disposed"],
    "prepare: new settings": [none, "disposed"],
    suspend: [none, "disposed"],
    restore: [none, "disposed"],
    answered: [none, "disposed"],
    session_reported: [none, "disposed"],
    turn_completed: [none, "disposed"],
    turn_failed: [none, "disposed"],
    aborted: [none, "disposed"],
    query_ended: [none, "disposed"],
    session_lost: [none, "disposed"],
    dispose: [none, "disposed"],
  },
};

// The table names every state kind and every event type (a new one fails here until it has rows).
const stateKinds = { none: true, running: true, idle: true, diverged: true, disposed: true } satisfies Record<
  QueryStateKind,
  true
>;
const eventTypes = {
  request: true,
  prepare: true,
  suspend: true,
  restore: true,
  answered: true,
  session_reported: true,
  turn_completed: true,
  turn_failed: true,
  aborted: true,
  query_ended: true,
  session_lost: true,
  dispose: true,
} satisfies Record<QueryEventType, true>;

const rows = Object.entries(table).flatMap(([stateName, byEvent]) =>
  Object.entries(byEvent).map(([eventName, [action, next]]) => ({
    stateName: stateName as StateName,
    eventName: eventName as EventName,
    action,
    next,
  })),
);

describe("the query planner: every state x event pair", () => {
  test("the table covers every state kind and every event type", () => {
    expect(new Set(Object.values(states).map((state) => state.kind))).toEqual(
      new Set(Object.keys(stateKinds)),
    );
    expect(new Set(Object.values(events).map((event) => event.type))).toEqual(
      new Set(Object.keys(eventTypes)),
    );
    expect(rows).toHaveLength(Object.keys(states).length * Object.keys(events).length);
  });

  test.each(rows)(
    "$stateName + $eventName -> $action.kind, $next",
    ({ stateName, eventName, action, next }) => {
      const step = planQuery(states[stateName], events[eventName]);
      expect(step.action).toEqual(action);
      expect(step.state.kind).toBe(next);
    },
  );
});

describe("what the planner remembers", () => {
  test("a request's query holds Pi's whole context; the answer, the session id and a completed turn extend it", () => {
    let state: QueryState = { kind: "none" };
    const step = (event: QueryEvent) => {
      const next = planQuery(state, event);
      state = next.state;
      return next.action;
    };
    expect(step({ type: "request", messages: [u1], settings: "A" })).toEqual(fresh);
    expect(state).toEqual({
      kind: "running",
      claude: { id: undefined, lastGood: undefined },
      known: checkpointOf([u1]),
      settings: "A",
    });
    step({ type: "session_reported", sessionId: "session-S" });
    step({ type: "answered", checkpoint: checkpointOf(firstTurn) });
    step({ type: "turn_completed", uuid: "uuid-after-one" });
    expect(state).toEqual({ ...states.running });
    // A failed turn is rewound to that completed one, on the same Claude session.
    expect(step({ type: "aborted" })).toEqual(close);
    expect(step({ type: "request", messages: [...firstTurn, u2], settings: "A" })).toEqual({
      kind: "resume-at",
      sessionId: "session-S",
      at: "uuid-after-one",
      tellFrom: 2,
    });
  });

  test("a query prepared ahead of the first prompt is continued by it, which tells it everything", () => {
    const warm = planQuery({ kind: "none" }, { type: "prepare", settings: "A" });
    expect(warm.action).toEqual(fresh);
    const first = planQuery(warm.state, { type: "request", messages: [u1], settings: "A" });
    expect(first.action).toEqual({ kind: "continue", tellFrom: 0, midRound: false });
    // One whose settings the request does not share is replaced (it has no session to resume yet).
    expect(planQuery(warm.state, { type: "request", messages: [u1], settings: "B" }).action).toEqual(fresh);
  });

  test("a restored session is prepared rewound to its last completed turn; the next prompt continues there", () => {
    const restored = planQuery(
      { kind: "none" },
      { type: "restore", claude: { id: "session-S", lastGood: anchor } },
    );
    const warm = planQuery(restored.state, { type: "prepare", settings: "A" });
    expect(warm.action).toEqual(resumeAtAnchor);
    const next = planQuery(warm.state, events["request: next prompt"]);
    expect(next.action).toEqual({ kind: "continue", tellFrom: 2, midRound: false });
    // A history that no longer holds that turn (compacted meanwhile) starts afresh.
    expect(planQuery(warm.state, events["request: rewritten history"]).action).toEqual(fresh);
  });

  test("leaving claude-code and coming back resumes the same session where it was", () => {
    const away = planQuery(states.running, { type: "suspend" });
    const back = planQuery(away.state, { type: "prepare", settings: "A" });
    expect(back.action).toEqual(resumeKnown);
    expect(planQuery(back.state, events["request: next prompt"]).action).toEqual({
      kind: "continue",
      tellFrom: 2,
      midRound: false,
    });
  });

  test("a fresh start forgets the old Claude session: a later failure cannot rewind into it", () => {
    const step = planQuery(states.running, events["request: rewritten history"]);
    expect(step.state).toMatchObject({ kind: "running", claude: { id: undefined, lastGood: undefined } });
    const failed = planQuery(step.state, { type: "turn_failed" });
    expect(planQuery(failed.state, events["request: rewritten history"]).action).toEqual(fresh);
  });

  test("a completed turn without a chain entry is resumed as it is, from its checkpoint", () => {
    const unanchored: QueryState = {
      kind: "diverged",
      claude: { id: "session-S", lastGood: { checkpoint: checkpointOf(firstTurn), uuid: undefined } },
    };
    expect(planQuery(unanchored, events["request: next prompt"]).action).toEqual({
      kind: "resume",
      sessionId: "session-S",
      tellFrom: 2,
    });
  });
});
