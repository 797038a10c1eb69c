import { ChangeFeed } from "./change-feed.js";
import { JournalConnection } from "./connection.js";
import { EventBuffer } from "./event-buffer.js";
import { JournalEvents } from "./events.js";
import { JournalGate } from "./gate.js";
import type { JournalCore } from "./journal-area.js";
import { JournalMaintenance } from "./maintenance.js";
import { defaultBatchPolicy, type JournalOptions } from "./options.js";
import { JournalPermissions } from "./permissions.js";
import { JournalSecrets } from "./secrets.js";
import { JournalSessions } from "./sessions.js";
import { TurnWrites } from "./turn-writes.js";
import { JournalTurns } from "./turns.js";

/**
 * The durable record of Floot sessions, turns, their normalized events, effects, the bridge generation,
 * secret-request metadata and permission requests, by area. The areas share one SQLite connection, one
 * transaction helper, one change feed and one write path for events; a caller is handed only the areas
 * (or the methods of them) it uses. Every method is synchronous but `sync` and
 * `listSessionPageInSteps`, and every state change is one SQLite transaction; see README.md.
 */
export interface TurnJournal {
  /** The SQLite file. */
  readonly path: string;
  readonly sessions: JournalSessions;
  readonly turns: JournalTurns;
  readonly events: JournalEvents;
  /** The pre-tool gate's admissions. */
  readonly gate: JournalGate;
  readonly secrets: JournalSecrets;
  readonly permissions: JournalPermissions;
  readonly maintenance: JournalMaintenance;
}

export type { JournalCore } from "./journal-area.js";

export function openJournal(options: JournalOptions): TurnJournal {
  const core = openJournalCore(options);
  try {
    return journalAreas(core);
  } catch (error) {
    core.connection.close();
    throw error;
  }
}

/** Opens the connection (migrating the file) and builds the write path and the stream buffer on it. */
export function openJournalCore(options: JournalOptions): JournalCore {
  const onError =
    options.onError ??
    ((error: unknown) =>
      queueMicrotask(() => {
        throw error;
      }));
  const connection = new JournalConnection(options, new ChangeFeed(onError), onError);
  const writes = new TurnWrites(connection, options.transform);
  const buffer = new EventBuffer(connection, writes, {
    batch: { ...defaultBatchPolicy, ...options.batch },
    streamCut: options.transform?.streamCut?.bind(options.transform),
    onError,
  });
  return { connection, writes, buffer };
}

/** The areas of a journal over one core. */
export function journalAreas(core: JournalCore): TurnJournal {
  return {
    path: core.connection.path,
    sessions: new JournalSessions(core),
    turns: new JournalTurns(core),
    events: new JournalEvents(core),
    gate: new JournalGate(core),
    secrets: new JournalSecrets(core),
    permissions: new JournalPermissions(core),
    maintenance: new JournalMaintenance(core),
  };
}
