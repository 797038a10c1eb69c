import { join } from "node:path";
import { type BackendAdapter, createClaudeAdapter, createCodexAdapter } from "@bridgeworks/backend-adapters";
import type { SessionRecord } from "@bridgeworks/protocol";
import type { TurnJournal } from "@bridgeworks/turn-journal";
import { backendCommandOf, installHintOf } from "./backend-status.js";
import { claudeReadsAsFlootDoes } from "./claude-rule-syntax.js";
import type { SessionStore } from "./session-store.js";

/** The rules a session's Claude turns get as `--allowedTools`: its own, then those "allow for this session" added. */
export function sessionRulesOf(sessionId: string, sessions: SessionStore, journal: TurnJournal): string[] {
  return [...(sessions.options(sessionId).allowedTools ?? []), ...journal.listSessionRules(sessionId)];
}

/**
 * The backend adapter a session's next turn runs through: its backend, options and rules. A rule
 * Claude Code would read otherwise than the daemon does stays out of `--allowedTools`: Claude Code then
 * asks, and the daemon's permission broker answers for it (claude-rule-syntax.ts).
 */
export function adapterFor(
  session: SessionRecord,
  rules: readonly string[],
  sessions: SessionStore,
  env: Readonly<Record<string, string | undefined>>,
): BackendAdapter {
  const options = sessions.options(session.id);
  const common = {
    baseEnv: env,
    ...(options.env !== undefined && { env: options.env }),
    ...(options.model !== undefined && { model: options.model }),
  };
  if (session.backend === "claude") {
    const allowedTools = rules.filter(claudeReadsAsFlootDoes);
    return createClaudeAdapter({
      ...common,
      command: backendCommandOf("claude", env),
      installHint: installHintOf("claude"),
      // Text deltas are journaled as they arrive, so a follower sees the turn stream, not jump.
      includePartialMessages: true,
      ...(allowedTools.length > 0 && { allowedTools }),
      ...(options.permissionMode !== undefined && {
        extraArgs: ["--permission-mode", options.permissionMode],
      }),
    });
  }
  // Codex's profile gives commands no writable temp dir: the session's scratch dir (see turn-confinement.ts).
  const confined = options.sandbox?.enabled !== false;
  return createCodexAdapter({
    ...common,
    ...(confined && { env: { TMPDIR: join(sessions.sessionDir(session.id), "tmp"), ...options.env } }),
    command: backendCommandOf("codex", env),
    installHint: installHintOf("codex"),
    ...(options.codexConfig !== undefined && { configOverrides: options.codexConfig }),
  });
}
