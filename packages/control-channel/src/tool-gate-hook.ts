import { readFileSync } from "node:fs";
import {
  ToolGateAnswer,
  type ToolGateRequest,
  ToolHookInput,
  type ToolHookRequest,
  toolGateInputPreviewChars,
} from "@bridgeworks/protocol";
import { describeError } from "@bridgeworks/runtime";
import { parseRebind, type RebindCredentials, shimSocketEnvVar, shimTokenEnvVar } from "./mcp-shim.js";
import {
  type SendSocketRequestOptions,
  type SocketRequestResult,
  sendSocketRequest,
} from "./socket-request.js";

// The `PreToolUse` command hook a Floot turn's CLI runs before every tool call (`dist/gate-hook.js`).
// It asks the daemon, over the turn's own socket and token, whether the call may start; the daemon
// answers only once the call is in its journal. Anything but that answer blocks the call: both CLIs
// block on exit code 2 and show the model what the hook wrote to stderr (measured, claude 2.1.332 and
// codex 0.171). Any other exit code lets the call run, so this program never ends with another one.
// Run as the `PostToolUse` hook too, it reports the finished call the same way and always exits 0:
// the call already ran, and a report that does not arrive only makes recovery more careful.

/** The hook's exit codes: 0 lets the call run, 2 blocks it. */
export const ToolGateHookExit = { allow: 0, block: 2 } as const;
export type ToolGateHookExit = (typeof ToolGateHookExit)[keyof typeof ToolGateHookExit];

/**
 * The env var naming the turn's gate rebind file: a daemon that adopted the turn after a restart
 * writes there (0600, in its private runtime dir) its socket and the turn's new gate token, as JSON
 * `{"socket", "token"}`; a hook that cannot reach the daemon it was given waits for that file.
 */
export const gateRebindFileEnvVar = "FLOOT_GATE_REBIND_FILE";

/** How long the hook waits for the daemon, in all, unless told otherwise. */
export const defaultToolGateDeadlineMs = 60_000;
/** The most stdin the hook reads: a tool input larger than this is blocked, not truncated. */
export const maxHookInputBytes = 64 * 1024 * 1024;

export interface ToolGateHookOptions {
  stdin: AsyncIterable<Buffer | string>;
  /** Reads `FLOOT_MCP_SOCKET` and `FLOOT_MCP_TOKEN`, the turn's own mount. */
  env: Readonly<Record<string, string | undefined>>;
  /** What the model is told when the call is blocked. Never carries the token. */
  stderr: { write(text: string): unknown };
  deadlineMs?: number;
  now?: () => number;
  /** Injectable for tests. */
  send?: (options: SendSocketRequestOptions) => Promise<SocketRequestResult>;
  /** How often the rebind file is looked for while the daemon is away (default 100 ms). */
  rebindPollMs?: number;
}

const notRun = "floot: this tool call was NOT run";

/** Runs the gate for one tool call; resolves with the exit code (0: may start, 2: blocked). */
export async function runToolGateHook(options: ToolGateHookOptions): Promise<ToolGateHookExit> {
  const now = options.now ?? Date.now;
  const startedAt = now();
  const deadlineMs = options.deadlineMs ?? defaultToolGateDeadlineMs;
  const block = (why: string): ToolGateHookExit => {
    options.stderr.write(`${notRun}: ${why}\n`);
    return ToolGateHookExit.block;
  };
  try {
    const socketPath = options.env[shimSocketEnvVar];
    const token = options.env[shimTokenEnvVar];
    if (!socketPath || !token) {
      return block(
        `the Floot gate is not configured (${shimSocketEnvVar} or ${shimTokenEnvVar} is missing).`,
      );
    }
    const raw = await readAll(options.stdin);
    if (raw === undefined) return block(`its input is larger than ${maxHookInputBytes} bytes.`);
    const input = parseHookInput(raw);
    if (typeof input === "string") return block(`the hook could not read its input (${input}).`);
    const sendRequest = (request: ToolHookRequest) =>
      sendRebinding(request, {
        ...options,
        socketPath,
        token,
        remaining: () => deadlineMs - (now() - startedAt),
      });
    if (input.hook_event_name === "PostToolUse") {
      await sendRequest({ type: "tool_completed", toolCallId: input.tool_use_id });
      return ToolGateHookExit.allow;
    }

    const request: ToolGateRequest = {
      type: "tool_gate",
      toolCallId: input.tool_use_id,
      toolName: input.tool_name,
      inputPreview: previewOf(input.tool_input),
    };
    const result = await sendRequest(request);
    switch (result.kind) {
      case "answered": {
        const answer = ToolGateAnswer.safeParse(result.answer);
        if (!answer.success) return block("the Floot daemon gave the gate an answer it could not read.");
        if (answer.data.decision === "allow") return ToolGateHookExit.allow;
        return block(answer.data.reason);
      }
      case "failed":
        return block(`the Floot daemon could not record it (${result.message}).`);
      case "unreachable":
      case "closed":
        return block(
          "the Floot daemon hosting this turn cannot be reached (it stopped or is restarting), so the " +
            "call could not be recorded before it ran. Nothing was executed; do not assume it ran.",
        );
      case "timed-out":
        return block(
          `the Floot daemon did not record it within ${Math.round(deadlineMs / 1000)} s. Nothing was ` +
            "executed; do not assume it ran.",
        );
      case "bad-answer":
        return block(`the Floot daemon's answer could not be read (${result.message}).`);
    }
  } catch (error) {
    return block(`the gate failed (${describeError(error)}).`);
  }
}

/**
 * Sends to the turn's daemon. If it went away (a restart), the one that adopts the turn leaves its
 * socket and a new token in the rebind file, waited for within the same deadline.
 */
async function sendRebinding(
  request: ToolHookRequest,
  options: ToolGateHookOptions & { socketPath: string; token: string; remaining: () => number },
): Promise<SocketRequestResult> {
  const { socketPath, token, remaining } = options;
  const send = options.send ?? sendSocketRequest;
  let result = await send({ socketPath, token, request, timeoutMs: Math.max(1, remaining()) });
  const rebindFile = options.env[gateRebindFileEnvVar];
  let tried = token;
  while (rebindFile && (result.kind === "unreachable" || result.kind === "closed") && remaining() > 0) {
    const rebound = readRebindFile(rebindFile);
    if (rebound === undefined || rebound.token === tried) {
      await new Promise((resolve) => setTimeout(resolve, options.rebindPollMs ?? 100));
      continue;
    }
    tried = rebound.token;
    result = await send({
      socketPath: rebound.socket,
      token: rebound.token,
      request,
      timeoutMs: Math.max(1, remaining()),
    });
  }
  return result;
}

function readRebindFile(path: string): RebindCredentials | undefined {
  try {
    return parseRebind(readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
}

async function readAll(stdin: AsyncIterable<Buffer | string>): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stdin) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
    size += bytes.length;
    if (size > maxHookInputBytes) return undefined;
    chunks.push(bytes);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function parseHookInput(raw: string): ToolHookInput | string {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return "stdin is not JSON";
  }
  const parsed = ToolHookInput.safeParse(value);
  if (parsed.success) return parsed.data;
  return parsed.error.issues
    .map((issue) => `${issue.path.join(".") || "input"}: ${issue.message}`)
    .join("; ");
}

function previewOf(input: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(input) ?? "null";
  } catch {
    text = String(input);
  }
  return text.length <= toolGateInputPreviewChars ? text : `${text.slice(0, toolGateInputPreviewChars - 1)}…`;
}

/**
 * The hook as a process: `node gate-hook.js [deadlineMs]`, the hook input on stdin, the turn's socket
 * and token in the environment. Exits 0 (the call may start) or 2 (blocked, the reason on stderr).
 */
export async function toolGateHookMain(): Promise<void> {
  const deadline = Number(process.argv[2]);
  const code = await runToolGateHook({
    stdin: process.stdin,
    env: process.env,
    stderr: process.stderr,
    ...(Number.isInteger(deadline) && deadline > 0 && { deadlineMs: deadline }),
  });
  process.exit(code);
}
