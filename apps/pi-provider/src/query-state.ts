import type { PiMessage, SystemMessage } from "./pi-types.js";

export type ConversationMessage = Exclude<PiMessage, SystemMessage>;

/** How far Claude's conversation matches Pi's: the first `length` messages, the last one recognised. */
export interface Checkpoint {
  readonly length: number;
  readonly fingerprint: string | undefined;
}

/** A completed Claude turn: Pi's checkpoint after it and the uuid of Claude's last chain entry then. */
export interface Anchor {
  readonly checkpoint: Checkpoint;
  readonly uuid: string | undefined;
}

/** The Claude session a query works on: its id once Claude Code reported it, its last completed turn. */
export interface ClaudeSession {
  readonly id: string | undefined;
  readonly lastGood: Anchor | undefined;
}

/**
 * What one Pi session's Claude Code side is, as data (the planner's state):
 * - `none`: no Claude session yet; the next request starts a fresh one.
 * - `running`: a query runs whose conversation holds exactly Pi's first `known.length` messages, with
 *   `settings` (model, system prompt, thinking level, tools) fixed at its start.
 * - `idle`: no query runs (Pi moved to another provider); Claude's session still holds exactly Pi's
 *   first `known.length` messages and can be resumed as it is.
 * - `diverged`: no query runs and Claude's session may hold a turn Pi's history does not (a failed or
 *   aborted one, or whatever followed a restored record); only a rewind to `lastGood`, or a fresh
 *   session, matches Pi again.
 * - `disposed`: the Pi session ended; nothing starts again.
 */
export type QueryState =
  | { readonly kind: "none" }
  | {
      readonly kind: "running";
      readonly claude: ClaudeSession;
      readonly known: Checkpoint;
      readonly settings: string;
    }
  | { readonly kind: "idle"; readonly claude: ClaudeSession; readonly known: Checkpoint }
  | { readonly kind: "diverged"; readonly claude: ClaudeSession }
  | { readonly kind: "disposed" };

export type QueryStateKind = QueryState["kind"];

export function checkpointOf(messages: readonly ConversationMessage[]): Checkpoint {
  const last = messages.at(-1);
  return { length: messages.length, fingerprint: last ? fingerprintOf(last) : undefined };
}

/** Whether `messages` begin with the conversation `checkpoint` recognises. */
export function matches(messages: readonly ConversationMessage[], checkpoint: Checkpoint): boolean {
  if (messages.length < checkpoint.length) return false;
  if (checkpoint.length === 0) return true;
  const anchor = messages[checkpoint.length - 1];
  return anchor !== undefined && fingerprintOf(anchor) === checkpoint.fingerprint;
}

/** Pi rebuilds the context array for every call; a message is recognised by role, time and id. */
export function fingerprintOf(message: ConversationMessage): string {
  return `${message.role}|${message.timestamp}|${message.role === "toolResult" ? message.toolCallId : ""}`;
}
