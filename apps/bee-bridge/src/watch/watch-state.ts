import type { ActionRecord, AgentRecord } from "@bridgeworks/protocol";

/** What `bee watch` knows of the board: every action by id, every identity, and what happened. */
export interface WatchState {
  actions: Map<string, ActionRecord>;
  agents: Map<string, AgentRecord>;
  /** Newest last; each line starts with the time it was seen. */
  events: string[];
}

export interface WatchFilter {
  /** Only what concerns this agent name: addressed to it, from it, held or decided by it. */
  agent?: string | undefined;
  /** Only actions in these states. */
  states?: readonly string[] | undefined;
}

const keptEvents = 500;

export function emptyWatchState(): WatchState {
  return { actions: new Map(), agents: new Map(), events: [] };
}

/** `HH:MM:SS` of an instant, in the terminal's time zone. */
export function clockTime(at: Date | string): string {
  return new Date(at).toTimeString().slice(0, 8);
}

function nameOf(sender: string | undefined): string | undefined {
  if (sender === undefined) return undefined;
  const match = /^agent:([^#]+)#/.exec(sender);
  return match ? match[1] : sender;
}

/** Whether `record` concerns the filter's agent and is in one of its states. */
export function shows(record: ActionRecord, filter: WatchFilter): boolean {
  if (filter.states !== undefined && !filter.states.includes(record.state)) return false;
  if (filter.agent === undefined) return true;
  const involved = [
    record.to,
    nameOf(record.from),
    "claimedBy" in record ? nameOf(record.claimedBy) : undefined,
    "decidedBy" in record ? nameOf(record.decidedBy) : undefined,
  ];
  return involved.includes(filter.agent);
}

function firstLine(body: string): string {
  return body.split("\n")[0] ?? "";
}

/** The event a change to one action is, told against what was known before. */
function describeChange(
  before: ActionRecord | undefined,
  after: ActionRecord,
  agents: Map<string, AgentRecord>,
): string | undefined {
  if (before === undefined && after.state === "open") {
    const what = after.kind === "approval" ? "asks for approval" : `posted ${after.kind}`;
    return `${after.id} ${what}: ${after.from} -> ${after.to}: ${firstLine(after.body)}`;
  }
  if (before !== undefined && before.state === after.state && before.seq === after.seq) return undefined;
  switch (after.state) {
    case "open": {
      const holder = before !== undefined && "claimedBy" in before ? before.claimedBy : undefined;
      const ended = holder === undefined ? undefined : agents.get(holder);
      if (ended?.status === "expired") return `${after.id} open again: the lease of ${holder} lapsed`;
      if (holder !== undefined) return `${after.id} open again: ${holder} ${ended?.status ?? "let it go"}`;
      return `${after.id} open`;
    }
    case "claimed":
      return `${after.id} claimed by ${after.claimedBy} (fence ${after.fence})`;
    case "done":
      return `${after.id} done by ${after.claimedBy}${after.result === undefined ? "" : `: ${firstLine(after.result)}`}`;
    case "cancelled":
      return `${after.id} cancelled by ${after.cancelledBy}${after.result === undefined ? "" : `: ${after.result}`}`;
    case "decided":
      return `${after.id} ${after.decision === "allow" ? "approved" : "denied"} by ${after.decidedBy}${
        after.result === undefined ? "" : `: ${after.result}`
      }`;
  }
}

/** What an identity's new record says happened to it. */
function describeAgentChange(before: AgentRecord | undefined, after: AgentRecord): string | undefined {
  if (before?.status === after.status) return undefined;
  const where = after.process === undefined ? "" : ` (pid ${after.process.pid} on ${after.process.host})`;
  switch (after.status) {
    case "active":
      return `${after.identity} joined${where}`;
    case "expired":
      return `${after.identity} expired: its lease lapsed`;
    case "retired":
      return `${after.identity} retired for ${after.successor}`;
    case "departed":
      return `${after.identity} departed`;
  }
}

/** Takes in new identities first (so a release reads against them), then changed actions; logs what happened. */
export function applyChanges(
  state: WatchState,
  changes: { records?: readonly ActionRecord[]; agents?: readonly AgentRecord[] },
  filter: WatchFilter,
  at: Date,
): void {
  const log = (line: string | undefined) => {
    if (line !== undefined) state.events.push(`${clockTime(at)} ${line}`);
  };
  for (const agent of changes.agents ?? []) {
    const before = state.agents.get(agent.identity);
    state.agents.set(agent.identity, agent);
    if (filter.agent === undefined || agent.name === filter.agent) log(describeAgentChange(before, agent));
  }
  for (const record of changes.records ?? []) {
    const before = state.actions.get(record.id);
    state.actions.set(record.id, record);
    if (shows(record, filter) || (before !== undefined && shows(before, filter))) {
      log(describeChange(before, record, state.agents));
    }
  }
  if (state.events.length > keptEvents) state.events.splice(0, state.events.length - keptEvents);
}
