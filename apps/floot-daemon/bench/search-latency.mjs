// The full-text search (GET /v1/search) over a journal of 10,000 sessions / 1,000,000 events (seeded as
// the load profile seeds it: the search index written by the journal's own triggers), against two
// baselines measured in the same run on the same daemon: a session looked up by id, and the first page
// of the overview. Each query kind is asked `rounds` times, interleaved with the baselines.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { api, startDaemon, stats, stopDaemon } from "./daemon-kit.mjs";
import { seedJournal } from "./seed-journal.mjs";

const fullShape = { sessions: 10_000, turnsPerSession: 10, eventsPerTurn: 10 };

/** What a person types: a rare phrase, a phrase of ~100 sessions, a word of 200,000 events, a prefix. */
const queries = {
  rarePhrase: '"session 4242 turn 7"',
  sessionsPhrase: '"refactor module 42"',
  commonWord: "answer",
  prefix: "refact*",
};

async function timed(work) {
  const startedAt = performance.now();
  const result = await work();
  return [performance.now() - startedAt, result];
}

export async function searchLatency(root, { scale = 1, rounds = 100 } = {}) {
  const shape = { ...fullShape, sessions: Math.max(100, Math.round(fullShape.sessions * scale)) };
  const stateDir = join(root, "search");
  mkdirSync(stateDir, { recursive: true });
  const [seedMs, seeded] = await timed(() => seedJournal(stateDir, shape));
  const { child, file } = await startDaemon(root, stateDir);
  try {
    const call = api(file);
    const probe = (await call("GET", "/v1/overview?limit=1")).sessions[0].session.id;
    const samples = Object.fromEntries(Object.keys(queries).map((kind) => [kind, []]));
    const hits = {};
    const byId = [];
    const overview = [];
    // Warm: the first of each reads its pages from disk.
    for (const query of Object.values(queries))
      await call("GET", `/v1/search?q=${encodeURIComponent(query)}`);
    for (let round = 0; round < rounds; round += 1) {
      for (const [kind, query] of Object.entries(queries)) {
        const [ms, page] = await timed(() => call("GET", `/v1/search?q=${encodeURIComponent(query)}`));
        samples[kind].push(ms);
        hits[kind] = page.hits.length + (page.nextCursor === undefined ? "" : "+");
      }
      byId.push((await timed(() => call("GET", `/v1/sessions/${probe}`)))[0]);
      overview.push((await timed(() => call("GET", "/v1/overview")))[0]);
    }
    const all = Object.values(samples).flat();
    const search = stats(all);
    const baseline = stats(byId);
    return {
      sessions: seeded.sessions,
      events: seeded.events,
      seedMs: Math.round(seedMs),
      queries,
      firstPageHits: hits,
      searchMs: search,
      searchMsByQuery: Object.fromEntries(Object.entries(samples).map(([kind, ms]) => [kind, stats(ms)])),
      baselineLookupByIdMs: baseline,
      baselineOverviewMs: stats(overview),
      ratioP50: Math.round((search.p50 / baseline.p50) * 10) / 10,
      ratioP99: Math.round((search.p99 / baseline.p99) * 10) / 10,
    };
  } finally {
    await stopDaemon(child);
  }
}
