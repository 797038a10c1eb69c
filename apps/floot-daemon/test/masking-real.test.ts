import { execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { ScriptInput } from "@bridgeworks/model-double";
import {
  type FlootApiError,
  type PermissionRequest,
  type SecretRequest,
  secretValueMinLength,
  type TurnEvent,
} from "@bridgeworks/protocol";
import { waitUntil } from "@bridgeworks/test-harness";
import { afterEach, describe, expect, test } from "vitest";
import { bundlePath, FlootWorld, filesContaining, requestSecretStep } from "./daemon-harness.js";

// Masking end to end, with the real claude 2.1.332 and the model double: a submitted secret holding `"`
// and `\` is printed by a tool, then written into later calls' inputs, so the daemon sees it as is, as
// JSON text (`\"`, `\\`) and as JSON text of JSON text; none of it may reach the journal or a reader.

let world: FlootWorld | undefined;
const cleanups: (() => void)[] = [];
afterEach(async () => {
  const problems = (await world?.dispose()) ?? [];
  world = undefined;
  for (const cleanup of cleanups.splice(0)) cleanup();
  expect(problems).toEqual([]);
});

const marker = "***SECRET(API_TOKEN)***";
const provided = (request: { body: unknown }) => JSON.stringify(request.body).includes("provided API_TOKEN");

/** `text` in shell double quotes: `\`, `"`, `$` and backquote escaped. */
const shellQuoted = (text: string) => `"${text.replace(/[\\"$`]/g, "\\$&")}"`;

async function floot(w: FlootWorld, argv: string[], stdin?: string): Promise<{ code: number; out: string }> {
  const child = spawn(process.execPath, [bundlePath, ...argv, "--state", w.stateDir, "--json"], {
    env: w.env.env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stdin.end(stdin);
  const code = await new Promise<number>((resolve) => child.on("exit", (status) => resolve(status ?? -1)));
  return { code, out };
}

async function approvalList(w: FlootWorld): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [bundlePath, "approval", "list", "--state", w.stateDir, "--json"],
    { env: w.env.env },
  );
  return stdout;
}

/**
 * Decides every permission request of the turn as it comes (`deny` for the calls named there, else
 * allow once) until the turn ends; returns the requests as asked and each `approval list` that showed one.
 */
async function decideUntilEnd(
  w: FlootWorld,
  turnId: string,
  deny: readonly string[],
): Promise<{ asked: PermissionRequest[]; listed: string[] }> {
  const asked: PermissionRequest[] = [];
  const listed: string[] = [];
  await waitUntil(
    async () => {
      const text = await approvalList(w);
      const { requests } = JSON.parse(text) as { requests: PermissionRequest[] };
      for (const request of requests.filter((each) => each.turnId === turnId && each.status === "pending")) {
        asked.push(request);
        listed.push(text);
        const decision = deny.includes(request.toolCallKey)
          ? ["approval", "deny", request.id, "--message", "not now"]
          : ["approval", "allow", request.id];
        const decided = await floot(w, decision);
        expect(decided.code, decided.out).toBe(0);
      }
      return (await w.turn(turnId)).phase === "completed";
    },
    180_000,
    `turn ${turnId} completes`,
  ).catch(async (error: unknown) => {
    const events = (await w.events(turnId)).map(({ event }) => event);
    throw new Error(
      `${(error as Error).message}; asked about ${asked.map((each) => each.toolCallKey)}; events ${JSON.stringify(events)}\n${w.daemon?.process.stderr()}`,
    );
  });
  return { asked, listed };
}

async function pendingSecret(w: FlootWorld): Promise<SecretRequest> {
  let found: SecretRequest | undefined;
  await waitUntil(
    async () => {
      [found] = await w.secretRequests();
      return found !== undefined;
    },
    60_000,
    `a secret request\n${w.daemon?.process.stderr()}`,
  );
  return found!;
}

function bashStep(after: ScriptInput["steps"][number]["match"], id: string, command: string) {
  return {
    match: after,
    repeat: true,
    response: {
      events: [{ type: "tool_use" as const, id, name: "Bash", input: { command, description: "run" } }],
    },
  };
}

describe("masking: claude", () => {
  test("a secret with a quote and a backslash, printed and then in later calls' inputs: no byte of it or its escapes reaches the journal, -wal, events API or approval list", async () => {
    const core = randomBytes(12).toString("hex");
    const secret = `q"x\\${core}\\"y`;
    const escaped = (text: string) => JSON.stringify(text).slice(1, -1);
    const forms = [secret, escaped(secret), escaped(escaped(secret)), escaped(escaped(escaped(secret)))];
    const base64 = Buffer.from(secret).toString("base64");
    // Prints the credential file as is, base64 and as a JSON string (jq); the result names the file.
    const printIt =
      'f=$(ls "$FLOOT_RUNTIME_DIR"/*/secrets/*/cred-*); cat "$f"; echo; base64 -w0 "$f"; echo; jq -Rs . "$f"';
    // The model read the value and uses it: in shell double quotes (`\"`, `\\`), and in JSON in them
    // (written to a file, so Claude Code asks about the call: it runs a read-only printf unasked).
    const useIt = `printf '%s\\n' ${shellQuoted(secret)} ${shellQuoted(JSON.stringify({ token: secret }))} > used.txt`;
    const workspace = mkdtempSync(join(tmpdir(), "floot-mask-"));
    cleanups.push(() => rmSync(workspace, { recursive: true, force: true }));
    world = await FlootWorld.create("claude", {
      // The most specific first: every later request's history still holds "provided API_TOKEN".
      steps: [
        {
          match: { toolResultFor: "toolu_write" },
          repeat: true,
          response: { events: [{ type: "text", text: "MASKED DONE" }] },
        },
        {
          match: { toolResultFor: "toolu_use" },
          repeat: true,
          response: {
            events: [
              {
                type: "tool_use",
                id: "toolu_write",
                name: "Write",
                input: {
                  file_path: join(workspace, "token.json"),
                  content: JSON.stringify({ token: secret }),
                },
              },
            ],
          },
        },
        bashStep({ toolResultFor: "toolu_print" }, "toolu_use", useIt),
        bashStep(provided, "toolu_print", printIt),
        requestSecretStep("[mask]"),
      ],
    });
    const w = world;
    await w.startDaemon();
    // Every call is asked about, so each one's input becomes a permission request's summary.
    const session = await w.createSession({ workspace, allowedTools: [], permissionMode: "default" });
    const turn = await w.send(session.id, "[mask] deploy it");
    const asked = await pendingSecret(w);
    const submitted = await floot(w, ["secret", "submit", asked.id], `${secret}\n`);
    expect(submitted.code, submitted.out).toBe(0);

    const { asked: requests, listed: listedAll } = await decideUntilEnd(w, turn.id, ["toolu_write"]);
    const requestOf = (toolCallKey: string) => requests.find((each) => each.toolCallKey === toolCallKey);
    expect(requests.map((each) => each.toolCallKey)).toEqual(["toolu_print", "toolu_use", "toolu_write"]);

    // The tool did print it and the model did send it back: the daemon saw every form.
    const toolResult = w.double.requests.find((r) => JSON.stringify(r.body).includes("toolu_print"));
    expect(JSON.stringify(toolResult?.body)).toContain(core);
    // Each request's summary and each admitted call's preview holds the marker where the value was.
    expect(requestOf("toolu_use")?.inputSummary).toContain(marker);
    expect(requestOf("toolu_write")?.inputSummary).toContain(marker);
    const events = await w.events(turn.id);
    const admitted = (id: string) =>
      events.flatMap(({ event }: { event: TurnEvent }) =>
        event.type === "tool.admitted" && event.toolId === id ? [event.inputPreview] : [],
      );
    expect(admitted("toolu_use").join("")).toContain(marker);
    expect(admitted("toolu_write").join("")).toContain(marker);
    // Structure kept: every event parses and keeps its type.
    expect(events.map(({ event }) => event.type)).toEqual(
      expect.arrayContaining(["tool.admitted", "permission.requested", "tool.completed", "terminal"]),
    );

    // No byte of the value, in any escape, or its base64: the journal and its -wal (the daemon is still
    // running, so the WAL is there), the events API, `floot approval list --json`, the daemon's log.
    const eventsText = JSON.stringify(events);
    const afterwards = await approvalList(w);
    for (const needle of [core, base64]) {
      expect(filesContaining([w.stateDir], needle)).toEqual([]);
      expect(eventsText).not.toContain(needle);
      for (const text of [...listedAll, afterwards]) expect(text).not.toContain(needle);
      expect(w.daemon!.process.stderr()).not.toContain(needle);
    }
    for (const form of forms) {
      expect(eventsText).not.toContain(form);
      expect(filesContaining([w.stateDir], form)).toEqual([]);
    }
  }, 240_000);

  test(`a secret shorter than ${secretValueMinLength} characters is refused at submission with the reason; the request stays open for a proper value`, async () => {
    world = await FlootWorld.create("claude", {
      steps: [
        requestSecretStep("[short]"),
        { match: provided, repeat: true, response: { events: [{ type: "text", text: "GOT IT" }] } },
      ],
    });
    const w = world;
    await w.startDaemon();
    const session = await w.createSession();
    const turn = await w.send(session.id, "[short] deploy it");
    const asked = await pendingSecret(w);

    // The CLI shows the daemon's reason and fails; nothing was delivered.
    const refused = await floot(w, ["secret", "submit", asked.id], "ta\n");
    expect(refused.code).toBe(1);
    const error = JSON.parse(refused.out.trim().split("\n").at(-1)!) as FlootApiError;
    expect(error.error.code).toBe("secret_too_short");
    expect(error.error.message).toContain(`at least ${secretValueMinLength} characters`);
    // The API itself: 400, the same code, naming the minimum.
    const direct = await w.client
      .request("POST", `/v1/secret-requests/${asked.id}/submit`, {
        value: "a".repeat(secretValueMinLength - 1),
      })
      .then(
        () => undefined,
        (problem: { status?: number; code?: string; message: string }) => problem,
      );
    expect(direct).toMatchObject({ status: 400, code: "secret_too_short" });
    expect(direct?.message).toContain(`${secretValueMinLength}`);

    // Still open: the same request, pending, and its turn still waits for it.
    expect(await w.secretRequests()).toEqual([asked]);
    expect((await w.turn(turn.id)).phase).toBe("awaiting_secret");
    const proper = await floot(w, ["secret", "submit", asked.id], "long-enough-value\n");
    expect(proper.code, proper.out).toBe(0);
    expect((await w.waitForEnd(turn.id)).phase).toBe("completed");
    expect(await w.secretRequests()).toEqual([]);
  });
});
