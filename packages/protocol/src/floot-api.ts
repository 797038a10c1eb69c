import { z } from "zod";
import { SandboxAvailability, SessionSandbox } from "./confinement.js";
import { ControlToken } from "./control.js";
import { lazySchema } from "./lazy-schema.js";
import { PermissionRequest } from "./permission.js";
import { SecretRequest } from "./secret.js";
import {
  Backend,
  CliLostDecision,
  JournalId,
  SessionRecord,
  TerminalTurnPhase,
  TurnEventEnvelope,
  TurnInput,
  TurnRecord,
} from "./turn.js";

// The Floot daemon's HTTP API: request and response bodies, and `<state>/daemon.json`, the file the CLI
// finds the daemon through. Request bodies are strict: an unknown field is refused and named.

const Pid = lazySchema(() => z.number().int().positive());
const Port = lazySchema(() => z.number().int().min(1).max(65535));

/** `<state>/daemon.json` (0600), written once the daemon accepts requests. */
export const FlootDaemonFile = lazySchema(() =>
  z.strictObject({
    port: Port,
    token: ControlToken,
    pid: Pid,
    /** The bridge generation this daemon start committed. */
    generation: z.number().int().positive(),
    /**
     * The API's unix socket (0600, in a 0700 runtime dir of the daemon's user): the only way the CLI
     * reaches the daemon. `port` serves the browser; the CLI never sends anything to it.
     */
    socket: z.string().startsWith("/", "the API socket's path is absolute"),
  }),
);
export type FlootDaemonFile = z.infer<typeof FlootDaemonFile>;

export const EnvVarName = lazySchema(() =>
  z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "environment variable names are letters, digits and '_'"),
);

/** A Codex `-c key=value` override; the value is TOML. */
export const CodexConfigOverride = lazySchema(() =>
  z.string().regex(/^[A-Za-z0-9_.-]+=[\s\S]+$/, "a Codex override is key=value (value in TOML)"),
);

const AbsolutePath = lazySchema(() => z.string().startsWith("/", "must be an absolute path"));

/** What a session adds to the user's own CLI configuration and login. */
export const FlootSessionOptions = lazySchema(() =>
  z.strictObject({
    /** The agent's working folder; default `<state>/sessions/<id>/workspace`, created at the first turn. */
    workspace: AbsolutePath.optional(),
    model: z.string().min(1, "model must not be empty").optional(),
    /** Added to the CLI's environment. Values are never returned by the API. */
    env: z.record(EnvVarName, z.string()).optional(),
    /** Codex only: `-c` overrides. */
    codexConfig: z.array(CodexConfigOverride).optional(),
    /** Claude Code only: tools allowed besides the daemon's own (e.g. `Bash`). */
    allowedTools: z.array(z.string().regex(/^[A-Za-z0-9_*():., -]+$/, "not a tool name")).optional(),
    /** Claude Code only: `--permission-mode`. */
    permissionMode: z.enum(["default", "acceptEdits", "dontAsk", "plan", "bypassPermissions"]).optional(),
    /**
     * Tools (as the CLI's pre-tool hook names them) whose calls have no effect, so a turn that called
     * only these can be replayed after a restart. Replaces the backend's default list (Claude Code:
     * `Read`, `Grep`, `Glob`, `LS` and the daemon's MCP tools marked `readOnlyHint`).
     */
    effectFreeTools: z.array(z.string().regex(/^[A-Za-z0-9_.:-]{1,128}$/, "not a tool name")).optional(),
    /**
     * Claude Code only: how long a permission request waits for a human before the call is denied;
     * unset waits indefinitely (bounded only by the tool timeout, `FLOOT_TOOL_TIMEOUT_MS`).
     */
    permissionTimeoutMs: z.number().int().positive().max(2_147_483_647).optional(),
    /** The OS sandbox its turns' commands run in; absent: on, no network, the workspace writable. */
    sandbox: SessionSandbox.optional(),
  }),
);
export type FlootSessionOptions = z.infer<typeof FlootSessionOptions>;

const claudeOnlyOptions = ["allowedTools", "permissionMode", "permissionTimeoutMs"] as const;

/**
 * A Codex session's approvals are explicit at creation: `codex exec` 0.171 cannot route an approval
 * request to anyone (see the floot-daemon's docs/contract.md), so Claude Code's permission options are refused for it.
 */
export const CreateSessionRequest = lazySchema(() =>
  FlootSessionOptions.extend({ backend: Backend }).superRefine((request, context) => {
    if (request.backend !== "codex") return;
    for (const field of claudeOnlyOptions) {
      if (request[field] !== undefined)
        context.addIssue({
          code: "custom",
          path: [field],
          message: `${field} is for Claude Code sessions; a Codex session's policy is its --codex-config (sandbox_mode), and codex exec never asks`,
        });
    }
  }),
);
export type CreateSessionRequest = z.infer<typeof CreateSessionRequest>;

/** A session as the API shows it: the journal's record plus its configuration (env names only). */
export const FlootSession = lazySchema(() =>
  z.strictObject({
    ...SessionRecord.shape,
    workspace: AbsolutePath,
    model: z.string().optional(),
    envNames: z.array(EnvVarName),
    codexConfig: z.array(z.string()).optional(),
    allowedTools: z.array(z.string()).optional(),
    permissionMode: FlootSessionOptions.shape.permissionMode,
    permissionTimeoutMs: FlootSessionOptions.shape.permissionTimeoutMs,
    /** The tools whose calls count as effect-free for this session (the default list unless overridden). */
    effectFreeTools: z.array(z.string()),
    /** The sandbox in force (the default filled in). */
    sandbox: SessionSandbox,
  }),
);
export type FlootSession = z.infer<typeof FlootSession>;

/** `GET /v1/sessions`: one page, newest first; `nextCursor` asks for the next (`?cursor=`). */
export const FlootSessionList = lazySchema(() =>
  z.strictObject({
    sessions: z.array(FlootSession),
    nextCursor: z.string().optional(),
  }),
);
export type FlootSessionList = z.infer<typeof FlootSessionList>;

export const SendTurnRequest = TurnInput;
export type SendTurnRequest = z.infer<typeof SendTurnRequest>;

export const FlootTurnList = lazySchema(() => z.strictObject({ turns: z.array(TurnRecord) }));
export type FlootTurnList = z.infer<typeof FlootTurnList>;

/** `GET /v1/turns/:id/events?from=N`: committed events from N on. */
export const FlootEventPage = lazySchema(() =>
  z.strictObject({
    events: z.array(TurnEventEnvelope),
    nextIndex: z.number().int().nonnegative(),
  }),
);
export type FlootEventPage = z.infer<typeof FlootEventPage>;

export const FlootSecretRequestList = lazySchema(() => z.strictObject({ requests: z.array(SecretRequest) }));
export type FlootSecretRequestList = z.infer<typeof FlootSecretRequestList>;

/** The only body that carries a secret; the daemon keeps the value in memory and never journals it. */
export const SubmitSecretRequest = lazySchema(() =>
  z.strictObject({
    value: z.string().min(1, "value must not be empty").max(65_536, "value must be at most 64 KiB"),
  }),
);
export type SubmitSecretRequest = z.infer<typeof SubmitSecretRequest>;

export const SubmitSecretResponse = lazySchema(() =>
  z.strictObject({
    request: SecretRequest,
    /** `call`: the waiting tool call got fresh credential material; `retry`: its turn had ended, a retry carries it. */
    deliveredTo: z.enum(["call", "retry"]),
    retryTurnId: JournalId.optional(),
  }),
);
export type SubmitSecretResponse = z.infer<typeof SubmitSecretResponse>;

/**
 * The unfinished turns a start found: kept running by the keeper (adopted, same CLI), replayed (no
 * effect yet), continued on their conversation (their CLI was gone, every call it started finished),
 * waiting on a person (a call may have run halfway), or marked interrupted.
 */
export const FlootStartTurns = lazySchema(() =>
  z.strictObject({
    keptRunning: z.number().int().nonnegative(),
    replayed: z.number().int().nonnegative(),
    continued: z.number().int().nonnegative(),
    waitingOnYou: z.number().int().nonnegative(),
    interrupted: z.number().int().nonnegative(),
  }),
);
export type FlootStartTurns = z.infer<typeof FlootStartTurns>;

export const FlootDaemonStatus = lazySchema(() =>
  z.strictObject({
    pid: Pid,
    generation: z.number().int().positive(),
    stateDir: z.string(),
    startedAt: z.iso.datetime({ offset: true }),
    /** The TCP port the web UI is served on (`floot open` asks for it over the socket). */
    port: Port.optional(),
    /** What this start found of the turns an earlier daemon left unfinished (a page says it once). */
    atStart: FlootStartTurns,
  }),
);
export type FlootDaemonStatus = z.infer<typeof FlootDaemonStatus>;

/**
 * `POST /v1/ui/login-codes` (Bearer token only): a one-time code for the sign-in link
 * `http://127.0.0.1:<port>/#login=<code>` (a URL fragment: the browser never sends it to a server). The
 * page trades it with `POST /ui/sign-in`. Single use, valid until `expiresAt`.
 */
export const FlootLoginCode = lazySchema(() =>
  z.strictObject({
    code: z.string().regex(/^[A-Za-z0-9_-]{43}$/, "a login code is 32 random bytes, base64url"),
    expiresAt: z.iso.datetime({ offset: true }),
  }),
);
export type FlootLoginCode = z.infer<typeof FlootLoginCode>;

/** A session with its current turn (the active one, else the latest), as the web UI's list shows it. */
export const FlootSessionSummary = lazySchema(() =>
  z.strictObject({
    session: FlootSession,
    currentTurn: TurnRecord.optional(),
  }),
);
export type FlootSessionSummary = z.infer<typeof FlootSessionSummary>;

/**
 * `GET /v1/overview?limit=&cursor=&status=&q=`: one page of the web UI's sessions list (newest first,
 * keyset), with the open secret and permission requests of those sessions (what waits on a human);
 * `nextCursor` asks for the next page. `?waiting=true` (with `limit` and `cursor` only): the sessions
 * waiting on a person instead, the longest waiting first (by their oldest open request).
 */
export const FlootOverview = lazySchema(() =>
  z.strictObject({
    status: FlootDaemonStatus,
    sessions: z.array(FlootSessionSummary),
    secretRequests: z.array(SecretRequest),
    permissionRequests: z.array(PermissionRequest),
    nextCursor: z.string().optional(),
  }),
);
export type FlootOverview = z.infer<typeof FlootOverview>;

/**
 * `GET /v1/changes` (Server-Sent Events, `event: session`): a session as a list shows it, sent after
 * each commit that changed it (created, stopped, a turn submitted or changing phase, a secret or
 * permission request asked or answered), with its open requests.
 */
export const FlootSessionChange = lazySchema(() =>
  z.strictObject({
    summary: FlootSessionSummary,
    secretRequests: z.array(SecretRequest),
    permissionRequests: z.array(PermissionRequest),
  }),
);
export type FlootSessionChange = z.infer<typeof FlootSessionChange>;

/**
 * A moment a person may want to hear of: a turn asks for an approval (`request`: the permission
 * request) or a secret (`request`: the secret request), or a turn ended (`outcome`). Sent once, when it
 * is committed: on `GET /v1/changes` as `event: moment`, and as one line on the stdin of the daemon's
 * `--notify-command`. `summary` is one line; `url` opens the session in the web UI.
 */
export const FlootMoment = lazySchema(() =>
  z.strictObject({
    /** `decision`: a turn ended waiting on a person, a call of it may have run (`may_have_run`). */
    kind: z.enum(["approval", "secret", "decision", "turn_ended"]),
    session: JournalId,
    turn: JournalId,
    request: JournalId.optional(),
    outcome: TerminalTurnPhase.optional(),
    summary: z.string(),
    url: z.string(),
    at: z.iso.datetime({ offset: true }),
  }),
);
export type FlootMoment = z.infer<typeof FlootMoment>;

export const FlootApiErrorCode = lazySchema(() =>
  z.enum([
    "bad_request",
    "invalid_body",
    "unauthorized",
    "forbidden",
    "not_found",
    "method_not_allowed",
    "payload_too_large",
    "unsupported_media_type",
    "conflict",
    "sandbox_unavailable",
    "sign_in_link_used",
    "sign_in_link_expired",
    "sign_in_link_unknown",
    "internal",
  ]),
);
export type FlootApiErrorCode = z.infer<typeof FlootApiErrorCode>;

export const FlootApiError = lazySchema(() =>
  z.strictObject({
    error: z.strictObject({
      code: z.string().min(1),
      message: z.string(),
      /** The offending request field, dotted (`env.1PASSWORD`), when one is to blame. */
      field: z.string().optional(),
    }),
  }),
);
export type FlootApiError = z.infer<typeof FlootApiError>;

/**
 * One backend CLI as the daemon finds it: where (`path`), which `version` (its `--version` line), and
 * whether it looks signed in: an API key variable set (`via: "env"`, the variable's name) or a
 * credentials file present (`via: "credentials_file"`, its path). Never a value.
 */
export const FlootBackendStatus = lazySchema(() =>
  z.strictObject({
    backend: Backend,
    command: z.string(),
    installed: z.boolean(),
    path: z.string().optional(),
    version: z.string().optional(),
    signedIn: z.strictObject({
      likely: z.boolean(),
      via: z.enum(["env", "credentials_file", "none"]),
      /** The variable's name or the file's path; what was looked for when `via` is `none`. */
      detail: z.string(),
    }),
    /** How to install it (and point the daemon at it). */
    installHint: z.string(),
    /** Whether its sandbox can confine a session's commands here (sessions are confined by default). */
    sandbox: SandboxAvailability,
  }),
);
export type FlootBackendStatus = z.infer<typeof FlootBackendStatus>;

/** `GET /v1/backends`. */
export const FlootBackendList = lazySchema(() => z.strictObject({ backends: z.array(FlootBackendStatus) }));
export type FlootBackendList = z.infer<typeof FlootBackendList>;

/** `POST /v1/turns/:id/cli-lost-decision`: a person's choice for a turn waiting with `may_have_run`. */
export const CliLostDecisionRequest = lazySchema(() => z.strictObject({ decision: CliLostDecision }));
export type CliLostDecisionRequest = z.infer<typeof CliLostDecisionRequest>;

/** Its answer: the decided turn, and the turn that carries it on (`run_again`, `skip`). */
export const FlootCliLostDecided = lazySchema(() =>
  z.strictObject({ turn: TurnRecord, continuation: TurnRecord.optional() }),
);
export type FlootCliLostDecided = z.infer<typeof FlootCliLostDecided>;
