import type { FlootDaemonStatus, FlootSessionList } from "@bridgeworks/protocol";
import { ClientError } from "../client/api-client.js";
import { shutDownKeeper } from "../daemon/keeper-link.js";
import { resolveRuntimeDir } from "../daemon/runtime-dir.js";
import type { FlootContext } from "./context.js";
import { connect, pathId } from "./daemon-connection.js";

export interface DaemonStopResult {
  /** The daemon that was asked to stop (SIGTERM), if one ran. */
  stoppedPid?: number;
  /** The turns cancelled through the daemon before it stopped. */
  cancelledTurns: string[];
  /** Whether a keeper was ended (with every CLI it kept). */
  keeperEnded: boolean;
}

/**
 * `floot daemon stop [--cancel-turns]`: SIGTERM to the running daemon of the state dir (found through
 * its socket, so the pid is the one that daemon reports), which leaves its turns' CLIs to the keeper
 * for the next start. With `cancelTurns`, every running turn is cancelled first (recorded cancelled),
 * and after the daemon exited the keeper is ended with whatever it still keeps; with no daemon
 * running, only that last step.
 */
export async function stopDaemon(
  context: FlootContext,
  stateDir: string,
  cancelTurns: boolean,
  waitMs = 30_000,
): Promise<DaemonStopResult> {
  const result: DaemonStopResult = { cancelledTurns: [], keeperEnded: false };
  const client = (() => {
    try {
      return connect(context, stateDir);
    } catch (error) {
      if (error instanceof ClientError) return undefined;
      throw error;
    }
  })();
  const status = await client?.request<FlootDaemonStatus>("GET", "/v1/status").catch(() => undefined);
  if (client !== undefined && status !== undefined) {
    if (cancelTurns) {
      let cursor: string | undefined;
      do {
        const page = await client.request<FlootSessionList>(
          "GET",
          `/v1/sessions${cursor === undefined ? "" : `?cursor=${encodeURIComponent(cursor)}`}`,
        );
        for (const session of page.sessions) {
          if (session.activeTurnId === undefined) continue;
          await client.request("POST", `/v1/turns/${pathId(session.activeTurnId)}/cancel`).then(
            () => result.cancelledTurns.push(session.activeTurnId!),
            // Ended meanwhile: nothing to cancel.
            () => undefined,
          );
        }
        cursor = page.nextCursor;
      } while (cursor !== undefined);
    }
    process.kill(status.pid, "SIGTERM");
    result.stoppedPid = status.pid;
    await waitForExit(status.pid, waitMs);
  }
  if (cancelTurns) {
    const runtime = resolveRuntimeDir(stateDir, context.env);
    result.keeperEnded = await shutDownKeeper(runtime.path);
  }
  return result;
}

async function waitForExit(pid: number, waitMs: number): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    if (Date.now() > deadline)
      throw new ClientError(`the daemon (pid ${pid}) did not exit within ${waitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
