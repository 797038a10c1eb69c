import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import {
  type BridgeGeneration,
  gateRebindFileEnvVar,
  mintTurnMount,
  type ShimCommand,
  shimSocketEnvVar,
  shimTokenEnvVar,
  type TurnTokenRegistry,
} from "@bridgeworks/control-channel";
import type { TurnContext } from "./secret-broker.js";
import type { TurnMount, TurnMounts } from "./turn-run.js";

export interface TurnMountsInput {
  bridge: BridgeGeneration<TurnContext>;
  /** The MCP tokens: each opens one connection, the shim's. */
  tokens: TurnTokenRegistry<TurnContext>;
  /** The gate hook's tokens: they open the request channel only. */
  gateTokens: TurnTokenRegistry<TurnContext>;
  shim: ShimCommand;
  gateHook: string;
  gateDeadlineMs: number;
  /** The daemon's runtime dir's `rebind/`, when a later daemon can adopt its turns (a keeper runs). */
  rebindDir?: string;
  /** How often a kept turn's MCP connection is looked for (default 1 s); see `createTurnMounts`. */
  rebindCheckMs?: number;
}

/** Checks in a row that found a kept turn with neither its MCP connection nor a rebind file waiting. */
const checksBeforeReoffer = 3;

/**
 * What each turn's CLI gets to reach the daemon: the MCP mount (its token in a 0600 file the shim
 * removes once read) and the gate hook (the same socket, its own token in the CLI's environment,
 * which every command the agent runs inherits). With a `rebindDir`, both also name the turn's rebind
 * files there: a daemon that adopts the turn after a restart (`adopt`) writes its socket and fresh
 * tokens into them, so the shim reconnects and the gate hook reaches it. A rebind is not one-shot:
 * while such a turn's MCP connection is gone (after it was adopted, or after its shim had connected)
 * and no rebind file waits, a fresh one is written every few checks, so a shim whose reconnection
 * failed (refused, closed before it was served) is not left waiting for a file that never comes.
 * Releasing revokes the tokens, removes the files and closes their connections.
 */
export function createTurnMounts(input: TurnMountsInput): TurnMounts {
  const { bridge, tokens, gateTokens, shim, rebindDir } = input;
  const rebindFiles = (turnId: string) =>
    rebindDir === undefined
      ? undefined
      : { mcp: join(rebindDir, `${turnId}.mcp`), gate: join(rebindDir, `${turnId}.gate`) };
  const mountFor = (context: TurnContext, adopted: boolean): TurnMount => {
    const token = tokens.issue(context);
    const gateToken = gateTokens.issue(context);
    const offered: string[] = [];
    const socketPath = bridge.server.socketPath;
    const tokenFile = join(dirname(socketPath), `${randomUUID()}.token`);
    writeFileSync(tokenFile, token, { mode: 0o600, flag: "wx" });
    const rebind = rebindFiles(context.turnId);
    const offerRebind = (file: string) => {
      const fresh = tokens.issue(context);
      offered.push(fresh);
      writeAtomically(file, JSON.stringify({ socket: socketPath, token: fresh }));
    };
    let watch: NodeJS.Timeout | undefined;
    if (rebind !== undefined) {
      mkdirSync(rebindDir!, { recursive: true, mode: 0o700 });
      if (adopted) {
        writeAtomically(rebind.gate, JSON.stringify({ socket: socketPath, token: gateToken }));
        writeAtomically(rebind.mcp, JSON.stringify({ socket: socketPath, token }));
      }
      // Adopted: its shim lost the earlier daemon. Otherwise: once its shim has connected.
      let expectsConnection = adopted;
      let missed = 0;
      watch = setInterval(() => {
        if (bridge.server.mcpConnectionsOf(context) > 0) {
          expectsConnection = true;
          missed = 0;
        } else if (!expectsConnection || existsSync(rebind.mcp)) missed = 0;
        else if (++missed >= checksBeforeReoffer) {
          missed = 0;
          offerRebind(rebind.mcp);
        }
      }, input.rebindCheckMs ?? 1_000);
      watch.unref();
    }
    const mount = mintTurnMount({
      socketPath,
      token,
      tokenFile,
      shimCommand: shim,
      ...(rebind !== undefined && { rebindFile: rebind.mcp }),
    });
    return {
      mount,
      gate: {
        command: process.execPath,
        args: [input.gateHook],
        env: {
          [shimSocketEnvVar]: socketPath,
          [shimTokenEnvVar]: gateToken,
          ...(rebind !== undefined && { [gateRebindFileEnvVar]: rebind.gate }),
        },
        deadlineMs: input.gateDeadlineMs,
      },
      release() {
        clearInterval(watch);
        tokens.revoke(token);
        for (const fresh of offered) tokens.revoke(fresh);
        gateTokens.revoke(gateToken);
        rmSync(tokenFile, { force: true });
        if (rebind !== undefined) {
          rmSync(rebind.mcp, { force: true });
          rmSync(rebind.gate, { force: true });
        }
        bridge.server.closeConnectionsOf(context);
      },
    };
  };
  return {
    mount: (context) => mountFor(context, false),
    adopt: (context) => mountFor(context, true),
  };
}

/** 0600, whole or not at all: a reader sees no file or all of it. */
function writeAtomically(path: string, text: string): void {
  const temp = `${path}.${randomUUID()}.tmp`;
  writeFileSync(temp, text, { mode: 0o600, flag: "wx" });
  renameSync(temp, path);
}
