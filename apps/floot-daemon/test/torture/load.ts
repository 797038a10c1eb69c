import { readFileSync } from "node:fs";
import { join } from "node:path";
import { FlootDaemonFile } from "@bridgeworks/protocol";
import { openJournal } from "@bridgeworks/turn-journal";
import { FlootClient } from "../../src/client/api-client.js";
import { daemonFileName, journalFileName } from "../../src/state-dir.js";

/**
 * Fills a fresh journal with `count` sessions, each with one completed turn of a few events: the
 * "thousands of sessions" a loaded daemon lists in its overview. Returns a few of their turn ids
 * for followers to replay. NORMAL durability: this is set-up, not the system under test.
 */
export function populateJournal(stateDir: string, count: number): string[] {
  const journal = openJournal({ path: join(stateDir, journalFileName), synchronous: "NORMAL" });
  const turnIds: string[] = [];
  try {
    for (let index = 0; index < count; index += 1) {
      const session = journal.sessions.createSession({ backend: index % 2 === 0 ? "claude" : "codex" });
      const turn = journal.turns.submitTurn(session.id, { prompt: `background turn ${index}` });
      journal.turns.transition(turn.id, { phase: "spawning" });
      journal.turns.transition(turn.id, { phase: "running", process: { pid: 999_999, startTime: "1" } });
      journal.events.appendEvents(turn.id, [
        { type: "assistant.delta", text: "background " },
        { type: "assistant.text", text: `background answer ${index}` },
        { type: "usage", input: 10, output: 5 },
      ]);
      journal.turns.transition(turn.id, { phase: "completed" });
      if (index % 97 === 0) turnIds.push(turn.id);
    }
  } finally {
    journal.maintenance.close();
  }
  return turnIds;
}

export interface LoadStats {
  overviewPolls: number;
  overviewFailures: number;
  overviewMs: number[];
  followsCompleted: number;
}

export interface BackgroundLoad {
  stats: LoadStats;
  stop(): Promise<void>;
}

/**
 * Clients that keep a daemon busy whatever happens to it: `pollers` loops of `GET /v1/overview` and
 * `followers` loops that follow (SSE) one of `turnIds` to its end. Each finds the daemon through
 * `daemon.json` again after a failure, so they ride through kills and restarts.
 */
export function startLoad(
  stateDir: string,
  options: {
    pollers: number;
    followers: number;
    turnIds: readonly string[];
    /** Between two requests of one client; the web UI polls the overview every 2.5 s. */
    pauseMs?: number;
  },
): BackgroundLoad {
  const stats: LoadStats = { overviewPolls: 0, overviewFailures: 0, overviewMs: [], followsCompleted: 0 };
  const abort = new AbortController();
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const client = (): FlootClient | undefined => {
    try {
      return new FlootClient(
        FlootDaemonFile.parse(JSON.parse(readFileSync(join(stateDir, daemonFileName), "utf8"))),
      );
    } catch {
      return undefined;
    }
  };
  const loop = async (work: (current: FlootClient) => Promise<void>) => {
    while (!abort.signal.aborted) {
      const current = client();
      try {
        if (current) await work(current);
        else await pause(100);
      } catch {
        await pause(100);
      }
      await pause(options.pauseMs ?? 2_500);
    }
  };
  const running: Promise<void>[] = [];
  for (let index = 0; index < options.pollers; index += 1) {
    running.push(
      loop(async (current) => {
        const startedAt = performance.now();
        try {
          await current.request("GET", "/v1/overview");
        } catch (error) {
          stats.overviewFailures += 1;
          throw error;
        }
        stats.overviewPolls += 1;
        stats.overviewMs.push(performance.now() - startedAt);
      }),
    );
  }
  for (let index = 0; index < options.followers; index += 1) {
    let next = index;
    running.push(
      loop(async (current) => {
        const turnId = options.turnIds[next % options.turnIds.length];
        next += options.followers;
        if (turnId === undefined) return;
        await current.follow(turnId, 0, () => {}, abort.signal);
        stats.followsCompleted += 1;
      }),
    );
  }
  return {
    stats,
    async stop() {
      abort.abort();
      await Promise.allSettled(running);
    },
  };
}
