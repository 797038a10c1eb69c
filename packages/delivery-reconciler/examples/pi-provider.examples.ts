// The README's example, type-checked (scripts/readme-examples.mjs keeps the README's copy equal).
import {
  type ContextMessage,
  createSystemClock,
  idleTimeoutFromEnv,
  type ToolCall,
  ToolCallLedger,
} from "@bridgeworks/delivery-reconciler";

// What the example takes from its surroundings: Pi's types and stream, the provider's session and log.
type Message = ContextMessage & { role: "user" | "assistant" | "toolResult" };
declare const diagLog: { append(record: object): void };
declare const sessionId: string;
declare const session: { failCurrentStream(message: string): void };
declare const context: { messages: Message[] };
declare const stream: object;
declare const block: { id: string; name: string; input: unknown };
declare function reportHardError(ids: readonly string[]): void;
declare function pushToolCall(stream: object, call: ToolCall): void;
declare function pushDone(stream: object, reason: "toolUse"): void;
declare function toCallToolResult(message: Message): { content: { type: "text"; text: string }[] };

//#region use
const idle = idleTimeoutFromEnv(process.env);
if (!idle.ok) throw new Error(idle.error);
const ledger = new ToolCallLedger<Message>({
  clock: createSystemClock(),
  sink: (record) => diagLog.append(record), // JSONL
  idleTimeoutMs: idle.timeoutMs,
  sessionId,
  onStall: ({ message }) => session.failCurrentStream(message), // close CC; stopReason "error"
});

// streamSimple(model, context, options): first thing
const { delivery, flush } = ledger.beginStream(context.messages);
if (delivery.unknownIds.length > 0) reportHardError(delivery.unknownIds); // refused, never paired
if (flush.length > 0) {
  for (const call of flush) pushToolCall(stream, call); // toolcall_start + toolcall_end
  pushDone(stream, "toolUse");
  ledger.endStream("done");
}

// Agent SDK messages, for the open stream
ledger.noteActivity(); // on every SDK message / stream event
const call = { id: block.id, name: block.name, arguments: block.input }; // at content_block_stop
if (ledger.recordToolUse(call) === "stream") pushToolCall(stream, call); // else it waits for a flush
ledger.refuseToolUse({ id: block.id, name: block.name }, "its arguments are not valid JSON"); // instead, when they do not parse
ledger.endStream("done"); // after pushing done(...) at message_stop
ledger.endStream("error"); // after pushing an error event

// MCP tools/call handler: the call's `_meta["claudecode/toolUseId"]` and its abort signal
async function callTool(toolUseId: string, signal: AbortSignal) {
  const answer = await ledger.awaitResult(toolUseId, signal);
  return answer.kind === "result"
    ? toCallToolResult(answer.message) // Pi's toolResult message, untouched
    : { content: [{ type: "text", text: answer.text }], isError: true };
}

// options.signal aborted: ledger.abort(); at teardown: ledger.checkQuiescence("teardown"); ledger.dispose()
//#endregion use

export { callTool };
