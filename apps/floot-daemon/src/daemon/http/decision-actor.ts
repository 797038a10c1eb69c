import type { IncomingMessage } from "node:http";
import type { DecisionActor } from "@bridgeworks/protocol";
import type { PeerLookup } from "../peer-process.js";
import { type LiveTurnProcess, type ReadProcessFacts, turnOfProcess } from "../turn-membership.js";
import { ApiError } from "./api-error.js";
import type { Caller } from "./guards.js";

export interface DecisionActorOptions {
  lookUpPeer(socket: IncomingMessage["socket"]): Promise<PeerLookup>;
  /** The CLIs of the turns running now. */
  liveTurnProcesses(): readonly LiveTurnProcess[];
  readProcessFacts?: ReadProcessFacts;
}

/**
 * Who makes a request that decides something (a permission, a secret, a session, a turn): the signed-in
 * page, or the local process at the other end of the connection. A process of a running turn is refused:
 * an agent never decides for the person, whatever its commands can reach (see turn-membership.ts).
 */
export function createDecisionActors(options: DecisionActorOptions) {
  return async function actorOf(
    request: IncomingMessage,
    transport: "tcp" | "socket",
    caller: Caller,
    what: string,
  ): Promise<DecisionActor> {
    if (caller.kind === "page") return { via: "web", signIn: caller.signIn, origin: caller.origin };
    const via = transport === "socket" ? "socket" : "api_token";
    const found = await options.lookUpPeer(request.socket);
    if ("unknown" in found) return { via, peerUnknown: found.unknown };
    const live = options.liveTurnProcesses();
    for (const peer of found.peers) {
      const turn = turnOfProcess(peer.pid, live, options.readProcessFacts);
      if (turn !== undefined) {
        throw new ApiError(
          "forbidden",
          `process ${peer.pid} belongs to running turn ${turn}: an agent's process may not ${what}; a person decides`,
        );
      }
    }
    return { via, peer: found.peers[0]! };
  };
}

export type DecisionActors = ReturnType<typeof createDecisionActors>;
