import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "@bridgeworks/runtime";
import { openJournal, type TurnJournal } from "@bridgeworks/turn-journal";
import { afterEach, describe, expect, test } from "vitest";
import { createToolGate } from "../src/daemon/tool-gate.js";
import type { TracePoint } from "../src/daemon/trace.js";

let journal: TurnJournal | undefined;
let root: string | undefined;
afterEach(() => {
  journal?.maintenance.close();
  journal = undefined;
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

function setUp() {
  root = mkdtempSync(join(tmpdir(), "floot-gate-"));
  journal = openJournal({ path: join(root, "journal.sqlite") });
  const session = journal.sessions.createSession({ backend: "claude" });
  const turn = journal.turns.submitTurn(session.id, { prompt: "p" });
  journal.turns.transition(turn.id, { phase: "spawning" });
  journal.turns.transition(turn.id, { phase: "running", process: { pid: 4242, startTime: "1" } });
  const traced: { point: TracePoint; committed: boolean }[] = [];
  const live = new Map([[turn.id, new Set(["Read"])]]);
  const gate = createToolGate({
    journal,
    effectFreeToolsOf: (turnId) => live.get(turnId),
    // What a tracer sees at each point: whether the call is in the journal yet.
    trace: (point, data) =>
      traced.push({
        point,
        committed: journal!.gate.listToolAdmissions(turn.id).some((a) => a.toolCallId === data.toolCallId),
      }),
    logger: silentLogger,
  });
  const context = { turnId: turn.id, sessionId: session.id };
  return { journal, turn, gate, context, traced, live };
}

const request = (toolCallId: string, toolName = "Bash") => ({
  type: "tool_gate",
  toolCallId,
  toolName,
  inputPreview: '{"command":"echo hi"}',
});

describe("the daemon's tool gate", () => {
  test("allows a call only once the journal holds it, with the tool_started effect", () => {
    const { journal, turn, gate, context, traced } = setUp();
    expect(gate(context, request("toolu_1"))).toEqual({ decision: "allow" });
    expect(traced).toEqual([
      { point: "gate:received", committed: false },
      { point: "gate:committed", committed: true },
    ]);
    expect(journal.turns.getTurn(turn.id)?.effects).toEqual(["tool_started"]);
  });

  test("a tool the session declared effect-free is recorded without an effect", () => {
    const { journal, turn, gate, context } = setUp();
    expect(gate(context, request("toolu_r", "Read"))).toEqual({ decision: "allow" });
    expect(journal.gate.listToolAdmissions(turn.id)).toMatchObject([{ toolName: "Read", effectFree: true }]);
    expect(journal.turns.getTurn(turn.id)?.effects).toEqual([]);
  });

  test("denies, saying why: an ended turn, a turn not running here, a malformed request", () => {
    const { journal, turn, gate, context, live } = setUp();
    journal.turns.transition(turn.id, { phase: "cancelled" });
    expect(gate(context, request("toolu_2"))).toEqual({
      decision: "deny",
      reason: `turn ${turn.id} is cancelled; no tool call of it may start`,
    });
    live.clear();
    expect(gate(context, request("toolu_3"))).toEqual({
      decision: "deny",
      reason: `turn ${turn.id} is not running in this daemon`,
    });
    expect(gate(context, { type: "tool_gate", toolCallId: "" })).toMatchObject({
      decision: "deny",
      reason: expect.stringMatching(/malformed.*toolCallId/),
    });
  });
});
