import type { SDKMessage } from "@anthropic-ai/claude-agent-sdk";
import type { ClaudeQuery, ClaudeQueryHandlers } from "./claude-query.js";
import { closeInBackground } from "./closing-queries.js";

const successorKey = Symbol.for("@bridgeworks/pi-provider/successor-query");

/**
 * A fresh Claude Code query started, when Pi replaces a session with a new one (`/new`), for the
 * session that comes next, with the ending session's settings: Pi starts the next session (and this
 * package's next instance) only after the old one shut down, and Claude Code takes seconds to start.
 */
export interface SuccessorQuery {
  /** `settingsOf` the inputs it was started with: only a session with the same settings adopts it. */
  readonly settings: string;
  readonly query: ClaudeQuery;
  readonly issued: Set<string>;
  /** What Claude Code sent before a session adopted it. */
  readonly early: SDKMessage[];
  /** Why it ended before a session adopted it. */
  ended: string | undefined;
}

type SuccessorStore = { [successorKey]?: SuccessorQuery };

/** The third documented global: the successor waits here between two extension instances. */
function take(): SuccessorQuery | undefined {
  const store = globalThis as SuccessorStore;
  const successor = store[successorKey];
  delete store[successorKey];
  return successor;
}

/** Starts the successor (ending one nobody adopted); it answers no tool call and tells nothing. */
export function offerSuccessor(
  settings: string,
  start: (handlers: ClaudeQueryHandlers, issued: Set<string>) => ClaudeQuery,
): void {
  discardSuccessor();
  const early: SDKMessage[] = [];
  const issued = new Set<string>();
  const successor: SuccessorQuery = {
    settings,
    issued,
    early,
    ended: undefined,
    query: start(
      {
        onToolCall: async () => ({
          content: [{ type: "text", text: "no Pi session has adopted this Claude Code yet" }],
          isError: true,
        }),
        onMessage: (message) => early.push(message),
        onEnded: (detail) => {
          successor.ended = detail;
        },
      },
      issued,
    ),
  };
  (globalThis as SuccessorStore)[successorKey] = successor;
}

/** The successor, when one with `settings` is still up; any other is ended. Empties the slot. */
export function claimSuccessor(settings: string): SuccessorQuery | undefined {
  const successor = take();
  if (!successor) return undefined;
  if (successor.settings === settings && successor.ended === undefined && !successor.query.isClosing)
    return successor;
  closeInBackground(successor.query.close());
  return undefined;
}

/** Ends a successor nobody adopted (the next session is on another provider, or Pi quits). */
export function discardSuccessor(): void {
  const successor = take();
  if (successor) closeInBackground(successor.query.close());
}
