// The README's example, type-checked (scripts/readme-examples.mjs keeps the README's copy equal).

//#region use
import {
  createLogger,
  describeError,
  mcpErrorResult,
  mcpJsonResult,
  parseToolArguments,
  streamSink,
  xdgStateHome,
} from "@bridgeworks/runtime";
import { z } from "zod";

const log = createLogger({ component: "bee-bridge", level: "info", write: streamSink(process.stderr) });
log.info("bridge started", { pid: process.pid }); // {"time":…,"level":"info","component":"bee-bridge","message":…,"pid":…}

const board = `${xdgStateHome(process.env, "/home/ada")}/bee/board.db`;

const WaitInput = z.strictObject({ timeoutSeconds: z.int().min(1).max(60).default(45) });
function callTool(raw: unknown) {
  const parsed = parseToolArguments(WaitInput, raw); // null counts as absent; "30" is not a number
  if (!parsed.ok) return mcpErrorResult(parsed.message); // "timeoutSeconds: must be at most 60"
  try {
    return mcpJsonResult({ waited: parsed.value.timeoutSeconds, board });
  } catch (error) {
    log.error("wait failed", { error: describeError(error) });
    return mcpErrorResult(`wait failed: ${describeError(error)}`);
  }
}

//#endregion use

export { callTool };
