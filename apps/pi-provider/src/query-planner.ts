import { isFailedAssistant } from "./content.js";
import {
  type Checkpoint,
  type ClaudeSession,
  type ConversationMessage,
  checkpointOf,
  matches,
  type QueryState,
} from "./query-state.js";

/** What happened to a Pi session's Claude Code side. */
export type QueryEvent =
  /** Pi's `streamSimple` with this conversation; `settings` = model, system prompt and thinking level. */
  | {
      readonly type: "request";
      readonly messages: readonly ConversationMessage[];
      readonly settings: string;
    }
  /**
   * Pi selected a claude-code model, or a session with one started: have a query ready for the next
   * request with these `settings`, telling it nothing yet (no model request before a prompt).
   */
  | { readonly type: "prepare"; readonly settings: string }
  /** Pi moved to another provider: end the query, keep Claude's session to resume later. */
  | { readonly type: "suspend" }
  /** A Pi session served before this process started (`--continue`): its Claude session, as recorded. */
  | { readonly type: "restore"; readonly claude: ClaudeSession }
  /** Pi's stream ended with Claude's message; Pi stores it as the last message of `checkpoint`. */
  | { readonly type: "answered"; readonly checkpoint: Checkpoint }
  /** Claude Code reported the id of the session the running query works on. */
  | { readonly type: "session_reported"; readonly sessionId: string }
  /** Claude's turn ended well; `uuid` is its last chain entry (where a later query may resume). */
  | { readonly type: "turn_completed"; readonly uuid: string | undefined }
  /** Claude's turn failed (an API error, a stall, a refused delivery): its conversation left Pi's. */
  | { readonly type: "turn_failed" }
  /** Pi aborted the run. */
  | { readonly type: "aborted" }
  /** The running query's Claude Code ended on its own. */
  | { readonly type: "query_ended" }
  /** Claude Code no longer has the Claude session (its transcript is gone): nothing can resume it. */
  | { readonly type: "session_lost" }
  /** The Pi session ended. */
  | { readonly type: "dispose" };

export type QueryEventType = QueryEvent["type"];

/**
 * What the session does about an event. `continue` writes Pi's messages from `tellFrom` into the
 * running query (`midRound`: they come with tool results, so they go ahead of them). `resume`,
 * `resume-at` and `fresh` close any running query and start one (on Claude's session, rewound to the
 * chain entry `at`, or on a new session) telling it Pi's messages from `tellFrom` (for a `prepare`,
 * nothing yet: the next request continues from there). `close` ends the running query.
 */
export type QueryAction =
  | { readonly kind: "none" }
  | { readonly kind: "close" }
  | { readonly kind: "continue"; readonly tellFrom: number; readonly midRound: boolean }
  | { readonly kind: "resume"; readonly sessionId: string; readonly tellFrom: number }
  | { readonly kind: "resume-at"; readonly sessionId: string; readonly at: string; readonly tellFrom: number }
  | { readonly kind: "fresh"; readonly tellFrom: 0 };

export interface QueryStep {
  readonly state: QueryState;
  readonly action: QueryAction;
}

const none: QueryAction = { kind: "none" };

/** The query planner: pure, so every state and event pair is a table row in its test. */
export function planQuery(state: QueryState, event: QueryEvent): QueryStep {
  if (state.kind === "disposed") return { state, action: none };
  switch (event.type) {
    case "request":
      return planRequest(state, event.messages, event.settings);
    case "prepare":
      if (state.kind === "running" && state.settings === event.settings) return same(state);
      return prepare(state, event.settings);
    case "suspend":
      return state.kind === "running"
        ? { state: { kind: "idle", claude: state.claude, known: state.known }, action: { kind: "close" } }
        : same(state);
    case "restore":
      return state.kind === "none"
        ? { state: { kind: "diverged", claude: event.claude }, action: none }
        : same(state);
    case "answered":
      return state.kind === "running"
        ? { state: { ...state, known: event.checkpoint }, action: none }
        : same(state);
    case "session_reported":
      return state.kind === "running"
        ? { state: { ...state, claude: { ...state.claude, id: event.sessionId } }, action: none }
        : same(state);
    case "turn_completed":
      return state.kind === "running"
        ? {
            state: {
              ...state,
              claude: { ...state.claude, lastGood: { checkpoint: state.known, uuid: event.uuid } },
            },
            action: none,
          }
        : same(state);
    case "turn_failed":
    case "aborted":
      // Claude may hold part of a turn Pi's history will not have: stop it, rewind later.
      return state.kind === "running"
        ? { state: { kind: "diverged", claude: state.claude }, action: { kind: "close" } }
        : same(state);
    case "query_ended":
      return state.kind === "running"
        ? { state: { kind: "diverged", claude: state.claude }, action: none }
        : same(state);
    case "session_lost":
      return { state: { kind: "none" }, action: state.kind === "running" ? { kind: "close" } : none };
    case "dispose":
      return { state: { kind: "disposed" }, action: state.kind === "running" ? { kind: "close" } : none };
  }
}

function planRequest(
  state: Exclude<QueryState, { kind: "disposed" }>,
  messages: readonly ConversationMessage[],
  settings: string,
): QueryStep {
  switch (state.kind) {
    case "none":
      return start(undefined, undefined, messages, settings);
    case "diverged":
      return start(state.claude, undefined, messages, settings);
    case "idle":
      return start(state.claude, state.known, messages, settings);
    case "running": {
      if (matches(messages, state.known)) {
        // Mid tool round the query must go on (its handlers hold the results just delivered); a new
        // model, prompt or thinking level takes effect at the next user turn.
        const midRound = messages.at(-1)?.role === "toolResult";
        const asks = messages
          .slice(state.known.length)
          .some((message) => message.role !== "toolResult" && !isFailedAssistant(message));
        if ((midRound || state.settings === settings) && (asks || midRound)) {
          return {
            state: { ...state, known: checkpointOf(messages) },
            action: { kind: "continue", tellFrom: state.known.length, midRound },
          };
        }
      }
      return start(state.claude, state.known, messages, settings);
    }
  }
}

/** A new query: on Claude's session where Pi's history still holds what it holds, else fresh. */
function start(
  claude: ClaudeSession | undefined,
  known: Checkpoint | undefined,
  messages: readonly ConversationMessage[],
  settings: string,
): QueryStep {
  const running = (session: ClaudeSession): QueryState => ({
    kind: "running",
    claude: session,
    known: checkpointOf(messages),
    settings,
  });
  if (claude?.id !== undefined && known && matches(messages, known)) {
    return {
      state: running(claude),
      action: { kind: "resume", sessionId: claude.id, tellFrom: known.length },
    };
  }
  const lastGood = claude?.lastGood;
  if (claude?.id !== undefined && lastGood && matches(messages, lastGood.checkpoint)) {
    const tellFrom = lastGood.checkpoint.length;
    return {
      state: running(claude),
      action:
        lastGood.uuid !== undefined
          ? { kind: "resume-at", sessionId: claude.id, at: lastGood.uuid, tellFrom }
          : { kind: "resume", sessionId: claude.id, tellFrom },
    };
  }
  return { state: running({ id: undefined, lastGood: undefined }), action: { kind: "fresh", tellFrom: 0 } };
}

/**
 * A query started ahead of the next request: on Claude's session as it stands (the conversation it
 * holds is the checkpoint the next request continues from), else fresh. Pi's history is not checked
 * here; a request it does not continue restarts the query.
 */
function prepare(state: Exclude<QueryState, { kind: "disposed" }>, settings: string): QueryStep {
  const claude = state.kind === "none" ? undefined : state.claude;
  const known = state.kind === "running" || state.kind === "idle" ? state.known : undefined;
  const running = (session: ClaudeSession, holds: Checkpoint): QueryState => ({
    kind: "running",
    claude: session,
    known: holds,
    settings,
  });
  if (claude?.id !== undefined && known) {
    return {
      state: running(claude, known),
      action: { kind: "resume", sessionId: claude.id, tellFrom: known.length },
    };
  }
  const lastGood = claude?.lastGood;
  if (claude?.id !== undefined && lastGood) {
    const tellFrom = lastGood.checkpoint.length;
    return {
      state: running(claude, lastGood.checkpoint),
      action:
        lastGood.uuid !== undefined
          ? { kind: "resume-at", sessionId: claude.id, at: lastGood.uuid, tellFrom }
          : { kind: "resume", sessionId: claude.id, tellFrom },
    };
  }
  return {
    state: running({ id: undefined, lastGood: undefined }, checkpointOf([])),
    action: { kind: "fresh", tellFrom: 0 },
  };
}

function same(state: QueryState): QueryStep {
  return { state, action: none };
}
