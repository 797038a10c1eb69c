import { parseArgs } from "node:util";
import type {
  FlootLoginCode,
  FlootSecretRequestList,
  FlootSession,
  FlootSessionList,
  SubmitSecretResponse,
  TurnEventEnvelope,
  TurnRecord,
} from "@bridgeworks/protocol";
import { ClientError, FlootClient, readDaemonFile } from "./client/api-client.js";
import { startDaemon } from "./daemon/daemon.js";
import { StateDirLockedError, stateDirLockedExitCode } from "./daemon/state-lock.js";
import { jsonLogger } from "./log.js";
import { openInBrowser } from "./open-browser.js";
import { resolveStateDir } from "./state-dir.js";

export interface CliIo {
  argv: string[];
  env: Readonly<Record<string, string | undefined>>;
  stdout: NodeJS.WriteStream | NodeJS.WritableStream;
  stderr: NodeJS.WriteStream | NodeJS.WritableStream;
  stdin: NodeJS.ReadStream | NodeJS.ReadableStream;
  uiDir?: string;
}

export const usage = `usage:
  floot daemon [--state DIR] [--port N]
  floot open [--no-browser] [--json]   (the web UI: a one-time login link)
  floot session create --backend claude|codex [--workspace DIR] [--model M] [--env K=V]... [--json]
  floot session list [--json]
  floot send <session> <prompt> [--follow] [--json]
  floot turn show <turn> [--json]
  floot turn current <session> [--json]
  floot turn follow <turn> [--from N] [--json]
  floot turn retry <turn> [--json]
  floot turn cancel <turn> [--json]
  floot secret list [--json]
  floot secret submit <request>      (the value from stdin, or a prompt that does not echo)
every command takes --state DIR (default $FLOOT_STATE_DIR, else $XDG_STATE_HOME/floot)`;

export const exitCodes = { ok: 0, failure: 1, usage: 2, stateDirLocked: stateDirLockedExitCode } as const;

class UsageError extends Error {}

/** Runs one `floot` command; resolves with the exit code (the daemon resolves only when it stops). */
export async function runCli(io: CliIo): Promise<number> {
  const write = (text: string) => io.stdout.write(text);
  const warn = (text: string) => io.stderr.write(text);
  try {
    const [command, ...rest] = io.argv;
    if (command === undefined || command === "--help" || command === "-h" || command === "help") {
      write(`${usage}\n`);
      return command === undefined ? exitCodes.usage : exitCodes.ok;
    }
    if (command === "daemon") return await daemonCommand(io, rest);
    const { values, positionals } = parseArgs({
      args: rest,
      allowPositionals: true,
      options: {
        state: { type: "string" },
        json: { type: "boolean", default: false },
        backend: { type: "string" },
        workspace: { type: "string" },
        model: { type: "string" },
        env: { type: "string", multiple: true },
        "codex-config": { type: "string", multiple: true },
        "allowed-tool": { type: "string", multiple: true },
        "permission-mode": { type: "string" },
        follow: { type: "boolean", default: false },
        from: { type: "string" },
        "no-browser": { type: "boolean", default: false },
      },
    });
    const stateDir = resolveStateDir({ flag: values.state, env: io.env });
    const client = new FlootClient(readDaemonFile(stateDir));
    const json = values.json === true;
    const show = (value: unknown, human: () => string) =>
      write(json ? `${JSON.stringify(value)}\n` : `${human()}\n`);
    const [sub, ...args] = positionals;

    if (command === "open") {
      const login = await client.request<FlootLoginCode>("POST", "/v1/ui/login-codes");
      const url = `${client.baseUrl}/login?code=${login.code}`;
      show({ url, expiresAt: login.expiresAt }, () => url);
      if (!json) warn(`a one-time link, valid until ${login.expiresAt}\n`);
      if (!values["no-browser"]) openInBrowser(url, io.env);
      return exitCodes.ok;
    }
    if (command === "session" && sub === "create") {
      if (!values.backend) throw new UsageError("session create needs --backend claude|codex");
      const env: Record<string, string> = {};
      for (const pair of values.env ?? []) {
        const at = pair.indexOf("=");
        if (at < 1) throw new UsageError(`--env takes K=V, got ${JSON.stringify(pair)}`);
        env[pair.slice(0, at)] = pair.slice(at + 1);
      }
      const session = await client.request<FlootSession>("POST", "/v1/sessions", {
        backend: values.backend,
        ...(values.workspace !== undefined && { workspace: resolveAbsolute(values.workspace) }),
        ...(values.model !== undefined && { model: values.model }),
        ...(Object.keys(env).length > 0 && { env }),
        ...(values["codex-config"] !== undefined && { codexConfig: values["codex-config"] }),
        ...(values["allowed-tool"] !== undefined && { allowedTools: values["allowed-tool"] }),
        ...(values["permission-mode"] !== undefined && { permissionMode: values["permission-mode"] }),
      });
      show(session, () => session.id);
      return exitCodes.ok;
    }
    if (command === "session" && sub === "list") {
      const list = await client.request<FlootSessionList>("GET", "/v1/sessions");
      show(list, () =>
        list.sessions
          .map(
            (s) =>
              `${s.id}  ${s.backend}  ${s.status}${s.queuedTurns ? ` (+${s.queuedTurns} queued)` : ""}  ${s.workspace}`,
          )
          .join("\n"),
      );
      return exitCodes.ok;
    }
    if (command === "send") {
      const [sessionId, prompt] = [sub, args.join(" ")];
      if (!sessionId || !prompt) throw new UsageError("send needs <session> <prompt>");
      const turn = await client.request<TurnRecord>("POST", `/v1/sessions/${enc(sessionId)}/turns`, {
        prompt,
      });
      if (!values.follow) {
        show(turn, () => turn.id);
        return exitCodes.ok;
      }
      if (!json) warn(`turn ${turn.id} (${turn.phase})\n`);
      return await followAndReport(client, turn.id, 0, json, io);
    }
    if (command === "turn") {
      const id = args[0];
      if (!id) throw new UsageError(`turn ${sub ?? ""} needs an id`);
      if (sub === "show" || sub === "current") {
        const path = sub === "show" ? `/v1/turns/${enc(id)}` : `/v1/sessions/${enc(id)}/current-turn`;
        const turn = await client.request<TurnRecord>("GET", path);
        show(turn, () => describeTurn(turn));
        return exitCodes.ok;
      }
      if (sub === "follow") {
        const from = values.from === undefined ? 0 : Number(values.from);
        if (!Number.isInteger(from) || from < 0) throw new UsageError("--from takes a non-negative integer");
        return await followAndReport(client, id, from, json, io);
      }
      if (sub === "retry" || sub === "cancel") {
        const turn = await client.request<TurnRecord>("POST", `/v1/turns/${enc(id)}/${sub}`);
        show(turn, () => describeTurn(turn));
        return exitCodes.ok;
      }
    }
    if (command === "secret" && sub === "list") {
      const list = await client.request<FlootSecretRequestList>("GET", "/v1/secret-requests");
      show(list, () =>
        list.requests.length === 0
          ? "no secret requests"
          : list.requests
              .map((r) => `${r.id}  ${r.name}  ${r.status}  turn ${r.turnId}  ${r.prompt}`)
              .join("\n"),
      );
      return exitCodes.ok;
    }
    if (command === "secret" && sub === "submit") {
      const id = args[0];
      if (!id) throw new UsageError("secret submit needs <request>");
      const value = await readSecretValue(io);
      if (!value) throw new UsageError("the secret is empty");
      const answer = await client.request<SubmitSecretResponse>(
        "POST",
        `/v1/secret-requests/${enc(id)}/submit`,
        {
          value,
        },
      );
      show(answer, () =>
        answer.deliveredTo === "call"
          ? `submitted ${answer.request.name} to the waiting turn ${answer.request.turnId}`
          : `submitted ${answer.request.name}; its turn had ended, retry turn ${answer.retryTurnId} carries it`,
      );
      return exitCodes.ok;
    }
    throw new UsageError(`unknown command: ${[command, sub].filter(Boolean).join(" ")}`);
  } catch (error) {
    if (error instanceof UsageError) {
      warn(`floot: ${error.message}\n${usage}\n`);
      return exitCodes.usage;
    }
    if (error instanceof StateDirLockedError) {
      warn(`floot: ${error.message}; is a daemon already running?\n`);
      return exitCodes.stateDirLocked;
    }
    if (error instanceof ClientError || error instanceof TypeError) {
      warn(`floot: ${error.message}\n`);
      return exitCodes.failure;
    }
    warn(`floot: ${error instanceof Error ? error.message : String(error)}\n`);
    return exitCodes.failure;
  }
}

async function daemonCommand(io: CliIo, args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { state: { type: "string" }, port: { type: "string" } },
  });
  // Without --port the daemon prefers its previous port, so an open web UI finds it after a restart.
  const port = values.port === undefined ? undefined : Number(values.port);
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65_535)) {
    throw new UsageError("--port takes 0-65535");
  }
  const stateDir = resolveStateDir({ flag: values.state, env: io.env });
  // The journal holds prompts and transcripts of work: nothing the daemon creates is for other users.
  process.umask(0o077);
  const logger = jsonLogger(io.stderr);
  const daemon = await startDaemon({
    stateDir,
    ...(port !== undefined && { port }),
    env: io.env,
    logger,
    ...(io.uiDir !== undefined && { uiDir: io.uiDir }),
  });
  io.stderr.write(
    `floot daemon listening on http://127.0.0.1:${daemon.port} (state: ${stateDir}, generation ${daemon.generation})\n`,
  );
  return await new Promise<number>((resolve) => {
    // A Ctrl-C reaches the daemon twice under `npm start` (from the terminal and forwarded by the
    // script): one stop, and a repeated signal must not cut it short.
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      logger.log("info", "stopping", { signal });
      void daemon.stop().then(() => resolve(exitCodes.ok));
    };
    process.on("SIGTERM", stop);
    process.on("SIGINT", stop);
  });
}

async function followAndReport(
  client: FlootClient,
  turnId: string,
  from: number,
  json: boolean,
  io: CliIo,
): Promise<number> {
  let outcome: string | undefined;
  const progress = startProgress(io);
  try {
    await client.follow(turnId, from, (envelope) => {
      progress.bump();
      if (json) io.stdout.write(`${JSON.stringify(envelope)}\n`);
      else {
        const line = renderEvent(envelope);
        if (line !== undefined) io.stdout.write(`${line}\n`);
      }
      if (envelope.event.type === "terminal") outcome = envelope.event.outcome;
    });
  } finally {
    progress.stop();
  }
  return outcome === "completed" ? exitCodes.ok : exitCodes.failure;
}

/** On a TTY, a quiet spinner on stderr while nothing arrives; elsewhere nothing. */
function startProgress(io: CliIo): { bump(): void; stop(): void } {
  const tty = (io.stderr as NodeJS.WriteStream).isTTY === true;
  if (!tty) return { bump() {}, stop() {} };
  const frames = ["|", "/", "-", "\\"];
  let frame = 0;
  let last = Date.now();
  const timer = setInterval(() => {
    if (Date.now() - last < 1_000) return;
    io.stderr.write(
      `\r${frames[frame++ % frames.length]} waiting (${Math.round((Date.now() - last) / 1000)} s)`,
    );
  }, 250);
  return {
    bump() {
      if (Date.now() - last >= 1_000) io.stderr.write("\r\u001b[K");
      last = Date.now();
    },
    stop() {
      clearInterval(timer);
      io.stderr.write("\r\u001b[K");
    },
  };
}

export function renderEvent({ event }: TurnEventEnvelope): string | undefined {
  switch (event.type) {
    case "assistant.text":
      return event.text;
    case "reasoning":
      return `(thinking) ${event.text}`;
    case "tool.started":
      return `-> ${event.name} ${JSON.stringify(event.input)}`;
    case "tool.completed":
      return `<- ${event.toolId}${event.isError ? " (error)" : ""}`;
    case "secret.requested":
      return `secret requested: ${event.name} — ${event.prompt}\n   answer with: floot secret submit ${event.requestId}`;
    case "secret.resolved":
      return `secret request ${event.requestId} ${event.status}`;
    case "error":
      return `error: ${event.message}`;
    case "warning":
      return `warning: ${event.message}`;
    case "phase":
      return `[${event.phase}]`;
    case "terminal":
      return `[${event.outcome}]${event.error ? ` ${event.error.code}: ${event.error.message}` : ""}${
        event.continuedBy ? ` (continued by ${event.continuedBy})` : ""
      }`;
    default:
      return undefined;
  }
}

function describeTurn(turn: TurnRecord): string {
  const lines = [
    `${turn.id}  ${turn.phase}  session ${turn.sessionId}  #${turn.seq}  attempt ${turn.attempt}`,
    `  events ${turn.eventCount}${turn.effects.length ? `, effects ${turn.effects.join(",")}` : ""}`,
  ];
  if (turn.conversationId) lines.push(`  conversation ${turn.conversationId}`);
  if (turn.error) lines.push(`  ${turn.error.code}: ${turn.error.message}`);
  if (turn.retryOf) lines.push(`  retry of ${turn.retryOf}`);
  if (turn.replayOf) lines.push(`  replay of ${turn.replayOf}`);
  return lines.join("\n");
}

/** From stdin when piped; on a TTY a prompt with echo off. Never from argv. */
async function readSecretValue(io: CliIo): Promise<string> {
  const stdin = io.stdin as NodeJS.ReadStream;
  if (!stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const chunk of stdin) chunks.push(Buffer.from(chunk as Buffer));
    return Buffer.concat(chunks)
      .toString("utf8")
      .replace(/\r?\n$/, "");
  }
  io.stderr.write("secret (input hidden): ");
  stdin.setRawMode(true);
  stdin.resume();
  return await new Promise<string>((resolve, reject) => {
    let value = "";
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString("utf8")) {
        if (char === "\r" || char === "\n" || char === "\u0004") return done();
        if (char === "\u0003") return done(new Error("cancelled"));
        if (char === "\u007f") value = value.slice(0, -1);
        else value += char;
      }
    };
    const done = (error?: Error) => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      io.stderr.write("\n");
      if (error) reject(error);
      else resolve(value);
    };
    stdin.on("data", onData);
  });
}

function enc(id: string): string {
  return encodeURIComponent(id);
}

function resolveAbsolute(path: string): string {
  return path.startsWith("/") ? path : `${process.cwd()}/${path}`;
}
