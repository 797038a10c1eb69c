import { isAbsolute, resolve } from "node:path";
import { defineCommand, defineGroup, duration, UsageError } from "@bridgeworks/cli";
import {
  Backend,
  type FlootSession,
  type FlootSessionList,
  FlootSessionOptions,
  type SessionSandbox,
  type SessionSearchPage,
} from "@bridgeworks/protocol";
import type { FlootContext } from "./context.js";
import { connect, daemonOptions, pathId, show } from "./daemon-connection.js";
import { sessionEnv } from "./session-env.js";

const command = defineCommand<FlootContext>();

const nodeOwnsIt = "is Node's own option, which Node acts on even after the script's name";

const createCommand = command({
  name: "create",
  summary: "create a session on the Claude Code or Codex CLI; prints its id",
  options: {
    backend: { type: "string", choices: Backend.options, required: true, summary: "the CLI its turns run" },
    workspace: {
      type: "string",
      placeholder: "DIR",
      summary: "the agent's working folder (default <state>/sessions/<id>/workspace)",
      complete: "directory",
    },
    model: { type: "string", placeholder: "MODEL", summary: "the model the CLI is asked for" },
    env: {
      type: "string",
      placeholder: "NAME",
      multiple: true,
      summary: "pass NAME with its value from floot's own environment (never in argv; never shown again)",
    },
    "env-from": {
      type: "string",
      placeholder: "FILE",
      multiple: true,
      summary: "NAME=VALUE lines (dotenv-like) added to the CLI's environment",
      complete: "file",
    },
    "codex-config": {
      type: "string",
      placeholder: "KEY=TOML",
      multiple: true,
      summary: 'Codex only: a -c override, e.g. model_reasoning_effort="high"',
    },
    "allowed-tool": {
      type: "string",
      placeholder: "TOOL",
      multiple: true,
      summary: "Claude Code only: a tool allowed besides the daemon's own, e.g. Bash",
    },
    "permission-mode": {
      type: "string",
      placeholder: "MODE",
      choices: FlootSessionOptions.shape.permissionMode.unwrap().options,
      summary: "Claude Code only: its --permission-mode",
    },
    unconfined: {
      type: "boolean",
      summary:
        "run its commands without the CLI's sandbox (default: confined to the workspace, no network, the daemon out of reach)",
    },
    "allow-host": {
      type: "string",
      placeholder: "HOST",
      multiple: true,
      summary: "a host its sandboxed commands may reach: example.com, *.example.com, 127.0.0.1:3000",
    },
    writable: {
      type: "string",
      placeholder: "DIR",
      multiple: true,
      summary: "a dir its sandboxed commands may write besides the workspace",
      complete: "directory",
    },
    "permission-timeout": {
      type: "string",
      placeholder: "DURATION",
      parse: duration(FlootSessionOptions.shape.permissionTimeoutMs.unwrap().maxValue ?? 2_147_483_647),
      summary:
        "Claude Code only: deny a permission request nobody decided within DURATION (30s, 5m, 1h; default: wait)",
    },
    ...daemonOptions,
  },
  // Node itself acts on a --env-file it finds anywhere on its command line, even after the script's
  // name (Node 20.20, 22.23 and 24.22, measured): floot's own option has another name.
  retiredOptions: {
    "env-file": `is now --env-from FILE: --env-file ${nodeOwnsIt}`,
    "env-file-if-exists": `is not floot's, NAME=VALUE lines come with --env-from FILE: --env-file-if-exists ${nodeOwnsIt}`,
  },
  examples: [
    {
      command: "floot session create --backend claude --allowed-tool Bash --permission-mode dontAsk",
      summary: "a Claude Code session that may run shell commands",
    },
    {
      command: "floot session create --backend claude --permission-timeout 10m",
      summary: "a Claude Code session whose permission requests are denied after 10 minutes",
    },
    {
      command: "floot session create --backend claude --allow-host registry.npmjs.org",
      summary: "a confined session whose commands may reach the npm registry",
    },
    {
      command: "floot session create --backend codex --unconfined",
      summary: "a session whose commands run without a sandbox (where none can run)",
    },
    {
      command: "floot session create --backend codex --env GITHUB_TOKEN",
      summary: "a Codex session with the token from floot's own environment",
    },
    {
      command: "floot session create --backend claude --env-from ./session.env",
      summary: "a Claude Code session with NAME=VALUE lines from a file",
    },
  ],
  async run({ options }, context) {
    const env = sessionEnv(options.env, options["env-from"], context);
    const client = connect(context, options.state);
    const session = await client.request<FlootSession>("POST", "/v1/sessions", {
      backend: options.backend,
      ...(options.workspace !== undefined && { workspace: absolute(context.cwd, options.workspace) }),
      ...(options.model !== undefined && { model: options.model }),
      ...(Object.keys(env).length > 0 && { env }),
      ...(options["codex-config"].length > 0 && { codexConfig: options["codex-config"] }),
      ...(options["allowed-tool"].length > 0 && { allowedTools: options["allowed-tool"] }),
      ...(options["permission-mode"] !== undefined && { permissionMode: options["permission-mode"] }),
      ...(options["permission-timeout"] !== undefined && {
        permissionTimeoutMs: options["permission-timeout"],
      }),
      ...sandboxOf(options.unconfined, options["allow-host"], options.writable, context.cwd),
    });
    show(context, options.json, session, () => session.id);
  },
});

const listCommand = command({
  name: "list",
  summary: "list the sessions: id, backend, status, queued turns, workspace",
  options: daemonOptions,
  async run({ options }, context) {
    const list = await connect(context, options.state).request<FlootSessionList>("GET", "/v1/sessions");
    show(context, options.json, list, () =>
      list.sessions.length === 0
        ? "no sessions"
        : list.sessions
            .map(
              (s) =>
                `${s.id}  ${s.backend}  ${s.status}${s.queuedTurns ? ` (+${s.queuedTurns} queued)` : ""}  ${s.workspace}`,
            )
            .join("\n"),
    );
  },
});

const renameCommand = command({
  name: "rename",
  summary: "give a session a title (what the lists, the inbox and search show)",
  positionals: [
    { name: "session", summary: "the session's id" },
    {
      name: "title",
      summary: "the new title (its words are joined with spaces; one line, 1-200 characters)",
      variadic: true,
    },
  ],
  options: daemonOptions,
  async run({ args, options }, context) {
    const path = `/v1/sessions/${pathId(args.session)}/rename`;
    const session = await connect(context, options.state).request<FlootSession>("POST", path, {
      title: args.title.join(" "),
    });
    show(context, options.json, session, () => `${session.id}  ${session.title ?? ""}`);
  },
});

const searchCommand = command({
  name: "search",
  summary: "search the sessions' titles, prompts and turns' text; prints each hit's session and snippet",
  positionals: [
    {
      name: "query",
      summary:
        'FTS5 query syntax: words, "a phrase", prefix*, AND, OR, NOT (its words are joined with spaces)',
      variadic: true,
    },
  ],
  options: {
    limit: { type: "string", placeholder: "N", summary: "hits per page, 1-50 (default 20)" },
    cursor: { type: "string", placeholder: "CURSOR", summary: "the page after the one that printed it" },
    ...daemonOptions,
  },
  async run({ args, options }, context) {
    const params = new URLSearchParams({ q: args.query.join(" ") });
    if (options.limit !== undefined) params.set("limit", options.limit);
    if (options.cursor !== undefined) params.set("cursor", options.cursor);
    const page = await connect(context, options.state).request<SessionSearchPage>(
      "GET",
      `/v1/search?${params}`,
    );
    show(context, options.json, page, () =>
      [
        ...page.hits.map((hit) => {
          const where = hit.turnId === undefined ? hit.source : `${hit.source} of turn ${hit.turnId}`;
          const text = hit.snippet.map((part) => (part.match ? `[${part.text}]` : part.text)).join("");
          return `${hit.sessionId}  ${hit.title ?? ""}\n  ${where}: ${text.replace(/\s+/g, " ")}`;
        }),
        page.hits.length === 0 ? "no hits" : "",
        page.nextCursor === undefined ? "" : `more: --cursor ${page.nextCursor}`,
      ]
        .filter(Boolean)
        .join("\n"),
    );
  },
});

/** The session's sandbox as the flags say; nothing when the default (confined, no host, no extra path) holds. */
function sandboxOf(
  unconfined: boolean,
  hosts: readonly string[],
  writable: readonly string[],
  cwd: string,
): { sandbox?: SessionSandbox } {
  if (unconfined) {
    if (hosts.length > 0 || writable.length > 0)
      throw new UsageError(
        "--unconfined",
        "--allow-host and --writable configure the sandbox; an unconfined session has none",
      );
    return { sandbox: { enabled: false } };
  }
  if (hosts.length === 0 && writable.length === 0) return {};
  return {
    sandbox: {
      enabled: true,
      ...(hosts.length > 0 && { allowedHosts: [...hosts] }),
      ...(writable.length > 0 && { writablePaths: writable.map((path) => absolute(cwd, path)) }),
    },
  };
}

function absolute(cwd: string, path: string): string {
  return isAbsolute(path) ? path : resolve(cwd, path);
}

export const sessionGroup = defineGroup<FlootContext>(
  "session",
  "sessions: one agent, one workspace, its turns",
  [createCommand, listCommand, renameCommand, searchCommand],
);
