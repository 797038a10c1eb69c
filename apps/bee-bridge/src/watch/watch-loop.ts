import { type Board, BoardError } from "@bridgeworks/board";
import type { ActionRecord, Cursor } from "@bridgeworks/protocol";
import { renderWatch, type Screen } from "./watch-render.js";
import { applyChanges, emptyWatchState, type WatchFilter } from "./watch-state.js";

/** Where `bee watch` draws: a terminal it owns (the whole screen) or a plain stream of event lines. */
export interface WatchOutput {
  /** A terminal: the board is drawn whole on the alternate screen; else only events are written. */
  tty: boolean;
  screen(): Screen;
  write(text: string): void;
}

export interface WatchInput {
  board: Board;
  filter: WatchFilter;
  /** The board's location as it may be shown (no password). */
  title: string;
  output: WatchOutput;
  /** Aborts when the person quits (q, Ctrl-C, a signal). */
  stopping: AbortSignal;
  /** Calls back when the terminal is resized. */
  onResize(redraw: () => void): void;
  now?: () => Date;
}

// A wait that ends quietly after this long just waits again.
const waitStepMs = 60_000;

/**
 * Draws the board and keeps it current from the board's own wake-ups (every change to an action or
 * to the identities, and the moment a lease lapses), never by polling, until told to stop.
 */
export async function runWatch(input: WatchInput): Promise<void> {
  const { board, filter, output, stopping } = input;
  const now = input.now ?? (() => new Date());
  const state = emptyWatchState();
  let shown = 0;
  const draw = () => {
    if (output.tty) {
      const lines = renderWatch(state, filter, output.screen(), input.title);
      output.write(`\x1b[H\x1b[2J${lines.join("\r\n")}`);
      return;
    }
    for (const line of state.events.slice(shown)) output.write(`${line}\n`);
    shown = state.events.length;
  };
  input.onResize(draw);

  let cursor: Cursor | undefined;
  const records: ActionRecord[] = [];
  for (;;) {
    const page = await board.list({ cursor, limit: 500 });
    records.push(...page.records);
    cursor = page.cursor;
    if (page.records.length < 500) break;
  }
  applyChanges(state, { agents: await board.agents(), records }, filter, now());
  state.events.length = 0;
  state.events.push(`${now().toTimeString().slice(0, 8)} watching (${records.length} actions so far)`);
  let agentsVersion = (await board.waitForChanges(cursor, { timeoutMs: 0 })).agentsVersion;
  draw();

  while (!stopping.aborted) {
    try {
      const changes = await board.waitForChanges(cursor, {
        timeoutMs: waitStepMs,
        agentsVersion,
        signal: stopping,
      });
      cursor = changes.cursor;
      const agents = changes.agentsVersion === agentsVersion ? undefined : await board.agents();
      agentsVersion = changes.agentsVersion;
      applyChanges(state, { agents, records: changes.records }, filter, now());
      draw();
    } catch (error) {
      if (stopping.aborted) return;
      if (!(error instanceof BoardError) || !error.retryable) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}
