/**
 * Model-based property test: random interleavings of Claude's tool_use blocks, MCP handler invocations
 * (before or after their tool_use), cancelled handlers, Pi streams opening and closing (done or error),
 * Pi results (in order, shuffled, duplicated, interleaved with other messages, lost, with unknown ids),
 * compaction and rewritten contexts, aborts, activity and time passing. After every command the ledger's
 * invariants hold; after the world drains, nothing waits, nothing is undelivered, every result went to
 * its own id, and every unknown id was refused and reported.
 */
import { DeliveryDiagnosticRecord } from "@bridgeworks/protocol";
import fc from "fast-check";
import { expect, test } from "vitest";
import { HandlerCancelledError, ToolCallLedger, type ToolResult } from "../src/index.js";
import { FakeClock } from "./support/fake-clock.js";
import { call, settle, type Tracked, track } from "./support/harness.js";
import { MessageFactory, type PiMessage, resultText } from "./support/pi-messages.js";

const deadlines = {
  emittedMs: 20_000,
  undeliveredMs: 15_000,
  executingMs: 120_000,
  missingResultMs: 10_000,
  queuedMs: 30_000,
  strandedHandlerMs: 3_000,
};
const longestDeadline = Math.max(...Object.values(deadlines));
const historyLength = 7;

interface Handler {
  readonly tracked: Tracked<ToolResult<PiMessage>>;
  readonly controller: AbortController;
  cancelled: boolean;
}

class World {
  readonly clock = new FakeClock();
  readonly messages = new MessageFactory();
  readonly records: DeliveryDiagnosticRecord[] = [];
  readonly invalidRecords: unknown[] = [];
  readonly ledger = new ToolCallLedger<PiMessage>({
    clock: this.clock,
    sink: (record) => {
      if (!DeliveryDiagnosticRecord.safeParse(record).success) this.invalidRecords.push(record);
      this.records.push(record);
    },
    idleTimeoutMs: 5_000,
    deadlines,
  });
  context: PiMessage[] = this.messages.history(historyLength);
  /** Messages at or after this index of `context` have not been read by the ledger yet. */
  unscannedFrom = 0;
  historyPresent = true;
  streamOpen = false;
  streamCalls: string[] = [];
  piExecuting: string[] = [];
  readonly emitted: string[] = [];
  readonly earlyHandlerIds: string[] = [];
  readonly handlers = new Map<string, Handler>();
  readonly lostResults = new Set<string>();
  readonly unknownInjected = new Set<string>();
  readonly unknownReported = new Set<string>();
  private nextId = 0;
  private nextUnknown = 0;

  freshId(): string {
    return `toolu_${this.nextId++}`;
  }

  freshUnknownId(): string {
    return `unknown_${this.nextUnknown++}`;
  }

  invokeHandler(id: string): void {
    const controller = new AbortController();
    this.handlers.set(id, {
      tracked: track(this.ledger.awaitResult(id, controller.signal)),
      controller,
      cancelled: false,
    });
  }

  openStream(): void {
    const { delivery, flush } = this.ledger.beginStream(this.context);
    this.unscannedFrom = this.context.length;
    for (const id of delivery.unknownIds) this.unknownReported.add(id);
    for (const flushed of flush) expect(this.emitted).toContain(flushed.id);
    this.streamCalls = flush.map((flushed) => flushed.id);
    this.streamOpen = true;
  }

  endStream(outcome: "done" | "error"): void {
    const ended = this.ledger.endStream(outcome);
    for (const id of ended.forwardedIds) expect(this.streamCalls).toContain(id);
    if (outcome === "done") {
      this.context.push(this.messages.assistant(...this.streamCalls.map((id) => ({ id }))));
      this.piExecuting.push(...ended.forwardedIds);
    }
    this.streamCalls = [];
    this.streamOpen = false;
  }

  /** Pi appends one result per executed call, in its own order, with other messages in between. */
  returnResults(plan: ResultPlan): void {
    const order = [...this.piExecuting].sort(
      (a, b) => (plan.keys[this.piExecuting.indexOf(a)] ?? 0) - (plan.keys[this.piExecuting.indexOf(b)] ?? 0),
    );
    order.forEach((id, position) => {
      const shape = plan.shapes[position % plan.shapes.length] ?? "plain";
      if (shape === "lost") {
        this.lostResults.add(id);
        return;
      }
      if (shape === "after_steer") this.context.push(this.messages.user("steer"));
      if (shape === "after_assistant") this.context.push(this.messages.assistant());
      this.context.push(this.messages.result(id));
      if (shape === "duplicated") this.context.push(this.messages.result(id, `duplicate of ${id}`));
    });
    for (let count = 0; count < plan.unknownCount; count++) {
      const id = this.freshUnknownId();
      this.unknownInjected.add(id);
      this.context.push(this.messages.result(id));
    }
    this.piExecuting = [];
  }

  /** Compaction replaces the initial history with a summary: the context gets shorter. */
  compact(): void {
    this.context = [this.messages.user("summary"), ...this.context.slice(historyLength)];
    this.unscannedFrom = Math.max(1, this.unscannedFrom - historyLength + 1);
    this.historyPresent = false;
  }

  /** The same conversation rebuilt, with the last message the ledger read restamped. */
  rewrite(): void {
    this.context = this.context.map((message) => structuredClone(message));
    const anchor = this.context[this.unscannedFrom - 1];
    if (anchor) anchor.timestamp += 0.5;
  }

  /** After every command: the invariants that hold at all times. */
  checkInvariants(): void {
    const snapshot = this.ledger.snapshot();
    expect(snapshot.streamOpen).toBe(this.streamOpen);
    for (const entry of snapshot.entries) {
      if (this.streamOpen) expect(entry.state).not.toBe("undelivered");
      const live = entry.state !== "resolved" && entry.state !== "failed";
      // No silent waits: whatever is live has a deadline.
      if (live) expect(entry.deadlineAt).toBeGreaterThan(this.clock.now());
    }
    expect(this.invalidRecords).toEqual([]);
  }
}

interface ResultPlan {
  readonly keys: number[];
  readonly shapes: ("plain" | "after_steer" | "after_assistant" | "duplicated" | "lost")[];
  readonly unknownCount: number;
}

type WorldCommand = fc.Command<World, World>;

const command = (
  name: string,
  check: (world: Readonly<World>) => boolean,
  run: (world: World) => void,
): WorldCommand => ({
  check,
  run: (_, world) => {
    run(world);
    world.checkInvariants();
  },
  toString: () => name,
});

const emitToolUse = fc.boolean().map((early) =>
  command(
    `toolUse(${early ? "early" : "fresh"})`,
    () => true,
    (world) => {
      const id = (early ? world.earlyHandlerIds.shift() : undefined) ?? world.freshId();
      const settled = world.ledger.stateOf(id) === "failed";
      const route = world.ledger.recordToolUse(call(id));
      world.emitted.push(id);
      expect(route).toBe(settled ? "duplicate" : world.streamOpen ? "stream" : "undelivered");
      if (route === "stream") world.streamCalls.push(id);
    },
  ),
);

const invokeHandler = fc.nat().map((pick) =>
  command(
    `handler(${pick})`,
    (world) => world.emitted.some((id) => !world.handlers.has(id)),
    (world) => {
      const candidates = world.emitted.filter((id) => !world.handlers.has(id));
      world.invokeHandler(candidates[pick % candidates.length]!);
    },
  ),
);

const invokeEarlyHandler = fc.constant(
  command(
    "handlerBeforeToolUse",
    () => true,
    (world) => {
      const id = world.freshId();
      world.earlyHandlerIds.push(id);
      world.invokeHandler(id);
    },
  ),
);

const cancelHandler = fc.nat().map((pick) =>
  command(
    `cancelHandler(${pick})`,
    (world) => world.handlers.size > 0,
    (world) => {
      const handlers = [...world.handlers.values()];
      const handler = handlers[pick % handlers.length]!;
      handler.cancelled = true;
      handler.controller.abort("remote-cancel");
    },
  ),
);

const openStream = fc.constant(
  command(
    "openStream",
    (world) => !world.streamOpen,
    (world) => world.openStream(),
  ),
);

const endStream = fc.constantFrom("done" as const, "done" as const, "error" as const).map((outcome) =>
  command(
    `endStream(${outcome})`,
    (world) => world.streamOpen,
    (world) => world.endStream(outcome),
  ),
);

const returnResults = fc
  .record({
    keys: fc.array(fc.nat(100), { maxLength: 8 }),
    shapes: fc.array(
      fc.constantFrom("plain", "plain", "after_steer", "after_assistant", "duplicated", "lost"),
      {
        minLength: 1,
        maxLength: 5,
      },
    ),
    unknownCount: fc.constantFrom(0, 0, 1, 2),
  })
  .map((plan: ResultPlan) =>
    command(
      `returnResults(${JSON.stringify(plan)})`,
      (world) => !world.streamOpen && world.piExecuting.length > 0,
      (world) => world.returnResults(plan),
    ),
  );

const abort = fc.constant(
  command(
    "abort",
    () => true,
    (world) => {
      world.ledger.abort("test abort");
      world.streamOpen = false;
      world.streamCalls = [];
    },
  ),
);

const advance = fc.constantFrom(500, 2_000, 6_000, 16_000, 40_000).map((ms) =>
  command(
    `advance(${ms})`,
    () => true,
    (world) => world.clock.advance(ms),
  ),
);

const activity = fc.constant(
  command(
    "activity",
    () => true,
    (world) => world.ledger.noteActivity(),
  ),
);

const compact = fc.constant(
  command(
    "compact",
    (world) => world.historyPresent && world.unscannedFrom >= historyLength,
    (world) => world.compact(),
  ),
);

const rewrite = fc.constant(
  command(
    "rewrite",
    (world) => world.unscannedFrom > 0,
    (world) => world.rewrite(),
  ),
);

const commands = fc.commands(
  [
    emitToolUse,
    emitToolUse,
    invokeHandler,
    invokeHandler,
    invokeEarlyHandler,
    cancelHandler,
    openStream,
    openStream,
    endStream,
    endStream,
    returnResults,
    returnResults,
    fc.oneof({ arbitrary: abort, weight: 1 }, { arbitrary: activity, weight: 4 }),
    advance,
    activity,
    compact,
    rewrite,
  ],
  { maxCommands: 60, size: "max" },
);

/** Runs the conversation to its end: every stream done, every result returned, every handler invoked. */
async function drain(world: World): Promise<void> {
  for (let round = 0; round < 20; round++) {
    if (world.streamOpen) world.endStream("done");
    if (world.piExecuting.length > 0) world.returnResults({ keys: [], shapes: ["plain"], unknownCount: 0 });
    for (const id of world.emitted) if (!world.handlers.has(id)) world.invokeHandler(id);
    world.openStream();
    await settle();
    if (world.streamCalls.length === 0 && world.piExecuting.length === 0) break;
  }
  world.endStream("done");
  await settle();
}

function answerOf(world: World, id: string): ToolResult<PiMessage> | undefined {
  return world.handlers.get(id)?.tracked.value;
}

test("after quiescence nothing waits or is undelivered, results go to their own id, unknown ids are refused", async () => {
  await fc.assert(
    fc.asyncProperty(commands, async (scenario) => {
      const world = new World();
      fc.modelRun(() => ({ model: world, real: world }), scenario);
      await settle();
      await drain(world);

      const snapshot = world.ledger.snapshot();
      expect(snapshot.entries.filter((entry) => entry.state === "undelivered")).toEqual([]);
      expect(snapshot.entries.filter((entry) => entry.state === "result_queued")).toEqual([]);
      // Before any deadline runs: only calls no tool_use ever named, and calls whose result Pi lost,
      // may still wait.
      for (const [id, handler] of world.handlers) {
        if (handler.tracked.state !== "pending") continue;
        expect(world.lostResults.has(id) || !world.emitted.includes(id)).toBe(true);
      }

      world.clock.advance(longestDeadline * 2);
      await settle();
      expect(world.ledger.checkQuiescence()).toEqual({ quiescent: true });

      for (const [id, handler] of world.handlers) {
        expect(handler.tracked.state).not.toBe("pending");
        if (handler.tracked.state === "rejected") {
          expect(handler.cancelled).toBe(true);
          expect(handler.tracked.error).toBeInstanceOf(HandlerCancelledError);
          continue;
        }
        const answer = answerOf(world, id)!;
        expect(answer.toolCallId).toBe(id);
        if (answer.kind === "result") {
          expect(answer.message.role).toBe("toolResult");
          expect(resultText(answer.message)).toBe(`output of ${id}`);
          expect(world.lostResults.has(id)).toBe(false);
        } else {
          const reasons = world.records.filter(
            (record) =>
              record.type === "tool_call_ledger_transition" && record.toolCallId === id && record.reason,
          );
          expect(reasons.length).toBeGreaterThan(0);
        }
      }

      for (const id of world.unknownInjected) {
        expect(world.unknownReported.has(id)).toBe(true);
        expect(world.ledger.stateOf(id)).toBeUndefined();
      }
      for (const record of world.records) {
        if (record.type !== "tool_result_delivery") continue;
        for (const id of record.unknownIds) expect(id).toMatch(/^unknown_/);
        expect(record.resolvedIds.concat(record.queuedIds).every((id) => id.startsWith("toolu_"))).toBe(true);
      }
      expect(world.invalidRecords).toEqual([]);
      world.ledger.dispose();
    }),
    { numRuns: 400 },
  );
  // 400 runs take ~1 s on an idle machine; the bound only has to catch a hang.
}, 120_000);
