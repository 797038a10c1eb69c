import { appendFileSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import type { ClaudeBridgeDiagnosticRecord } from "@bridgeworks/protocol";

export const DIAG_LOG_VARIABLE = "CLAUDE_BRIDGE_DIAG_LOG";

/** `CLAUDE_BRIDGE_DIAG_LOG`, else `claude-bridge-diag.log` in Pi's agent dir. */
export function diagLogPath(env: Readonly<Record<string, string | undefined>>): string {
  const explicit = env[DIAG_LOG_VARIABLE]?.trim();
  if (explicit) return explicit;
  const agentDir = env.PI_CODING_AGENT_DIR?.trim() || join(env.HOME?.trim() || homedir(), ".pi", "agent");
  return join(agentDir, "claude-bridge-diag.log");
}

export type DiagWriter = (record: ClaudeBridgeDiagnosticRecord) => void;

/**
 * One JSON object per line, appended synchronously so a record is on disk before the next ledger
 * step (and before Pi can exit). Records carry ids and counts, never prompts, results or env.
 * A failing disk never breaks delivery: the error goes to stderr once.
 */
export function createDiagLog(path: string, onError: (error: unknown) => void): DiagWriter {
  let dirReady = false;
  let failed = false;
  return (record) => {
    try {
      if (!dirReady) {
        mkdirSync(dirname(path), { recursive: true });
        dirReady = true;
      }
      appendFileSync(path, `${JSON.stringify(record)}\n`);
    } catch (error) {
      if (!failed) onError(error);
      failed = true;
    }
  };
}
