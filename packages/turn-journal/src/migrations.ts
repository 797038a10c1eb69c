import type { Database } from "better-sqlite3";
import { JournalError } from "./errors.js";

interface Migration {
  version: number;
  sql: string;
}

const allPhases =
  "('queued', 'accepted', 'spawning', 'running', 'awaiting_secret', 'completed', 'failed', 'cancelled', 'interrupted')";
const activePhases = "('accepted', 'spawning', 'running', 'awaiting_secret')";
const terminalPhaseNames = ["completed", "failed", "cancelled", "interrupted"];
const terminalPhases = `(${terminalPhaseNames.map((phase) => `'${phase}'`).join(", ")})`;
/** `column IN terminalPhases` as equalities: SQLite codes a constant IN list of 3+ values as an index. */
const isTerminal = (column: string) =>
  terminalPhaseNames.map((phase) => `${column} = '${phase}'`).join(" OR ");
const liveCliPhases = "('spawning', 'running', 'awaiting_secret')";

// Migration 10's: part of a released migration once released, never edited (a change is a new version).
/** The event types whose text a search finds (never `assistant.delta`: its text comes again whole). */
const searchedEventTypes = [
  "assistant.text",
  "reasoning",
  "tool.started",
  "tool.completed",
  "error",
  "warning",
];
/**
 * The searchable text of an event row, in SQL over its `type` and `payload` columns (`row` is `NEW` in a
 * trigger): its text, message, or the tool's name and the string leaves of its input or output. The
 * payload is the event as journaled, masked already.
 */
const eventSearchText = (row: string) => `CASE ${row}.type
    WHEN 'assistant.text' THEN json_extract(${row}.payload, '$.text')
    WHEN 'reasoning' THEN json_extract(${row}.payload, '$.text')
    WHEN 'error' THEN json_extract(${row}.payload, '$.message')
    WHEN 'warning' THEN json_extract(${row}.payload, '$.message')
    WHEN 'tool.started' THEN json_extract(${row}.payload, '$.name') || ' ' || coalesce(
      (SELECT group_concat(j.value, ' ') FROM json_tree(${row}.payload, '$.input') AS j WHERE j.type = 'text'), '')
    WHEN 'tool.completed' THEN
      (SELECT group_concat(j.value, ' ') FROM json_tree(${row}.payload, '$.output') AS j WHERE j.type = 'text')
  END`;
const isSearchedEvent = (row: string) =>
  searchedEventTypes.map((type) => `${row}.type = '${type}'`).join(" OR ");

/** Append-only: a released migration is never edited, a change is a new version. */
const migrations: readonly Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE journal_meta (
        key TEXT PRIMARY KEY,
        value INTEGER NOT NULL
      ) STRICT;
      INSERT INTO journal_meta (key, value) VALUES ('bridge_generation', 0);

      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        backend TEXT NOT NULL CHECK (backend IN ('claude', 'codex')),
        conversation_id TEXT,
        created_at INTEGER NOT NULL,
        stopped_at INTEGER
      ) STRICT;

      CREATE TABLE turns (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions (id),
        seq INTEGER NOT NULL,
        input TEXT NOT NULL,
        phase TEXT NOT NULL CHECK (phase IN ${allPhases}),
        attempt INTEGER NOT NULL CHECK (attempt >= 1),
        replay_of TEXT REFERENCES turns (id),
        retry_of TEXT REFERENCES turns (id),
        effects INTEGER NOT NULL DEFAULT 0,
        bridge_generation INTEGER NOT NULL,
        conversation_id TEXT,
        pid INTEGER,
        start_time TEXT,
        error_code TEXT,
        error_message TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        ended_at INTEGER,
        UNIQUE (session_id, seq)
      ) STRICT;
      -- The store itself guarantees one active turn per session.
      CREATE UNIQUE INDEX turns_one_active_per_session ON turns (session_id) WHERE phase IN ${activePhases};
      CREATE INDEX turns_queued ON turns (session_id, seq) WHERE phase = 'queued';
      CREATE INDEX turns_unfinished ON turns (phase) WHERE phase NOT IN ${terminalPhases};
      -- A turn is replayed at most once and retried at most once: retries are idempotent.
      CREATE UNIQUE INDEX turns_replay_of ON turns (replay_of) WHERE replay_of IS NOT NULL;
      CREATE UNIQUE INDEX turns_retry_of ON turns (retry_of) WHERE retry_of IS NOT NULL;

      CREATE TRIGGER turns_terminal_is_final BEFORE UPDATE OF phase ON turns
        WHEN OLD.phase IN ${terminalPhases} AND NEW.phase <> OLD.phase
        BEGIN SELECT RAISE(ABORT, 'turns: a terminal phase is final'); END;

      CREATE TABLE turn_events (
        turn_id TEXT NOT NULL REFERENCES turns (id),
        idx INTEGER NOT NULL,
        at INTEGER NOT NULL,
        type TEXT NOT NULL,
        payload TEXT NOT NULL,
        PRIMARY KEY (turn_id, idx)
      ) STRICT, WITHOUT ROWID;

      CREATE TRIGGER turn_events_contiguous BEFORE INSERT ON turn_events
        WHEN NEW.idx <> (SELECT coalesce(max(idx) + 1, 0) FROM turn_events WHERE turn_id = NEW.turn_id)
        BEGIN SELECT RAISE(ABORT, 'turn_events: indexes must be contiguous from 0'); END;
      CREATE TRIGGER turn_events_closed_after_terminal BEFORE INSERT ON turn_events
        WHEN (SELECT phase FROM turns WHERE id = NEW.turn_id) IN ${terminalPhases}
        BEGIN SELECT RAISE(ABORT, 'turn_events: the turn has ended'); END;
      CREATE TRIGGER turn_events_append_only_update BEFORE UPDATE ON turn_events
        BEGIN SELECT RAISE(ABORT, 'turn_events: append only'); END;
      CREATE TRIGGER turn_events_append_only_delete BEFORE DELETE ON turn_events
        BEGIN SELECT RAISE(ABORT, 'turn_events: append only'); END;

      -- Metadata only: there is deliberately no column for a secret's value.
      CREATE TABLE secret_requests (
        id TEXT PRIMARY KEY,
        turn_id TEXT NOT NULL REFERENCES turns (id),
        session_id TEXT NOT NULL REFERENCES sessions (id),
        tool_call_key TEXT NOT NULL,
        name TEXT NOT NULL,
        prompt TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'submitted', 'cancelled', 'expired', 'orphaned')),
        bridge_generation INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        resolved_at INTEGER,
        UNIQUE (turn_id, tool_call_key)
      ) STRICT;
      CREATE INDEX secret_requests_open ON secret_requests (session_id, created_at)
        WHERE status IN ('pending', 'orphaned');
    `,
  },
  {
    version: 2,
    // Journaled with `spawning`: finds a CLI whose pid never made it into the journal.
    sql: "ALTER TABLE turns ADD COLUMN spawn_marker TEXT;",
  },
  {
    version: 3,
    // The pre-tool gate: one row per tool call a live turn admitted, beside its `tool.admitted` event.
    sql: `
      CREATE TABLE tool_gates (
        turn_id TEXT NOT NULL REFERENCES turns (id),
        tool_call_id TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        effect_free INTEGER NOT NULL CHECK (effect_free IN (0, 1)),
        event_idx INTEGER NOT NULL,
        admitted_at INTEGER NOT NULL,
        PRIMARY KEY (turn_id, tool_call_id),
        FOREIGN KEY (turn_id, event_idx) REFERENCES turn_events (turn_id, idx)
      ) STRICT, WITHOUT ROWID;

      -- Only a turn whose CLI may be running admits a call.
      CREATE TRIGGER tool_gates_only_live_turns BEFORE INSERT ON tool_gates
        WHEN (SELECT phase FROM turns WHERE id = NEW.turn_id) NOT IN ${liveCliPhases}
        BEGIN SELECT RAISE(ABORT, 'tool_gates: only a spawning, running or awaiting_secret turn admits a tool call'); END;
      -- The row points at its own event.
      CREATE TRIGGER tool_gates_event_is_admission BEFORE INSERT ON tool_gates
        WHEN (SELECT type FROM turn_events WHERE turn_id = NEW.turn_id AND idx = NEW.event_idx) IS NOT 'tool.admitted'
        BEGIN SELECT RAISE(ABORT, 'tool_gates: event_idx must name the call''s tool.admitted event'); END;
      -- Recovery reads the effect from the turn row: an admitted call with an effect must already be on it.
      CREATE TRIGGER tool_gates_effect_recorded BEFORE INSERT ON tool_gates
        WHEN NEW.effect_free = 0 AND ((SELECT effects FROM turns WHERE id = NEW.turn_id) & 2) = 0
        BEGIN SELECT RAISE(ABORT, 'tool_gates: the turn must record tool_started before an effectful call is admitted'); END;
      CREATE TRIGGER tool_gates_append_only_update BEFORE UPDATE ON tool_gates
        BEGIN SELECT RAISE(ABORT, 'tool_gates: append only'); END;
      CREATE TRIGGER tool_gates_append_only_delete BEFORE DELETE ON tool_gates
        BEGIN SELECT RAISE(ABORT, 'tool_gates: append only'); END;

      -- An effect, once recorded, is never forgotten: recovery must not replay a turn that had one.
      CREATE TRIGGER turns_effects_only_grow BEFORE UPDATE OF effects ON turns
        WHEN (NEW.effects & OLD.effects) <> OLD.effects
        BEGIN SELECT RAISE(ABORT, 'turns: recorded effects are never cleared'); END;
    `,
  },
  {
    version: 4,
    // Permission requests (Claude Code's --permission-prompt-tool) and the rules "allow for this
    // session" added. A call's input is kept only as a bounded summary and a digest.
    sql: `
      CREATE TABLE permission_requests (
        id TEXT PRIMARY KEY,
        turn_id TEXT NOT NULL REFERENCES turns (id),
        session_id TEXT NOT NULL REFERENCES sessions (id),
        tool_call_key TEXT NOT NULL,
        tool_name TEXT NOT NULL,
        input_summary TEXT NOT NULL,
        input_digest TEXT NOT NULL,
        unmatched_rules TEXT NOT NULL,
        suggested_rule TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'orphaned', 'allowed', 'denied', 'cancelled', 'expired')),
        decision TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        decided_at INTEGER,
        applied_at INTEGER,
        UNIQUE (turn_id, tool_call_key),
        CHECK ((status IN ('allowed', 'denied')) = (decision IS NOT NULL)),
        CHECK (applied_at IS NULL OR status IN ('allowed', 'denied'))
      ) STRICT;
      CREATE INDEX permission_requests_open ON permission_requests (created_at)
        WHERE status IN ('pending', 'orphaned');
      -- Decisions not yet applied: a retry's identical call finds its decision here.
      CREATE INDEX permission_requests_unapplied ON permission_requests (session_id, tool_name, input_digest)
        WHERE status IN ('allowed', 'denied') AND applied_at IS NULL;
      -- A decision is applied once.
      CREATE TRIGGER permission_requests_applied_once BEFORE UPDATE OF applied_at ON permission_requests
        WHEN OLD.applied_at IS NOT NULL
        BEGIN SELECT RAISE(ABORT, 'permission_requests: a decision is applied once'); END;

      CREATE TABLE session_rules (
        session_id TEXT NOT NULL REFERENCES sessions (id),
        rule TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (session_id, rule)
      ) STRICT, WITHOUT ROWID;
      `,
  },
  {
    version: 5,
    // Session lists at scale: newest first by keyset, a title to search (the first prompt), the stopped
    // ones on their own index; nothing on a request path reads every session.
    sql: `
      ALTER TABLE sessions ADD COLUMN title TEXT;
      UPDATE sessions SET title = (
        SELECT substr(json_extract(t.input, '$.prompt'), 1, 200) FROM turns t
        WHERE t.session_id = sessions.id ORDER BY t.seq LIMIT 1);
      CREATE INDEX sessions_newest ON sessions (created_at DESC, id DESC);
      CREATE INDEX sessions_stopped ON sessions (created_at DESC, id DESC) WHERE stopped_at IS NOT NULL;
    `,
  },
  {
    version: 6,
    // The same check per event, cheaper: in a trigger, IN builds its ephemeral index again for every row,
    // which was a fifth of a batched append.
    sql: `
      DROP TRIGGER turn_events_closed_after_terminal;
      CREATE TRIGGER turn_events_closed_after_terminal BEFORE INSERT ON turn_events
        WHEN (SELECT ${isTerminal("phase")} FROM turns WHERE id = NEW.turn_id)
        BEGIN SELECT RAISE(ABORT, 'turn_events: the turn has ended'); END;
    `,
  },
  {
    version: 7,
    // Who decided: a permission request's decision and a secret's submission name their actor (the
    // signed-in page, or the local process behind the connection), as JSON.
    sql: `
      ALTER TABLE permission_requests ADD COLUMN decided_by TEXT;
      ALTER TABLE secret_requests ADD COLUMN submitted_by TEXT;
    `,
  },
  {
    version: 8,
    // A kept CLI's stdout position after its last journaled line, written with that line's events.
    sql: "ALTER TABLE turns ADD COLUMN stdout_through INTEGER;",
  },
  {
    version: 9,
    // The sessions waiting on a person, the longest waiting first: both kinds of open request in the
    // order they were asked, and each session's own open requests, to tell its oldest one.
    sql: `
      CREATE INDEX permission_requests_open_since ON permission_requests (created_at, id)
        WHERE status IN ('pending', 'orphaned');
      CREATE INDEX permission_requests_open_of_session ON permission_requests (session_id, created_at, id)
        WHERE status IN ('pending', 'orphaned');
      CREATE INDEX secret_requests_open_since ON secret_requests (created_at, id)
        WHERE status IN ('pending', 'orphaned');
    `,
  },
  {
    version: 10,
    // Full-text search (FTS5) over the sessions' titles, the turns' prompts and their events' text,
    // written by triggers in the very statement that writes the row: nothing reaches the index but
    // through the journal's one write path, in its transaction, as journaled (masked). A row whose
    // turn_id is NULL is a title, whose event_idx is NULL a prompt (a replay's or retry's prompt is its
    // original's). Then the journal so far, oldest turn first (UUIDv7 ids), each prompt before its events.
    sql: `
      CREATE VIRTUAL TABLE search_text USING fts5 (
        text, session_id UNINDEXED, turn_id UNINDEXED, event_idx UNINDEXED,
        tokenize = 'unicode61 remove_diacritics 2'
      );
      -- The title's row, replaced when the title changes.
      ALTER TABLE sessions ADD COLUMN title_search_rowid INTEGER;

      CREATE TRIGGER search_text_of_event AFTER INSERT ON turn_events
        WHEN ${isSearchedEvent("NEW")}
        BEGIN
          INSERT INTO search_text (text, session_id, turn_id, event_idx)
            SELECT x.text, t.session_id, NEW.turn_id, NEW.idx
            FROM (SELECT ${eventSearchText("NEW")} AS text) AS x, turns AS t
            WHERE t.id = NEW.turn_id AND x.text IS NOT NULL AND x.text <> '';
        END;
      CREATE TRIGGER search_text_of_prompt AFTER INSERT ON turns
        WHEN NEW.replay_of IS NULL AND NEW.retry_of IS NULL
        BEGIN
          INSERT INTO search_text (text, session_id, turn_id, event_idx)
            VALUES (json_extract(NEW.input, '$.prompt'), NEW.session_id, NEW.id, NULL);
        END;
      CREATE TRIGGER search_text_of_title AFTER UPDATE OF title ON sessions
        BEGIN
          DELETE FROM search_text WHERE rowid = OLD.title_search_rowid;
          INSERT INTO search_text (text, session_id, turn_id, event_idx)
            SELECT NEW.title, NEW.id, NULL, NULL WHERE NEW.title IS NOT NULL;
          UPDATE sessions SET title_search_rowid = CASE WHEN NEW.title IS NULL THEN NULL ELSE last_insert_rowid() END
            WHERE id = NEW.id;
        END;

      INSERT INTO search_text (text, session_id, turn_id, event_idx)
        SELECT text, session_id, turn_id, event_idx FROM (
          SELECT json_extract(t.input, '$.prompt') AS text, t.session_id, t.id AS turn_id, NULL AS event_idx, -1 AS step
            FROM turns AS t WHERE t.replay_of IS NULL AND t.retry_of IS NULL
          UNION ALL
          SELECT ${eventSearchText("e")}, t.session_id, e.turn_id, e.idx, e.idx
            FROM turn_events AS e JOIN turns AS t ON t.id = e.turn_id WHERE ${isSearchedEvent("e")}
        ) WHERE text IS NOT NULL AND text <> '' ORDER BY turn_id, step;
      UPDATE sessions SET title = title WHERE title IS NOT NULL;
    `,
  },
  {
    version: 11,
    // A gate-admitted tool call's end, reported by the turn's PostToolUse hook: recovery tells a turn
    // whose every call finished from one whose call may have run halfway.
    sql: `
      CREATE TABLE tool_completions (
        turn_id TEXT NOT NULL,
        tool_call_id TEXT NOT NULL,
        completed_at INTEGER NOT NULL,
        PRIMARY KEY (turn_id, tool_call_id),
        FOREIGN KEY (turn_id, tool_call_id) REFERENCES tool_gates (turn_id, tool_call_id)
      ) STRICT, WITHOUT ROWID;
      CREATE TRIGGER tool_completions_append_only_update BEFORE UPDATE ON tool_completions
        BEGIN SELECT RAISE(ABORT, 'tool_completions: append only'); END;

      -- A turn carrying on another on its conversation after that turn's CLI was gone; at most one.
      ALTER TABLE turns ADD COLUMN continues TEXT REFERENCES turns (id);
      CREATE UNIQUE INDEX turns_continues ON turns (continues) WHERE continues IS NOT NULL;
      -- What a person decided for a turn whose call may have run halfway; set once.
      ALTER TABLE turns ADD COLUMN cli_lost_decision TEXT
        CHECK (cli_lost_decision IN ('run_again', 'skip', 'stop'));
      CREATE TRIGGER turns_cli_lost_decision_once BEFORE UPDATE OF cli_lost_decision ON turns
        WHEN OLD.cli_lost_decision IS NOT NULL AND NEW.cli_lost_decision IS NOT OLD.cli_lost_decision
        BEGIN SELECT RAISE(ABORT, 'turns: a decision, once made, stands'); END;

      -- A continuation's prompt is the daemon's note to the model, not the person's words: not searched.
      DROP TRIGGER search_text_of_prompt;
      CREATE TRIGGER search_text_of_prompt AFTER INSERT ON turns
        WHEN NEW.replay_of IS NULL AND NEW.retry_of IS NULL AND NEW.continues IS NULL
        BEGIN
          INSERT INTO search_text (text, session_id, turn_id, event_idx)
            VALUES (json_extract(NEW.input, '$.prompt'), NEW.session_id, NEW.id, NULL);
        END;
    `,
  },
  {
    version: 12,
    // A turn interrupted with a call that may have run waits on a person's decision, as a request
    // does: the list of sessions waiting on a person walks these from its cursor on, in order.
    sql: `
      CREATE INDEX turns_awaiting_decision ON turns (ended_at, id)
        WHERE phase = 'interrupted' AND error_code = 'may_have_run' AND cli_lost_decision IS NULL;
      CREATE INDEX turns_awaiting_decision_of_session ON turns (session_id, ended_at)
        WHERE phase = 'interrupted' AND error_code = 'may_have_run' AND cli_lost_decision IS NULL;
    `,
  },
];

export const latestSchemaVersion = migrations.at(-1)?.version ?? 0;

/**
 * Brings the schema to `targetVersion` (the latest unless a test builds an older journal), each migration
 * in its own transaction.
 */
export function migrate(db: Database, targetVersion: number = latestSchemaVersion): number {
  const readVersion = () => db.pragma("user_version", { simple: true }) as number;
  const current = readVersion();
  if (current > latestSchemaVersion) {
    throw new JournalError(
      "journal_too_new",
      `journal schema version ${current} is newer than this build understands (${latestSchemaVersion})`,
    );
  }
  for (const migration of migrations) {
    if (migration.version <= current || migration.version > targetVersion) continue;
    db.transaction(() => {
      // Read again under the write lock: another connection may have applied it since.
      if (readVersion() >= migration.version) return;
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
    }).immediate();
  }
  return readVersion();
}
