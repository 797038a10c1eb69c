import { homedir } from "node:os";
import {
  beeRunDirRule,
  checkControlProcess,
  findClaudePid,
  isPidAlive,
  type PostRetireResult,
  type ProcessReader,
  postRetire,
  readRunFile,
  resolveRunDir,
  runFilePath,
  type StartTimeReader,
  systemProcessReader,
  systemStartTimeReader,
} from "@bridgeworks/control-channel";
import { SessionStartHookInput } from "@bridgeworks/protocol";
import { describeError } from "@bridgeworks/runtime";
import { identityContext } from "./tools.js";

export interface HookIo {
  env: Readonly<Record<string, string | undefined>>;
  homeDir: string;
  ppid: number;
  readStdin: () => Promise<string>;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  readProcess: ProcessReader;
  isPidAlive: (pid: number) => boolean;
  readStartTime: StartTimeReader;
  postRetire: typeof postRetire;
}

export function systemHookIo(): HookIo {
  return {
    env: process.env,
    homeDir: homedir(),
    ppid: process.ppid,
    readStdin: () => readAll(process.stdin, 1024 * 1024),
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    readProcess: systemProcessReader,
    isPidAlive,
    readStartTime: systemStartTimeReader,
    postRetire,
  };
}

/**
 * Exit codes of `bee hook session-start`: 0 done or nothing to do (startup, no bridge, a stale run file,
 * a dead port); 1 the retire failed or was refused, what holds the port did not prove it is the bridge,
 * or the claude pid is not running; 2 the hook input is invalid. stdout carries nothing but, after a
 * retire, the SessionStart hook output with the new identity.
 */
export async function runSessionStartHook(io: HookIo): Promise<number> {
  const say = (message: string) => io.stderr(`bee hook session-start: ${message}\n`);

  let claudePid: number | undefined;
  try {
    claudePid = findClaudePid({ env: io.env, startPid: io.ppid, readProcess: io.readProcess });
  } catch (error) {
    say(describeError(error));
    return 2;
  }
  if (claudePid === undefined) {
    say("no claude process found (CLAUDE_PID is unset and no ancestor is claude); nothing to retire");
    return 0;
  }
  // Before anything else: a stale run file must never retire a bridge of a reused pid.
  if (!io.isPidAlive(claudePid)) {
    say(`claude pid ${claudePid} is not running; nothing retired`);
    return 1;
  }

  let input: SessionStartHookInput;
  try {
    const parsed = SessionStartHookInput.safeParse(JSON.parse(await io.readStdin()));
    if (!parsed.success) {
      say(
        `stdin: ${parsed.error.issues.map((issue) => `${issue.path.join(".") || "input"}: ${issue.message}`).join("; ")}`,
      );
      return 2;
    }
    input = parsed.data;
  } catch (error) {
    say(`stdin: must be the SessionStart hook JSON (${describeError(error)})`);
    return 2;
  }
  if (input.source !== "clear") return 0;

  let path: string;
  try {
    path = runFilePath(resolveRunDir(beeRunDirRule, { env: io.env, homeDir: io.homeDir }), claudePid);
  } catch (error) {
    say(describeError(error));
    return 2;
  }
  const read = await readRunFile(path);
  if (!read.ok) {
    if (read.reason === "missing") say(`no bee bridge registered for claude pid ${claudePid}`);
    else if (read.reason === "outdated") say(`${read.message}: treated as stale; nothing retired`);
    else say(read.message);
    return read.reason === "invalid" ? 1 : 0;
  }
  // Nothing is sent unless the very process that wrote the run file still runs.
  const { pid, startTime } = read.runFile;
  const bridge = checkControlProcess({ pid, startTime }, io.readStartTime);
  if (bridge === "gone") {
    say(`the bridge pid ${pid} in ${path} is not running (a stale run file); nothing retired`);
    return 0;
  }
  if (bridge === "replaced") {
    say(
      `the bridge pid ${pid} in ${path} now belongs to another process (a stale run file, the pid reused); nothing retired`,
    );
    return 0;
  }
  return reportRetire(await io.postRetire(read.runFile), io, say);
}

function reportRetire(result: PostRetireResult, io: HookIo, say: (message: string) => void): number {
  switch (result.kind) {
    case "answered": {
      const outcome = result.outcome;
      if (outcome.status === "done") {
        io.stdout(
          `${JSON.stringify(
            identityContext(
              `bee identity: ${outcome.current} (the previous identity ${outcome.retired} was retired)`,
            ),
          )}\n`,
        );
        return 0;
      }
      if (outcome.status === "running") {
        say("the bridge is still retiring the old identity; it will finish on its own");
        return 0;
      }
      say(`the bridge could not retire its identity: ${outcome.error}`);
      return 1;
    }
    case "dead_port":
      say(`nothing listens on port ${result.port}: the bridge is gone; nothing retired`);
      return 0;
    case "unproven":
      say(
        `what listens on port ${result.port} did not prove it is the bridge (${result.reason}); the token was not sent; nothing retired`,
      );
      return 1;
    case "refused":
      say(`the control server refused the request (${result.httpStatus}): ${result.error}`);
      return 1;
    case "bad_answer":
      say(`unexpected answer (${result.httpStatus}): ${result.error}`);
      return 1;
    case "timed_out":
      say(`no answer within ${result.timeoutMs} ms`);
      return 1;
    case "transport_error":
      say(`could not reach the bridge: ${result.error}`);
      return 1;
  }
}

/** A hook's stdin, refused past `maxBytes`. */
export async function readAll(stream: NodeJS.ReadableStream, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
    size += buffer.length;
    if (size > maxBytes) throw new Error(`input larger than ${maxBytes} bytes`);
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}
