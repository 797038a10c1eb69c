import type { ChildProcess } from "node:child_process";
import type { Socket } from "node:net";
import type { CliSpawnReply, CliSpawnRequest } from "@bridgeworks/protocol";
import { CliSpawnFailure, startChild } from "./cli-spawner.js";
import { signalProcessGroup } from "./process-identity.js";

/**
 * The CLI spawner's own loop (`dist/spawner-main.js`, floot's `bundle/spawner.mjs`): it starts each CLI
 * its parent asks for and hands the three pipes back unread, then reports the exit. It never outlives
 * its parent's channel: it exits when the channel closes, and it starts nothing once the channel is
 * gone, so a daemon that died leaves no spawn behind it but those it had asked for.
 */
export function runCliSpawner(): void {
  const send = process.send?.bind(process);
  if (send === undefined) throw new Error("the CLI spawner runs only as a child process with an IPC channel");
  // A reply that cannot be sent (the parent is gone) is dropped: the helper exits on `disconnect`.
  const reply = (message: CliSpawnReply, handle?: Socket) => send(message, handle, {}, () => {});
  process.on("disconnect", () => process.exit(0));
  // It ends with its parent's channel, not with a signal to the parent's whole process group (Ctrl-C,
  // `kill -- -pgid`): the parent is still stopping then, and may yet need it. SIGKILL still ends it.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => {});
  // Its parent's type checks what it sends; this end trusts its own parent.
  process.on("message", (request: CliSpawnRequest) => {
    if (!process.connected) return;
    startChild(request, {}, stopReading).then(
      (spawned) => {
        // The parent died while this one started: nobody will read it or record it, so end it now.
        if (!process.connected) {
          signalProcessGroup(spawned.pid, "SIGKILL");
          return;
        }
        reply({ type: "stdio", id: request.id, stream: "stdin" }, spawned.stdin as Socket);
        reply({ type: "stdio", id: request.id, stream: "stdout" }, spawned.stdout as Socket);
        reply({ type: "stdio", id: request.id, stream: "stderr" }, spawned.stderr as Socket);
        reply({
          type: "spawned",
          id: request.id,
          pid: spawned.pid,
          ...(spawned.startTime !== undefined && { startTime: spawned.startTime }),
        });
        void spawned.exit.then(({ code, signal }) => {
          if (process.connected) reply({ type: "exited", id: request.id, code, signal });
        });
      },
      (error: unknown) =>
        reply({
          type: "failed",
          id: request.id,
          message: error instanceof CliSpawnFailure ? error.message : String(error),
        }),
    );
  });
}

/**
 * Node starts reading a child's output pipes as it creates them, and whatever it read is dropped when
 * the pipe is sent on as a handle. Stopped in the spawn's own tick, nothing is read here: every byte
 * reaches the parent. (`_handle` is the pipe's libuv handle; Node has no public way to not read.)
 */
function stopReading(child: ChildProcess): void {
  for (const stream of [child.stdout, child.stderr])
    (stream as unknown as { _handle?: { readStop(): number } } | null)?._handle?.readStop();
}
