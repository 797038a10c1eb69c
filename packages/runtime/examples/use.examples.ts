// The README's example, type-checked (scripts/readme-examples.mjs keeps the README's copy equal).

//#region use
import {
  createLogger,
  describeError,
  McpToolTable,
  mcpErrorResult,
  mcpJsonResult,
  mcpTool,
  streamSink,
  xdgStateHome,
} from "@bridgeworks/runtime";
import { z } from "zod";

const log = createLogger({ component: "bee-bridge", level: "info", write: streamSink(process.stderr) });
log.info("bridge started", { pid: process.pid }); // {"time":…,"level":"info","component":"bee-bridge","message":…,"pid":…}

const board = `${xdgStateHome(process.env, "/home/ada")}/bee/board.db`;

/** What the server hands each handler beside its arguments: here, the call's abort signal. */
interface Call {
  signal: AbortSignal;
}

const tools = new McpToolTable<Call>([
  mcpTool({
    name: "wait",
    description: "Wait up to timeoutSeconds (1-60, default 45).",
    input: z.strictObject({ timeoutSeconds: z.int().min(1).max(60).default(45) }),
    annotations: { readOnlyHint: true },
    async handler({ timeoutSeconds }, { signal }: Call) {
      try {
        return mcpJsonResult({ waited: timeoutSeconds, board, aborted: signal.aborted });
      } catch (error) {
        log.error("wait failed", { error: describeError(error) });
        return mcpErrorResult(`wait failed: ${describeError(error)}`);
      }
    },
  }),
]);

tools.list(); // [{name: "wait", description, inputSchema: {type: "object", properties: {timeoutSeconds: {type: "integer", minimum: 1, maximum: 60, default: 45}}, …}, annotations}]
function callTool(name: string, raw: unknown, signal: AbortSignal) {
  // {timeoutSeconds: 61}: "timeoutSeconds: must be at most 60"; name "wiat": 'name: no tool called "wiat"'
  return tools.call(name, raw, { signal });
}

//#endregion use

export { callTool };
