import { randomUUID } from "node:crypto";
import { rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  type BridgeGeneration,
  mintTurnMount,
  type ShimCommand,
  shimSocketEnvVar,
  shimTokenEnvVar,
  type TurnTokenRegistry,
} from "@bridgeworks/control-channel";
import type { TurnContext } from "./secret-broker.js";
import type { TurnMounts } from "./turn-run.js";

export interface TurnMountsInput {
  bridge: BridgeGeneration<TurnContext>;
  /** The MCP tokens: each opens one connection, the shim's. */
  tokens: TurnTokenRegistry<TurnContext>;
  /** The gate hook's tokens: they open the request channel only. */
  gateTokens: TurnTokenRegistry<TurnContext>;
  shim: ShimCommand;
  gateHook: string;
  gateDeadlineMs: number;
}

/**
 * What each turn's CLI gets to reach the daemon: the MCP mount (its token in a 0600 file the shim
 * removes once read) and the gate hook (the same socket, its own token in the CLI's environment,
 * which every command the agent runs inherits). Releasing revokes both and closes their connections.
 */
export function createTurnMounts(input: TurnMountsInput): TurnMounts {
  const { bridge, tokens, gateTokens, shim } = input;
  return {
    mount(context) {
      const token = tokens.issue(context);
      const gateToken = gateTokens.issue(context);
      const socketPath = bridge.server.socketPath;
      const tokenFile = join(dirname(socketPath), `${randomUUID()}.token`);
      writeFileSync(tokenFile, token, { mode: 0o600, flag: "wx" });
      const mount = mintTurnMount({ socketPath, token, tokenFile, shimCommand: shim });
      return {
        mount,
        gate: {
          command: process.execPath,
          args: [input.gateHook],
          env: { [shimSocketEnvVar]: socketPath, [shimTokenEnvVar]: gateToken },
          deadlineMs: input.gateDeadlineMs,
        },
        release() {
          tokens.revoke(token);
          gateTokens.revoke(gateToken);
          rmSync(tokenFile, { force: true });
          bridge.server.closeConnectionsOf(context);
        },
      };
    },
  };
}
