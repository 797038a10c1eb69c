import { describe, expect, test } from "vitest";
import {
  BackendEvent,
  effectsOfEvent,
  isActiveTurnPhase,
  isTerminalTurnPhase,
  JournalId,
  SessionRecord,
  TurnEvent,
  TurnEventEnvelope,
  TurnPhase,
  TurnRecord,
  TurnTransition,
} from "../src/index.js";

function issuesOf(result: {
  success: boolean;
  error?: { issues: { path: PropertyKey[]; message: string }[] };
}) {
  return result.error?.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`) ?? [];
}

const turn: TurnRecord = {
  id: "01a22b00-fc7b-7028-a065-299d05fe18e9",
  sessionId: "mt9qcahn-oldcn9",
  seq: 3,
  backend: "codex",
  input: { prompt: "fix the failing test" },
  phase: "interrupted",
  attempt: 2,
  replayOf: "01a22b00-fc70-7000-8000-000000000001",
  effects: ["assistant_text", "tool_started"],
  bridgeGeneration: 7,
  conversationId: "0199a213-81c0-7800-8aa1-bbab2a035a53",
  spawnMarker: "5f0c2a9e7b3d41e8a6c09d1b2e4f7a38",
  process: { pid: 41_234, startTime: "8812345" },
  error: { code: "daemon_restarted", message: "the daemon restarted after this turn produced effects" },
  eventCount: 42,
  createdAt: "2026-11-30T12:00:00.000Z",
  updatedAt: "2026-11-30T12:00:09.500Z",
  endedAt: "2026-11-30T12:00:09.500Z",
};

describe("ids and phases", () => {
  test("JournalId takes UUIDv7s and Floot session ids, and refuses what is not an id", () => {
    expect(JournalId.parse("01a22b00-fc7b-7028-a065-299d05fe18e9")).toBeTruthy();
    expect(JournalId.parse("mt9qcahn-oldcn9")).toBeTruthy();
    for (const bad of ["", "../etc", "has space", "x".repeat(129)]) {
      expect(JournalId.safeParse(bad).success).toBe(false);
    }
  });

  test("the terminal and active sets split the phases, queued being neither", () => {
    expect(TurnPhase.options.filter(isTerminalTurnPhase)).toEqual([
      "completed",
      "failed",
      "cancelled",
      "interrupted",
    ]);
    expect(TurnPhase.options.filter(isActiveTurnPhase)).toEqual([
      "accepted",
      "spawning",
      "running",
      "awaiting_secret",
    ]);
    expect(isActiveTurnPhase("queued") || isTerminalTurnPhase("queued")).toBe(false);
  });
});

describe("TurnRecord", () => {
  test("accepts a full record and a fresh one", () => {
    expect(TurnRecord.parse(turn)).toEqual(turn);
    const { replayOf, conversationId, spawnMarker, process, error, endedAt, ...fresh } = turn;
    expect(TurnRecord.parse({ ...fresh, phase: "accepted", attempt: 1, effects: [] }).phase).toBe("accepted");
  });

  test("refuses bad fields, naming each", () => {
    const result = TurnRecord.safeParse({
      ...turn,
      seq: 0,
      phase: "paused",
      effects: ["file_changed"],
      input: { prompt: "" },
      process: { pid: -1, startTime: "x" },
      createdAt: "yesterday",
    });
    expect(issuesOf(result)).toEqual([
      "seq: Too small: expected number to be >0",
      "input.prompt: prompt must not be empty",
      expect.stringMatching(/^phase: Invalid option/),
      expect.stringMatching(/^effects\.0: Invalid option/),
      "process.pid: Too small: expected number to be >0",
      "createdAt: timestamp must be an ISO 8601 date-time",
    ]);
  });

  test("is strict: an unknown field is refused by name", () => {
    expect(issuesOf(TurnRecord.safeParse({ ...turn, transcript: "..." }))).toEqual([
      ': Unrecognized key: "transcript"',
    ]);
  });
});

describe("SessionRecord", () => {
  test("accepts a running session and refuses an unknown backend or status", () => {
    const session = {
      id: "mt9qcahn-oldcn9",
      backend: "claude",
      status: "running",
      conversationId: "3f1c8a52-2b7e-4d0a-9c55-1f1f0a6b2c11",
      activeTurnId: turn.id,
      queuedTurns: 2,
      createdAt: "2026-11-30T12:00:00.000Z",
    };
    expect(SessionRecord.parse(session)).toEqual(session);
    expect(
      issuesOf(SessionRecord.safeParse({ ...session, backend: "pi", status: "busy", queuedTurns: -1 })),
    ).toEqual([
      expect.stringMatching(/^backend: Invalid option/),
      expect.stringMatching(/^status: Invalid option/),
      "queuedTurns: Too small: expected number to be >=0",
    ]);
  });
});

describe("events", () => {
  const backendEvents: BackendEvent[] = [
    { type: "backend.started", conversationId: "0199a213-81c0-7800-8aa1-bbab2a035a53" },
    { type: "assistant.delta", text: "Hel" },
    { type: "assistant.text", text: "Hello" },
    { type: "reasoning", text: "The user wants" },
    {
      type: "tool.started",
      toolId: "toolu_01",
      name: "mcp__floot__echo",
      input: { text: "x", n: [1, null] },
    },
    { type: "tool.completed", toolId: "toolu_01", output: [{ type: "text", text: "x" }], isError: false },
    { type: "tool.completed", toolId: "item_3", isError: true },
    { type: "usage", input: 1200, output: 85, cacheRead: 1000, cacheWrite: 0, costUsd: 0.0123 },
    { type: "warning", code: "model_metadata", message: "Model metadata for `mock-model` not found" },
    { type: "error", message: "stream disconnected before completion" },
  ];

  test("accepts every backend event shape", () => {
    for (const event of backendEvents) expect(BackendEvent.parse(event)).toEqual(event);
  });

  test("journal-owned events are turn events but not backend events", () => {
    const owned = [
      { type: "secret.requested", requestId: "r-1", toolCallKey: "toolu_9", name: "TOKEN", prompt: "Paste" },
      { type: "secret.resolved", requestId: "r-1", status: "orphaned" },
      { type: "phase", phase: "awaiting_secret" },
      { type: "terminal", outcome: "interrupted", error: { code: "c", message: "m" }, continuedBy: "t-2" },
    ];
    for (const event of owned) {
      expect(TurnEvent.parse(event)).toEqual(event);
      expect(BackendEvent.safeParse(event).success).toBe(false);
    }
    expect(TurnEvent.safeParse({ type: "phase", phase: "completed" }).success).toBe(false);
  });

  test("refuses malformed events, naming the field", () => {
    expect(issuesOf(BackendEvent.safeParse({ type: "tool.started", toolId: "", name: "Bash" }))).toEqual([
      "toolId: toolId must not be empty",
      "input: Invalid input",
    ]);
    expect(issuesOf(BackendEvent.safeParse({ type: "usage", input: 1.5, output: 2 }))).toEqual([
      "input: Invalid input: expected int, received number",
    ]);
    expect(issuesOf(BackendEvent.safeParse({ type: "assistant.text", text: "hi", secret: "x" }))).toEqual([
      ': Unrecognized key: "secret"',
    ]);
    expect(issuesOf(BackendEvent.safeParse({ type: "stream_event" }))).toEqual([
      expect.stringMatching(/^type: Invalid discriminator value/),
    ]);
  });

  test("the envelope carries turn id, index and time", () => {
    const envelope = {
      turnId: turn.id,
      index: 0,
      at: "2026-11-30T12:00:00.000Z",
      event: { type: "reasoning", text: "" },
    };
    expect(TurnEventEnvelope.parse(envelope)).toEqual(envelope);
    expect(issuesOf(TurnEventEnvelope.safeParse({ ...envelope, index: -1 }))).toEqual([
      "index: Too small: expected number to be >=0",
    ]);
  });

  test("effects: assistant text and begun tool calls (secret requests included), not reasoning", () => {
    const effects = Object.fromEntries(
      [
        ...backendEvents,
        { type: "secret.requested", requestId: "r", toolCallKey: "k", name: "n", prompt: "" } as const,
      ].map((event) => [event.type, effectsOfEvent(event)]),
    );
    expect(effects).toEqual({
      "backend.started": [],
      "assistant.delta": ["assistant_text"],
      "assistant.text": ["assistant_text"],
      reasoning: [],
      "tool.started": ["tool_started"],
      "tool.completed": [],
      usage: [],
      warning: [],
      error: [],
      "secret.requested": ["tool_started"],
    });
  });

  test("a gate admission proves a tool start; a tool declared effect-free proves nothing", () => {
    const admitted = { type: "tool.admitted", toolId: "t", name: "Bash", inputPreview: "{}" } as const;
    expect(TurnEvent.parse(admitted)).toEqual(admitted);
    expect(effectsOfEvent(admitted)).toEqual(["tool_started"]);
    expect(effectsOfEvent({ ...admitted, name: "Read", effectFree: true })).toEqual([]);
    const started = { type: "tool.started", toolId: "t", name: "Read", input: {}, effectFree: true } as const;
    expect(effectsOfEvent(started)).toEqual([]);
    expect(issuesOf(TurnEvent.safeParse({ ...started, effectFree: false }))).toEqual([
      expect.stringMatching(/^effectFree: Invalid input: expected true/),
    ]);
  });
});

describe("TurnTransition", () => {
  test("accepts an owner's phase change and refuses phases owned by the journal", () => {
    const change = {
      phase: "running",
      process: { pid: 4242, startTime: "99" },
      conversationId: "3f1c8a52-2b7e-4d0a-9c55-1f1f0a6b2c11",
    };
    expect(TurnTransition.parse(change)).toEqual(change);
    for (const phase of ["queued", "accepted", "awaiting_secret"]) {
      expect(issuesOf(TurnTransition.safeParse({ phase }))).toEqual([
        expect.stringMatching(/^phase: Invalid option/),
      ]);
    }
    expect(
      issuesOf(TurnTransition.safeParse({ phase: "failed", cause: { type: "phase", phase: "running" } })),
    ).toEqual([expect.stringMatching(/^cause\.type: Invalid discriminator value/)]);
  });

  test("takes a spawn marker with spawning only, and only 32 lowercase hex digits", () => {
    const spawnMarker = "5f0c2a9e7b3d41e8a6c09d1b2e4f7a38";
    expect(TurnTransition.parse({ phase: "spawning", spawnMarker })).toEqual({
      phase: "spawning",
      spawnMarker,
    });
    expect(issuesOf(TurnTransition.safeParse({ phase: "running", spawnMarker }))).toEqual([
      "spawnMarker: spawnMarker is journaled with the spawning phase only",
    ]);
    for (const malformed of ["", spawnMarker.toUpperCase(), `${spawnMarker}0`, "x".repeat(32)]) {
      expect(issuesOf(TurnTransition.safeParse({ phase: "spawning", spawnMarker: malformed }))).toEqual([
        "spawnMarker: spawn marker must be 32 lowercase hex digits",
      ]);
    }
  });
});
