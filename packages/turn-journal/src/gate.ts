import { type ToolAdmission, ToolAdmissionDraft } from "@bridgeworks/protocol";
import { JournalError, parseInput } from "./errors.js";
import { JournalArea } from "./journal-area.js";
import { acceptsEvents } from "./phases.js";
import { requireTurnRow } from "./records.js";
import { toToolAdmission } from "./rows.js";

/** The pre-tool gate's record: which tool calls of a live turn were admitted, committed before they run. */
export class JournalGate extends JournalArea {
  /**
   * Records that a tool call of a live turn may start, before it can: its `tool.admitted` event (with
   * the `tool_started` effect unless `effectFree`) and its gate record commit together, with buffered
   * events flushed first, and always with `synchronous=FULL` (fsynced, even on a NORMAL journal). The
   * same call admitted again gets its first record back. A turn that is not spawning, running or
   * awaiting a secret admits nothing (`not_accepting_events`).
   */
  admitToolCall(turnId: string, draft: ToolAdmissionDraft): ToolAdmission {
    const valid = parseInput(ToolAdmissionDraft, draft, "admission");
    const connection = this.connection;
    const { sql, clock } = connection;
    this.buffer.flush();
    const created = connection.withSynchronous("FULL", () =>
      connection.transaction(() => {
        if (sql.toolGate.get(turnId, valid.toolCallId)) return false;
        const turn = requireTurnRow(connection, turnId);
        if (!acceptsEvents(turn.phase)) {
          throw new JournalError(
            "not_accepting_events",
            `turn ${turnId} is ${turn.phase}; no tool call of it may start`,
          );
        }
        const eventIndex = sql.nextEventIndex.get(turnId) ?? 0;
        this.writes.changeTurn(turn, {
          events: [
            {
              type: "tool.admitted",
              toolId: valid.toolCallId,
              name: valid.toolName,
              inputPreview: valid.inputPreview,
              ...(valid.effectFree && { effectFree: true as const }),
            },
          ],
        });
        sql.insertToolGate.run({
          turn_id: turnId,
          tool_call_id: valid.toolCallId,
          tool_name: valid.toolName,
          effect_free: valid.effectFree ? 1 : 0,
          event_idx: eventIndex,
          admitted_at: clock.now(),
        });
        return true;
      }),
    );
    if (created) connection.feed.notify([turnId]);
    const row = sql.toolGate.get(turnId, valid.toolCallId);
    if (!row)
      throw new JournalError("turn_not_found", `turn ${turnId} has no gate record ${valid.toolCallId}`);
    return toToolAdmission(row);
  }

  /**
   * Records that an admitted tool call finished (its PostToolUse hook). Reporting it again keeps the
   * first time. A call the gate never admitted for the turn is refused (`tool_call_not_admitted`).
   * Not fsynced on its own: a completion lost to a power cut only makes recovery more careful.
   */
  recordToolCompletion(turnId: string, toolCallId: string): ToolAdmission {
    const { sql, clock } = this.connection;
    const admitted = sql.toolGate.get(turnId, toolCallId);
    if (!admitted) {
      throw new JournalError(
        "tool_call_not_admitted",
        `turn ${turnId} has no admitted tool call ${JSON.stringify(toolCallId)}; only an admitted call completes`,
      );
    }
    if (admitted.completed_at !== null) return toToolAdmission(admitted);
    sql.insertToolCompletion.run(turnId, toolCallId, clock.now());
    return toToolAdmission(sql.toolGate.get(turnId, toolCallId)!);
  }

  /** The tool calls the gate admitted for a turn, in the order they were admitted. */
  listToolAdmissions(turnId: string): ToolAdmission[] {
    return this.connection.sql.toolGatesOfTurn.all(turnId).map(toToolAdmission);
  }
}
