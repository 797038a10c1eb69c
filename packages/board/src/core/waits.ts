import {
  ActionId,
  type ActionPage,
  type ActionRecord,
  type ActionWaitResult,
  ActionWaitUntil,
  AgentIdentity,
  type BoardChanges,
  type Cursor,
  parseAgentIdentity,
} from "@bridgeworks/protocol";
import { parseArgument, parseIntegerArgument, parseOptionalSignal } from "../arguments.js";
import type { ActionWaitOptions, BoardWaits, ChangesWaitOptions, WaitOptions } from "../board.js";
import { actionFromRow } from "../rows.js";
import { listLimit, maxTimeoutMs, requireObject, waitLimit } from "../rules.js";
import type { ScanRows } from "../store.js";
import type { Scan } from "../wait.js";
import { expireLeases } from "./agents.js";
import { abortable, actionNotFound, requireActive } from "./checks.js";
import type { CoreContext } from "./context.js";

/** The board's waits area over `core`. */
export function waitsArea(core: CoreContext): BoardWaits {
  return {
    waitForClaimable: (agent, cursor, options) => waitForClaimable(core, agent, cursor, options),
    waitForAction: (id, until, options) => waitForAction(core, id, until, options),
    waitForChanges: (cursor, options) => waitForChanges(core, cursor, options),
  };
}

function waitBounds(options: ActionWaitOptions) {
  requireObject(options, "options");
  const timeoutMs = parseIntegerArgument(options.timeoutMs, "timeoutMs", 0, maxTimeoutMs);
  const signal = parseOptionalSignal(options.signal, "signal");
  signal?.throwIfAborted();
  return { timeoutMs, signal };
}

/**
 * Reads with `scan`; when a lease has lapsed by the store's clock, sweeps it (a write of its own,
 * which wakes every waiter) and reads again, so a wait never reports what a dead process holds.
 */
async function scanSwept(core: CoreContext, scan: () => Promise<ScanRows>): Promise<ScanRows> {
  const found = await scan();
  if (found.leaseExpiresInMs === undefined || found.leaseExpiresInMs > 0) return found;
  await expireLeases(core);
  return scan();
}

async function waitForClaimable(
  core: CoreContext,
  agent: AgentIdentity,
  cursor: Cursor | undefined,
  options: WaitOptions,
): Promise<ActionPage> {
  const identity = parseArgument(AgentIdentity, agent, "agent");
  const { timeoutMs, signal } = waitBounds(options);
  const limit = parseIntegerArgument(options.limit ?? waitLimit.default, "limit", 1, waitLimit.max);
  const { name } = parseAgentIdentity(identity);
  // The first read may go to a server, so an abort or a close must not wait for it to come back.
  const start = await abortable(
    core.read(async (store) => {
      const found = await store.lookup({ agent: identity });
      requireActive(found, identity, "agent");
      const position = core.position(cursor);
      core.requireWithin(position, found.head);
      return position;
    }),
    signal,
    core.closing,
  );
  return core.runner.wait({
    start,
    timeoutMs,
    signal,
    closing: core.closing,
    cursorAt: (position) => core.cursorAt(position),
    scan: async (after): Promise<Scan> => {
      const { rows, head, leaseExpiresInMs } = await scanSwept(core, () =>
        core.read(async (store) => store.actions.claimableAfter(name, after, limit)),
      );
      // A full page may have more behind it; otherwise nothing up to the head is claimable.
      const position = rows.length === limit ? rows[rows.length - 1]!.seq : Math.max(head, after);
      return { records: rows.map(actionFromRow), position, lookAgainInMs: leaseExpiresInMs };
    },
  });
}

/** A wait woken by every change (and by the next lapsing lease), for the scan given. */
function waitOnEveryChange(
  core: CoreContext,
  start: number,
  bounds: { timeoutMs: number; signal: AbortSignal | undefined },
  scan: (after: number) => Promise<Scan>,
) {
  return core.runner.wait({
    start,
    scope: "every",
    ...bounds,
    closing: core.closing,
    cursorAt: (position) => core.cursorAt(position),
    scan,
  });
}

/** Whether `record` is what the wait waits for, or can never become it. */
function judge(record: ActionRecord, until: ActionWaitUntil): "reached" | "never" | "waiting" {
  if (record.state === "done" || record.state === "decided") return "reached";
  if (record.state === "cancelled") return "never";
  if (until === "claimed" && record.state === "claimed") return "reached";
  return "waiting";
}

async function waitForAction(
  core: CoreContext,
  id: ActionId,
  until: ActionWaitUntil,
  options: ActionWaitOptions,
): Promise<ActionWaitResult> {
  const actionId = parseArgument(ActionId, id, "id");
  const target = parseArgument(ActionWaitUntil, until, "until");
  const { timeoutMs, signal } = waitBounds(options);
  let last: ActionRecord | undefined;
  // One read: the action, its holder's lease, in one snapshot; a lapsed holder is swept first.
  const look = async (): Promise<{ record: ActionRecord; holderExpiresInMs: number | undefined }> => {
    for (let attempt = 0; ; attempt++) {
      const found = await core.read(async (store) => {
        const row = await store.actions.get(actionId);
        if (row === undefined) throw actionNotFound(actionId);
        if (row.claimed_by === null || row.state !== "claimed") return { row, expiresInMs: undefined };
        const holder = await store.lookup({ action: actionId, agent: row.claimed_by });
        return { row: holder.action ?? row, expiresInMs: holder.agentLeaseExpiresInMs };
      });
      if (found.expiresInMs !== undefined && found.expiresInMs <= 0 && attempt === 0) {
        await expireLeases(core);
        continue;
      }
      return { record: actionFromRow(found.row), holderExpiresInMs: found.expiresInMs };
    }
  };
  await abortable(look(), signal, core.closing);
  const page = await waitOnEveryChange(core, 0, { timeoutMs, signal }, async (after): Promise<Scan> => {
    const { record, holderExpiresInMs } = await look();
    last = record;
    const verdict = judge(record, target);
    return {
      records: verdict === "waiting" ? [] : [record],
      position: after,
      lookAgainInMs: holderExpiresInMs,
    };
  });
  const record = page.records[0] ?? last;
  if (record === undefined) throw actionNotFound(actionId);
  return { reached: judge(record, target) === "reached", record };
}

async function waitForChanges(
  core: CoreContext,
  cursor: Cursor | undefined,
  options: ChangesWaitOptions,
): Promise<BoardChanges> {
  const { timeoutMs, signal } = waitBounds(options);
  const limit = parseIntegerArgument(options.limit ?? listLimit.default, "limit", 1, listLimit.max);
  const seenAgents =
    options.agentsVersion === undefined
      ? undefined
      : parseIntegerArgument(options.agentsVersion, "agentsVersion", 0, Number.MAX_SAFE_INTEGER);
  const { start, version } = await abortable(
    core.read(async (store) => {
      const position = core.position(cursor);
      const found = await store.actions.changedAfter(position, 1);
      core.requireWithin(position, found.head);
      return { start: position, version: found.agentsVersion };
    }),
    signal,
    core.closing,
  );
  let agentsVersion = version;
  const page = await waitOnEveryChange(core, start, { timeoutMs, signal }, async (after): Promise<Scan> => {
    const found = await scanSwept(core, () =>
      core.read(async (store) => store.actions.changedAfter(after, limit)),
    );
    agentsVersion = found.agentsVersion;
    return {
      records: found.rows.map(actionFromRow),
      position: found.rows.at(-1)?.seq ?? after,
      lookAgainInMs: found.leaseExpiresInMs,
      settle: seenAgents !== undefined && found.agentsVersion !== seenAgents,
    };
  });
  return { ...page, agentsVersion };
}
