// Reconcile cost against conversation length: delivering one pending call's result near the end of a
// context of 100 .. 100k messages, incrementally (the ledger's watermark) and with a whole-context scan
// (a ledger meeting that context for the first time with a live call), measured in the same run.
// Run with `pnpm bench` (builds dist first). Prints JSON.
import { ToolCallLedger } from "../dist/index.js";

const sizes = [100, 1_000, 10_000, 100_000];
const iterations = 300;
const warmup = 30;
const pendingId = "toolu_pending";
const quietClock = { now: () => 0, setTimeout: () => 0, clearTimeout: () => {} };

function conversation(length) {
  const messages = [];
  let time = 1_700_000_000_000;
  for (let round = 0; messages.length < length - 2; round++) {
    const id = `hist_${round}`;
    messages.push(
      { role: "user", content: "go on", timestamp: time++ },
      {
        role: "assistant",
        content: [{ type: "toolCall", id, name: "bash", arguments: {} }],
        timestamp: time++,
      },
      {
        role: "toolResult",
        toolCallId: id,
        toolName: "bash",
        content: [],
        isError: false,
        timestamp: time++,
      },
    );
  }
  messages.length = length - 2;
  const prefix = messages.slice();
  messages.push(
    {
      role: "assistant",
      content: [{ type: "toolCall", id: pendingId, name: "bash", arguments: {} }],
      timestamp: time++,
    },
    {
      role: "toolResult",
      toolCallId: pendingId,
      toolName: "bash",
      content: [],
      isError: false,
      timestamp: time++,
    },
  );
  return { prefix, full: messages };
}

function newLedger() {
  return new ToolCallLedger({ clock: quietClock, sink: () => {}, idleTimeoutMs: 0 });
}

/** The ledger saw the conversation up to the call; Pi now returns with the result appended. */
function incremental({ prefix, full }) {
  const ledger = newLedger();
  ledger.beginStream(prefix);
  ledger.recordToolUse({ id: pendingId, name: "bash", arguments: {} });
  ledger.endStream("done");
  return () => ledger.beginStream(full);
}

/** The same delivery when the ledger has no watermark to trust: it reads every message. */
function wholeContext({ full }) {
  const ledger = newLedger();
  ledger.recordToolUse({ id: pendingId, name: "bash", arguments: {} });
  return () => ledger.beginStream(full);
}

function measure(prepare, context) {
  const samples = [];
  let report;
  for (let run = 0; run < warmup + iterations; run++) {
    const deliver = prepare(context);
    const start = process.hrtime.bigint();
    report = deliver().delivery;
    const elapsed = Number(process.hrtime.bigint() - start) / 1_000;
    if (run >= warmup) samples.push(elapsed);
    if (report.queuedIds[0] !== pendingId) throw new Error("the pending result was not delivered");
  }
  samples.sort((a, b) => a - b);
  const at = (q) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))];
  return {
    medianUs: round(at(0.5)),
    p99Us: round(at(0.99)),
    scanMode: report.scan.mode,
    messagesExamined: report.scan.messagesExamined,
  };
}

function round(value) {
  return Math.round(value * 100) / 100;
}

const results = sizes.map((messages) => {
  const context = conversation(messages);
  const incrementalStats = measure(incremental, context);
  const wholeContextStats = measure(wholeContext, context);
  return {
    messages,
    incremental: incrementalStats,
    wholeContextScan: wholeContextStats,
    ratioOfMedians: round(wholeContextStats.medianUs / incrementalStats.medianUs),
  };
});

console.log(
  JSON.stringify(
    { bench: "reconcile", node: process.version, iterations, unit: "microseconds", results },
    null,
    2,
  ),
);
