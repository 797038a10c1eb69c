import { hostname } from "node:os";
import { type Board, BoardError, resolveBoardLocation } from "@bridgeworks/board";
import {
  type ActionRecord,
  type ActiveAgent,
  type AgentName,
  PermissionRequestHookInput,
  type PermissionRequestHookOutput,
} from "@bridgeworks/protocol";
import { describeError } from "@bridgeworks/runtime";
import { resolveAgentName } from "./agent-name.js";
import { openBeeBoard } from "./board-access.js";

export interface PermissionHookIo {
  env: Readonly<Record<string, string | undefined>>;
  homeDir: string;
  readStdin: () => Promise<string>;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Aborts when the hook is told to stop (SIGTERM, SIGINT: Claude Code gave up on it). */
  stopping: AbortSignal;
  openBoard?: (location: string) => Promise<Board>;
}

export interface PermissionHookPolicy {
  /** Whom the approval is addressed to: a person (`human:<name>`) or a lead agent's name. */
  to: string;
  /** Who may decide it; default the addressee, and for a lead agent also any person. */
  deciders: string[];
  /** How long the worker waits before the call is denied. */
  timeoutMs: number;
}

const maxSummary = 200;

/**
 * `bee hook permission-request`: Claude Code's PermissionRequest hook. The prompt becomes an
 * approval on the board (from an identity of this agent that lives, leased, as long as the hook
 * waits), and the call is allowed or denied as its deciders decide, once. No decision within the
 * bound, or a board out of reach, denies it with a reason the model reads. Exit 0 with the answer
 * on stdout; 1 (Claude Code then asks as it would without the hook) only for input it cannot read.
 */
export async function runPermissionRequestHook(
  io: PermissionHookIo,
  policy: PermissionHookPolicy,
): Promise<number> {
  const say = (message: string) => io.stderr(`bee hook permission-request: ${message}\n`);
  let input: PermissionRequestHookInput;
  try {
    const parsed = PermissionRequestHookInput.safeParse(JSON.parse(await io.readStdin()));
    if (!parsed.success) {
      say(
        `stdin: ${parsed.error.issues.map((issue) => `${issue.path.join(".") || "input"}: ${issue.message}`).join("; ")}`,
      );
      return 1;
    }
    input = parsed.data;
  } catch (error) {
    say(`stdin: must be the PermissionRequest hook JSON (${describeError(error)})`);
    return 1;
  }
  const answer = (output: PermissionRequestHookOutput) => {
    io.stdout(`${JSON.stringify(output)}\n`);
    return 0;
  };
  const deny = (message: string) =>
    answer({
      hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message } },
    });

  let board: Board;
  let name: AgentName;
  try {
    name = resolveAgentName(io.env, input.cwd);
    board = await (io.openBoard ?? ((location) => openBeeBoard(location, { busyTimeoutMs: 2000 })))(
      resolveBoardLocation(io.env, io.homeDir),
    );
  } catch (error) {
    return deny(`bee could not reach its board to ask for approval (${describeError(error)}); not run`);
  }
  try {
    return await askAndWait({ board, name, input, policy, io, say, deny, answer });
  } catch (error) {
    return deny(`bee could not get a decision from its board (${describeError(error)}); not run`);
  } finally {
    await board.close().catch(() => {});
  }
}

interface AskInput {
  board: Board;
  name: AgentName;
  input: PermissionRequestHookInput;
  policy: PermissionHookPolicy;
  io: PermissionHookIo;
  say: (message: string) => void;
  deny: (message: string) => number;
  answer: (output: PermissionRequestHookOutput) => number;
}

async function askAndWait({ board, name, input, policy, io, say, deny, answer }: AskInput): Promise<number> {
  const asker = await board.register(name, { process: { host: hostname(), pid: process.pid } });
  const renewing = renewWhileWaiting(board, asker);
  try {
    const request = await board.requestApproval({
      to: policy.to,
      from: asker.identity,
      deciders: policy.deciders,
      body: describeRequest(input),
    });
    say(`asked ${policy.to} on the bee board: bee approve ${request.id} (or bee deny ${request.id})`);
    let record = (
      await board.waitForAction(request.id, "completed", { timeoutMs: policy.timeoutMs, signal: io.stopping })
    ).record;
    if (record.state === "open") {
      // Withdrawn, unless a decision won the race: then that decision stands.
      record = await board
        .cancel(asker.identity, request.id, `no decision within ${Math.round(policy.timeoutMs / 1000)} s`)
        .catch(async (error: unknown) => {
          if (error instanceof BoardError && error.code === "invalid_transition")
            return board.get(request.id);
          throw error;
        });
    }
    return decide(record, policy, deny, answer);
  } catch (error) {
    if (io.stopping.aborted)
      return deny("the permission request was abandoned before anyone decided; not run");
    throw error;
  } finally {
    renewing.stop();
    await board.depart(asker.identity).catch(() => {});
  }
}

function decide(
  record: ActionRecord,
  policy: PermissionHookPolicy,
  deny: (message: string) => number,
  answer: (output: PermissionRequestHookOutput) => number,
): number {
  if (record.state === "decided") {
    if (record.decision === "allow") {
      return answer({
        hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow" } },
      });
    }
    const why = record.result === undefined ? "" : `: ${record.result}`;
    return deny(`denied on the bee board by ${record.decidedBy}${why} (approval ${record.id}); not run`);
  }
  return deny(
    `no decision on the bee board within ${Math.round(policy.timeoutMs / 1000)} s (approval ${record.id}, ` +
      `asked of ${policy.to}); not run. Go on without it, or ask again later.`,
  );
}

/** The call as a person reads it first (`Bash(rm -rf build)`), then the whole request as JSON. */
export function describeRequest(input: PermissionRequestHookInput): string {
  const command = input.tool_input.command;
  const shown = typeof command === "string" ? command : JSON.stringify(input.tool_input);
  const summary = shown.length > maxSummary ? `${shown.slice(0, maxSummary)}…` : shown;
  const detail = {
    tool_name: input.tool_name,
    tool_input: input.tool_input,
    cwd: input.cwd,
    session_id: input.session_id,
  };
  return `${input.tool_name}(${summary})\n${JSON.stringify(detail)}`;
}

/** Keeps the asking identity leased while the hook waits, so a hook that dies takes its request with it. */
function renewWhileWaiting(board: Board, asker: ActiveAgent): { stop(): void } {
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(async () => {
      let next = ms;
      try {
        next = Math.max(50, Math.floor((await board.settings()).leaseTtlMs / 3));
        await board.renew(asker.identity);
      } catch {
        // A busy board: the next round tries again; a lapsed lease withdrew the request already.
      }
      schedule(next);
    }, ms);
  };
  schedule(200);
  return {
    stop() {
      stopped = true;
      clearTimeout(timer);
    },
  };
}
