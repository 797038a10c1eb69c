import type { ClaudeSessionRecord } from "@bridgeworks/protocol";
import type { ClaudeSession, QueryState } from "./query-state.js";

/**
 * What a Pi session records of its Claude session (in Pi's session file) so a later Pi process
 * resumes it: the last completed turn. Nothing before Claude Code reported a session id.
 */
export function sessionRecordOf(state: QueryState): ClaudeSessionRecord | undefined {
  const claude = state.kind === "none" || state.kind === "disposed" ? undefined : state.claude;
  if (claude?.id === undefined || claude.lastGood === undefined) return undefined;
  const { checkpoint, uuid } = claude.lastGood;
  return {
    claudeSessionId: claude.id,
    checkpoint: { length: checkpoint.length, fingerprint: checkpoint.fingerprint ?? null },
    chainUuid: uuid ?? null,
  };
}

/** The Claude session a record names, to be resumed at its last completed turn. */
export function claudeSessionOf(record: ClaudeSessionRecord): ClaudeSession {
  return {
    id: record.claudeSessionId,
    lastGood: {
      checkpoint: {
        length: record.checkpoint.length,
        fingerprint: record.checkpoint.fingerprint ?? undefined,
      },
      uuid: record.chainUuid ?? undefined,
    },
  };
}
