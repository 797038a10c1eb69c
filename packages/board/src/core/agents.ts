import {
  type ActionId,
  type ActiveAgent,
  AgentIdentity,
  AgentName,
  AgentProcess,
  type AgentRecord,
  BoardSettings,
  type Departure,
  mintAgentIdentity,
  parseAgentIdentity,
  type Retirement,
} from "@bridgeworks/protocol";
import { parseArgument } from "../arguments.js";
import type { BoardAgents, LeaseSweep, RegisterOptions, RetireOptions } from "../board.js";
import { BoardError, RetireIncompleteError } from "../errors.js";
import { agentFromRow } from "../rows.js";
import { mintAttempts, requireObject } from "../rules.js";
import { requireActive, requireAgent, requireSuccessor } from "./checks.js";
import type { CoreContext } from "./context.js";

/** The board's agents area (identities, leases, settings) over `core`. */
export function agentsArea(core: CoreContext): BoardAgents {
  return {
    register: (name, options) => register(core, name, options),
    renew: (agent) => renew(core, agent),
    expireLeases: () => expireLeases(core),
    retire: (agent, options) => retire(core, agent, options),
    depart: (agent) => depart(core, agent),
    agents: () => agents(core),
    settings: () => settings(core),
    configure: (changes) => configure(core, changes),
  };
}

async function register(
  core: CoreContext,
  name: string,
  options: RegisterOptions = {},
): Promise<ActiveAgent> {
  const agentName = parseArgument(AgentName, name, "name");
  requireObject(options, "options");
  if (options.lease !== undefined && typeof options.lease !== "boolean") {
    throw new BoardError("invalid_argument", "lease: must be true or false", { argument: "lease" });
  }
  const process =
    options.process === undefined ? undefined : parseArgument(AgentProcess, options.process, "process");
  for (let attempt = 1; ; attempt++) {
    const identity = mintAgentIdentity(agentName, core.deps.randomBytes);
    const inserted = await core.write((store) =>
      store.agents.insert({
        identity,
        name: agentName,
        leased: options.lease ?? true,
        host: process?.host ?? null,
        pid: process?.pid ?? null,
        now: core.deps.now(),
      }),
    );
    if (inserted !== undefined) return agentFromRow(inserted) as ActiveAgent;
    if (attempt >= mintAttempts)
      throw new Error(`could not mint a fresh identity in ${mintAttempts} attempts`);
  }
}

/** Extends the lease; an identity without one is answered as it is. A lapsed lease ends the identity. */
async function renew(core: CoreContext, agent: AgentIdentity): Promise<ActiveAgent> {
  const identity = parseArgument(AgentIdentity, agent, "agent");
  const renewed = await core.write((store) => store.agents.renewLease(identity));
  if (renewed !== undefined) return agentFromRow(renewed) as ActiveAgent;
  const found = await core.read((store) => Promise.resolve(store.lookup({ agent: identity })));
  if (found.agent?.status === "active" && found.agentLeaseExpiresInMs === undefined) {
    return agentFromRow(found.agent) as ActiveAgent;
  }
  // Lapsed but not yet swept: end it now, so its claims are released before anyone is told.
  if (found.agent?.status === "active") await expireLeases(core);
  const after = await core.read((store) => Promise.resolve(store.lookup({ agent: identity })));
  return requireActive(after, identity, "agent");
}

export async function expireLeases(core: CoreContext): Promise<LeaseSweep> {
  const swept = await core.write((store) => store.agents.expireLeases(core.deps.now()));
  return { expired: swept.expired as AgentIdentity[], released: swept.released as ActionId[] };
}

async function retire(
  core: CoreContext,
  agent: AgentIdentity,
  options: RetireOptions = {},
): Promise<Retirement> {
  const identity = parseArgument(AgentIdentity, agent, "agent");
  requireObject(options, "options");
  const { name } = parseAgentIdentity(identity);
  const before = await core.read(async (store) =>
    requireActive(await store.lookup({ agent: identity }), identity, "agent"),
  );
  const current =
    options.successor === undefined
      ? await register(core, name, {
          lease: before.leaseExpiresAt !== undefined,
          process: before.process,
        })
      : await core.read(async (store) => {
          const successor = parseArgument(AgentIdentity, options.successor, "successor");
          return requireSuccessor(await store.lookup({ agent: successor }), successor, identity);
        });
  try {
    const ended = await core.write((store) =>
      store.agents.end({ identity, status: "retired", successor: current.identity, now: core.deps.now() }),
    );
    if (ended === undefined) {
      throw new BoardError("agent_not_active", `${identity} stopped being active during the retire`);
    }
    const retired = agentFromRow(ended.agent);
    if (retired.status !== "retired") throw new Error(`retired ${identity} reads back as ${retired.status}`);
    return { retired, current, released: ended.released as ActionId[] };
  } catch (error) {
    throw new RetireIncompleteError(current, error);
  }
}

async function depart(core: CoreContext, agent: AgentIdentity): Promise<Departure> {
  const identity = parseArgument(AgentIdentity, agent, "agent");
  const ended = await core.write((store) =>
    store.agents.end({ identity, status: "departed", successor: null, now: core.deps.now() }),
  );
  // Departing again changes nothing: an identity that is no longer active never becomes active.
  const record =
    ended === undefined
      ? await core.read(async (store) =>
          requireAgent(await store.lookup({ agent: identity }), identity, "agent"),
        )
      : agentFromRow(ended.agent);
  if (record.status === "active") throw new Error(`departed ${identity} reads back as active`);
  return { agent: record, released: (ended?.released ?? []) as ActionId[] } as Departure;
}

async function agents(core: CoreContext): Promise<AgentRecord[]> {
  return core.read(async (store) => (await store.agents.all()).map(agentFromRow));
}

async function settings(core: CoreContext): Promise<BoardSettings> {
  return core.read(async (store) => ({ leaseTtlMs: (await store.settings()).lease_ttl_ms }));
}

async function configure(core: CoreContext, changes: Partial<BoardSettings>): Promise<BoardSettings> {
  requireObject(changes, "settings");
  const wanted = parseArgument(BoardSettings.partial(), changes, "settings");
  if (wanted.leaseTtlMs === undefined) return settings(core);
  const ttl = wanted.leaseTtlMs;
  const stored = await core.write((store) => store.setLeaseTtl(ttl));
  return { leaseTtlMs: stored.lease_ttl_ms };
}
