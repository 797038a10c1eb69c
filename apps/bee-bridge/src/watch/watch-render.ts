import type { ActionRecord, AgentRecord } from "@bridgeworks/protocol";
import { describeHolder } from "../cli/describe-records.js";
import { clockTime, shows, type WatchFilter, type WatchState } from "./watch-state.js";

export interface Screen {
  columns: number;
  rows: number;
}

function fit(line: string, columns: number): string {
  return line.length > columns ? `${line.slice(0, Math.max(0, columns - 1))}…` : line;
}

function firstLine(body: string): string {
  return body.split("\n")[0] ?? "";
}

function describeLiveAgent(agent: AgentRecord, holding: readonly string[]): string {
  const lease =
    agent.status === "active" && agent.leaseExpiresAt !== undefined
      ? `lease until ${clockTime(agent.leaseExpiresAt)}`
      : agent.status === "active"
        ? "no lease"
        : agent.status;
  const where = agent.process === undefined ? "" : `  pid ${agent.process.pid} on ${agent.process.host}`;
  const holds = holding.length === 0 ? "" : `  holds ${holding.join(", ")}`;
  return `  ${agent.identity}  ${lease}${where}${holds}`;
}

function describeAction(record: ActionRecord): string {
  const state = record.state === "open" ? "open" : describeHolder(record);
  return `  ${record.id}  ${state}  ${record.kind}  ${record.from} -> ${record.to}: ${firstLine(record.body)}`;
}

/**
 * The board as lines for a terminal of `screen`'s size: who is here and what they hold, approvals
 * waiting for a decision, the actions still open or held, and the latest events below (as many as fit).
 */
export function renderWatch(state: WatchState, filter: WatchFilter, screen: Screen, title: string): string[] {
  const actions = [...state.actions.values()].filter((record) => shows(record, filter));
  const approvals = actions.filter((record) => record.kind === "approval" && record.state === "open");
  const live = actions
    .filter((record) => record.kind !== "approval" && (record.state === "open" || record.state === "claimed"))
    .sort((a, b) => a.seq - b.seq);
  const agents = [...state.agents.values()].filter(
    (agent) => agent.status === "active" && (filter.agent === undefined || agent.name === filter.agent),
  );
  const holdings = (identity: string) =>
    live
      .filter((record) => record.state === "claimed" && record.claimedBy === identity)
      .map((record) => record.id);
  const counts = `${agents.length} agents, ${live.filter((r) => r.state === "open").length} open, ${
    live.filter((r) => r.state === "claimed").length
  } claimed, ${approvals.length} approvals waiting`;

  const top = [
    `bee watch  ${title}  ${counts}  (q quits)`,
    "AGENTS",
    ...(agents.length === 0
      ? ["  (none active)"]
      : agents.map((agent) => describeLiveAgent(agent, holdings(agent.identity)))),
    "APPROVALS WAITING",
    ...(approvals.length === 0
      ? ["  (none)"]
      : approvals.map(
          (record) =>
            `  ${record.id}  ${record.from} asks ${record.to}: ${firstLine(record.body)}  (bee approve ${record.id} | bee deny ${record.id})`,
        )),
    "ACTIONS",
    ...(live.length === 0 ? ["  (none open or claimed)"] : live.map(describeAction)),
    "EVENTS",
  ];
  const room = Math.max(0, screen.rows - top.length);
  const events = room === 0 ? [] : state.events.slice(-room).map((line) => `  ${line}`);
  return [...top, ...events].slice(0, screen.rows).map((line) => fit(line, screen.columns));
}
