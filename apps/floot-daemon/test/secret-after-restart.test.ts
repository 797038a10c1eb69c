import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isProcessAlive, waitUntil } from "@bridgeworks/test-harness";
import { afterEach, describe, expect, test } from "vitest";
import {
  FlootWorld,
  filesContaining,
  filesUnder,
  providedSecret,
  requestSecretStep,
} from "./daemon-harness.js";

// After a restart the daemon's mask is empty until a value is submitted again (it lives in memory
// only). What could still print the value then: the credential file and the processes of the turn
// that had it. A tool here starts a process that leaves the CLI's process group and its process tree
// (a double fork into setsid, so neither the CLI's group nor its own child cleanup reaches it) and would
// copy the credential file after a while; the daemon is SIGKILLed mid-tool. The next start must end
// that process and remove the file before anything of it can be printed.

let world: FlootWorld | undefined;
let scratch: string | undefined;

afterEach(async () => {
  const problems = (await world?.dispose()) ?? [];
  world = undefined;
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
  expect(problems).toEqual([]);
});

describe("a submitted secret across a restart", () => {
  test("the turn's processes (one that left its group too) and its credential file do not survive the next start", async () => {
    const secret = `restart-secret-${randomBytes(12).toString("hex")}`;
    const provided = providedSecret();
    scratch = mkdtempSync(join(tmpdir(), "floot-after-restart-"));
    const pidFile = join(scratch, "later.pid");
    const copy = join(scratch, "copied-secret");
    const command =
      `f=$(ls "$FLOOT_RUNTIME_DIR"/*/secrets/*/cred-*); ` +
      `( setsid sh -c 'echo $$ > "$1"; sleep 6; cat "$2" > "$3"' sh ${pidFile} "$f" ${copy} ` +
      "</dev/null >/dev/null 2>&1 & ); sleep 120";
    world = await FlootWorld.create("claude", {
      steps: [
        {
          match: provided,
          repeat: true,
          response: {
            events: [
              {
                type: "tool_use",
                id: "toolu_later",
                name: "Bash",
                input: { command, description: "Copy the token later" },
              },
            ],
          },
        },
        requestSecretStep("[secret]"),
      ],
    });
    const w = world;
    await w.startDaemon();
    // Unconfined: the fencing of a process that left the CLI's group, not the sandbox, is what is shown.
    const session = await w.createSession({ sandbox: { enabled: false } });
    const turn = await w.send(session.id, "[secret] deploy it");
    await w.waitForTurn(turn.id, (t) => t.phase === "awaiting_secret", "awaiting_secret");
    const [pending] = await w.secretRequests();
    await w.client.request("POST", `/v1/secret-requests/${pending!.id}/submit`, { value: secret });
    await waitUntil(() => existsSync(pidFile), 60_000, "the tool started its process");
    const later = Number(readFileSync(pidFile, "utf8").trim());
    expect(isProcessAlive(later)).toBe(true);
    const credentials = () => filesUnder(w.runtimeDir).filter((path) => path.includes("cred-"));
    expect(credentials()).toHaveLength(1);

    // The keeper killed too (its CLI orphaned, fenced at start): a kept turn's processes would survive.
    await w.killDaemonAndKeeper();
    await w.startDaemon();
    expect((await w.waitForEnd(turn.id)).phase).toBe("interrupted");
    expect(isProcessAlive(later)).toBe(false);
    expect(credentials()).toEqual([]);
    // Past the moment the process would have copied the file: nothing was copied.
    await new Promise((resolve) => setTimeout(resolve, 7_000));
    expect(existsSync(copy)).toBe(false);
    expect(filesContaining([w.stateDir, w.runtimeDir], secret)).toEqual([]);
  }, 240_000);
});
