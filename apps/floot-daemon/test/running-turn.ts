import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openJournal, type TurnJournal } from "@bridgeworks/turn-journal";
import { PermissionBroker } from "../src/daemon/permission-broker.js";
import type { TurnContext } from "../src/daemon/secret-broker.js";

export interface RunningTurn {
  dir: string;
  journal: TurnJournal;
  /** The permission broker over `journal`, with `rules` as the session's allow rules. */
  permissions: PermissionBroker;
  context: TurnContext;
  /** Closes the journal and removes the temp dir. */
  close(): void;
}

/** A real journal (SQLite in a temp dir) holding one session whose turn is running. */
export function runningTurn(prefix: string, rules: string[] = []): RunningTurn {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const journal = openJournal({ path: join(dir, "journal.db") });
  const session = journal.sessions.createSession({ backend: "claude" });
  const turn = journal.turns.submitTurn(session.id, { prompt: "go" });
  journal.turns.transition(turn.id, { phase: "spawning" });
  journal.turns.transition(turn.id, { phase: "running", process: { pid: 4242, startTime: "1" } });
  const permissions = new PermissionBroker({
    journal,
    rulesOf: () => rules,
    timeoutOf: () => undefined,
    startRetry: () => {},
  });
  return {
    dir,
    journal,
    permissions,
    context: { sessionId: session.id, turnId: turn.id },
    close() {
      journal.maintenance.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
