// One claimer of the board's crash torture (torture.mjs), against dist/. It registers a leased
// identity named TORTURE_AGENT and renews it every TORTURE_RENEW_MS, waits for an action addressed
// to it, claims it, works TORTURE_WORK_MS and completes it under its fencing token. Each step is one
// JSON line on stdout, written before the next step starts, so the torture knows what it killed.
// SIGUSR2 freezes it (no renewals, no next step) and SIGUSR1 thaws it: a zombie that never stops
// inside a write, for SQLite, where a process stopped inside one holds the file's write lock.
import { hostname } from "node:os";
import { openBoard } from "../dist/index.js";

const name = process.env.TORTURE_AGENT;
const workMs = Number(process.env.TORTURE_WORK_MS ?? "0");
const renewMs = Number(process.env.TORTURE_RENEW_MS ?? "300");
const say = (event, fields = {}) =>
  process.stdout.write(`${JSON.stringify({ event, at: Date.now(), ...fields })}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Repeats a call the board refused as busy (a held lock, a restarting server): claims and completes by id mean the same twice. */
async function whileBusy(call) {
  for (let pause = 20; ; pause = Math.min(pause * 2, 250)) {
    try {
      return await call();
    } catch (error) {
      if (error?.code !== "busy") throw error;
      await sleep(pause);
    }
  }
}

// A PostgreSQL URL comes in BEE_BOARD, never argv. Wake-ups must be the board's own, not a re-check.
const board = await whileBusy(() => openBoard(process.env.BEE_BOARD, { recheckIntervalMs: 600_000 }));
const agent = await whileBusy(() =>
  board.register(name, { process: { host: hostname(), pid: process.pid } }),
);
let frozen;
process.on("SIGUSR2", () => {
  if (frozen !== undefined) return;
  let thaw;
  frozen = new Promise((resolve) => {
    thaw = resolve;
  });
  frozen.thaw = thaw;
});
process.on("SIGUSR1", () => {
  frozen?.thaw();
  frozen = undefined;
});
/** Holds the next step while frozen. */
const unfrozen = async () => {
  while (frozen !== undefined) await frozen;
};
const renewal = setInterval(() => {
  if (frozen !== undefined) return;
  board.renew(agent.identity).catch((error) => {
    if (error?.code === "agent_not_active") say("lease-lost");
  });
}, renewMs);
say("waiting", { identity: agent.identity });

let cursor;
let action;
while (action === undefined) {
  try {
    const page = await board.waitForClaimable(agent.identity, cursor, { timeoutMs: 60_000 });
    cursor = page.cursor;
    action = page.records[0];
  } catch (error) {
    if (error?.code !== "busy") throw error;
  }
}
say("woke", { id: action.id });
await unfrozen();

const claimed = await whileBusy(() => board.claim(agent.identity, action.id));
if (claimed.outcome !== "claimed") {
  say("taken", { state: claimed.record.state });
} else {
  say("claimed", { fence: claimed.record.fence });
  await sleep(workMs);
  await unfrozen();
  say("completing");
  try {
    const done = await whileBusy(() =>
      board.complete(agent.identity, action.id, `by ${agent.identity}`, { fence: claimed.record.fence }),
    );
    say("completed", { outcome: done.outcome });
  } catch (error) {
    say("complete-refused", { code: error?.code ?? "error", message: error?.message });
  }
}
clearInterval(renewal);
await board.close();
