import { z } from "zod";
import { ControlToken } from "./control.js";
import { SecretRequest } from "./secret.js";
import { Backend, JournalId, SessionRecord, TurnEventEnvelope, TurnInput, TurnRecord } from "./turn.js";

// The Floot daemon's HTTP API: request and response bodies, and `<state>/daemon.json`, the file the CLI
// finds the daemon through. Request bodies are strict: an unknown field is refused and named.

const Pid = z.number().int().positive();
const Port = z.number().int().min(1).max(65535);

/** `<state>/daemon.json` (0600), written once the daemon accepts requests. */
export const FlootDaemonFile = z.strictObject({
  port: Port,
  token: ControlToken,
  pid: Pid,
  /** The bridge generation this daemon start committed. */
  generation: z.number().int().positive(),
});
export type FlootDaemonFile = z.infer<typeof FlootDaemonFile>;

export const EnvVarName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "environment variable names are letters, digits and '_'");

/** A Codex `-c key=value` override; the value is TOML. */
export const CodexConfigOverride = z
  .string()
  .regex(/^[A-Za-z0-9_.-]+=[\s\S]+$/, "a Codex override is key=value (value in TOML)");

const AbsolutePath = z.string().startsWith("/", "must be an absolute path");

/** What a session adds to the user's own CLI configuration and login. */
export const FlootSessionOptions = z.strictObject({
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
});
export type FlootSessionOptions = z.infer<typeof FlootSessionOptions>;

export const CreateSessionRequest = FlootSessionOptions.extend({ backend: Backend });
export type CreateSessionRequest = z.infer<typeof CreateSessionRequest>;

/** A session as the API shows it: the journal's record plus its configuration (env names only). */
export const FlootSession = z.strictObject({
  ...SessionRecord.shape,
  workspace: AbsolutePath,
  model: z.string().optional(),
  envNames: z.array(EnvVarName),
  codexConfig: z.array(z.string()).optional(),
  allowedTools: z.array(z.string()).optional(),
  permissionMode: FlootSessionOptions.shape.permissionMode,
  /** The tools whose calls count as effect-free for this session (the default list unless overridden). */
  effectFreeTools: z.array(z.string()),
});
export type FlootSession = z.infer<typeof FlootSession>;

/** `GET /v1/sessions`: one page, newest first; `nextCursor` asks for the next (`?cursor=`). */
export const FlootSessionList = z.strictObject({
  sessions: z.array(FlootSession),
  nextCursor: z.string().optional(),
});
export type FlootSessionList = z.infer<typeof FlootSessionList>;

export const SendTurnRequest = TurnInput;
export type SendTurnRequest = z.infer<typeof SendTurnRequest>;

export const FlootTurnList = z.strictObject({ turns: z.array(TurnRecord) });
export type FlootTurnList = z.infer<typeof FlootTurnList>;

/** `GET /v1/turns/:id/events?from=N`: committed events from N on. */
export const FlootEventPage = z.strictObject({
  events: z.array(TurnEventEnvelope),
  nextIndex: z.number().int().nonnegative(),
});
export type FlootEventPage = z.infer<typeof FlootEventPage>;

export const FlootSecretRequestList = z.strictObject({ requests: z.array(SecretRequest) });
export type FlootSecretRequestList = z.infer<typeof FlootSecretRequestList>;

/** The only body that carries a secret; the daemon keeps the value in memory and never journals it. */
export const SubmitSecretRequest = z.strictObject({
  value: z.string().min(1, "value must not be empty").max(65_536, "value must be at most 64 KiB"),
});
export type SubmitSecretRequest = z.infer<typeof SubmitSecretRequest>;

export const SubmitSecretResponse = z.strictObject({
  request: SecretRequest,
  /** `call`: the waiting tool call got fresh credential material; `retry`: its turn had ended, a retry carries it. */
  deliveredTo: z.enum(["call", "retry"]),
  retryTurnId: JournalId.optional(),
});
export type SubmitSecretResponse = z.infer<typeof SubmitSecretResponse>;

export const FlootDaemonStatus = z.strictObject({
  pid: Pid,
  generation: z.number().int().positive(),
  stateDir: z.string(),
  startedAt: z.iso.datetime({ offset: true }),
});
export type FlootDaemonStatus = z.infer<typeof FlootDaemonStatus>;

/**
 * `POST /v1/ui/login-codes` (Bearer token only): a one-time code for `GET /login?code=…`, which trades it
 * for the web UI's session cookie. Single use, valid until `expiresAt`.
 */
export const FlootLoginCode = z.strictObject({
  code: z.string().regex(/^[A-Za-z0-9_-]{43}$/, "a login code is 32 random bytes, base64url"),
  expiresAt: z.iso.datetime({ offset: true }),
});
export type FlootLoginCode = z.infer<typeof FlootLoginCode>;

/** A session with its current turn (the active one, else the latest), as the web UI's list shows it. */
export const FlootSessionSummary = z.strictObject({
  session: FlootSession,
  currentTurn: TurnRecord.optional(),
});
export type FlootSessionSummary = z.infer<typeof FlootSessionSummary>;

/**
 * `GET /v1/overview?limit=&cursor=&status=&q=`: one page of the web UI's sessions list (newest first,
 * keyset), with the open secret requests of those sessions; `nextCursor` asks for the next page.
 */
export const FlootOverview = z.strictObject({
  status: FlootDaemonStatus,
  sessions: z.array(FlootSessionSummary),
  secretRequests: z.array(SecretRequest),
  nextCursor: z.string().optional(),
});
export type FlootOverview = z.infer<typeof FlootOverview>;

/**
 * `GET /v1/changes` (Server-Sent Events, `event: session`): a session as a list shows it, sent after
 * each commit that changed it (created, stopped, a turn submitted or changing phase, a secret request).
 */
export const FlootSessionChange = z.strictObject({
  summary: FlootSessionSummary,
  secretRequests: z.array(SecretRequest),
});
export type FlootSessionChange = z.infer<typeof FlootSessionChange>;

export const FlootApiErrorCode = z.enum([
  "bad_request",
  "invalid_body",
  "unauthorized",
  "forbidden",
  "not_found",
  "method_not_allowed",
  "payload_too_large",
  "unsupported_media_type",
  "conflict",
  "internal",
]);
export type FlootApiErrorCode = z.infer<typeof FlootApiErrorCode>;

export const FlootApiError = z.strictObject({
  error: z.strictObject({
    code: z.string().min(1),
    message: z.string(),
    /** The offending request field, dotted (`env.1PASSWORD`), when one is to blame. */
    field: z.string().optional(),
  }),
});
export type FlootApiError = z.infer<typeof FlootApiError>;
