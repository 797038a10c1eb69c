import { execFile } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { promisify } from "node:util";
import { type ScriptInput, textReply } from "@bridgeworks/model-double";
import {
  type FlootSession,
  secretValueMinLength,
  type TurnRecord,
  type UiCredential,
} from "@bridgeworks/protocol";
import type { Page } from "playwright-core";
import { describe, expect, test } from "vitest";
import {
  browserTestScope,
  openBrowser,
  openSessionPage,
  openSignedIn,
  pageOrigin,
  screenshot,
  sendFromPage,
  signInLink,
  tooWide,
} from "./browser.js";
import { bundlePath, FlootWorld, filesContaining } from "./daemon-harness.js";

// Acceptance of the web UI: Debian's Chromium through playwright-core, the built daemon, real `claude`
// against the model double. Screenshots land in test-results/web-ui/.

const run = promisify(execFile);

const scope = browserTestScope();

async function setUp(script: ScriptInput): Promise<FlootWorld> {
  const world = await FlootWorld.create("claude", script);
  scope.world = world;
  await world.startDaemon();
  return world;
}

const baseOf = pageOrigin;

async function signIn(w: FlootWorld): Promise<Page> {
  scope.browser = await openSignedIn(w);
  return scope.browser.page;
}

async function openSession(page: Page, w: FlootWorld, session: FlootSession): Promise<void> {
  await openSessionPage(page, w, session.id);
}

/** What the page shows of a turn: the event index of every rendered element, and its texts. */
async function renderedTurn(page: Page, turnId: string) {
  return page.evaluate((id) => {
    const turn = document.querySelector(`[data-turn-id="${id}"]`) as HTMLElement | null;
    if (!turn) return undefined;
    const items = [...turn.querySelectorAll<HTMLElement>(".turn-body > [data-event-index]")];
    return {
      nextIndex: Number(turn.dataset.nextIndex ?? 0),
      phase: turn.dataset.phase,
      indexes: items.map((item) => Number(item.dataset.eventIndex)),
      texts: [...turn.querySelectorAll(".assistant-text")].map((item) => item.textContent),
    };
  }, turnId);
}

async function currentTurn(w: FlootWorld, sessionId: string): Promise<TurnRecord> {
  return w.client.request<TurnRecord>("GET", `/v1/sessions/${sessionId}/current-turn`);
}

const json = { "content-type": "application/json" };

function rawRequest(
  port: number,
  path: string,
  headers: Record<string, string>,
  method = "GET",
  body?: string,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: "127.0.0.1", port, path, method, headers }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on("error", reject);
    request.end(body);
  });
}

describe("web UI", () => {
  test("1+6. the floot open link signs in once; the page's access token is bound to its origin, kept in no storage; the stored token opens nothing; no cookie exists", async () => {
    const w = await setUp({
      steps: [textReply("[first]", "FIRST REPLY"), textReply("[phone]", "PHONE REPLY")],
    });
    const base = baseOf(w);
    const port = w.daemon!.file.port;
    // The page itself holds no secret; without a token the API refuses.
    const index = await fetch(`${base}/`);
    expect(index.status).toBe(200);
    expect(await index.text()).not.toContain(w.daemon!.file.token);
    expect((await fetch(`${base}/v1/sessions`)).status).toBe(401);
    const { publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const { x, y } = publicKey.export({ format: "jwk" });
    const someKey = { kty: "EC", crv: "P-256", x, y };
    expect(
      await rawRequest(
        port,
        "/ui/sign-in",
        json,
        "POST",
        JSON.stringify({ code: "A".repeat(43), publicKey: someKey }),
      ),
    ).toBe(401);
    // A sign-in without the page's public key is malformed.
    expect(
      await rawRequest(port, "/ui/sign-in", json, "POST", JSON.stringify({ code: "A".repeat(43) })),
    ).toBe(400);

    const url = await signInLink(w);
    const code = /#login=([A-Za-z0-9_-]{43})$/.exec(url)?.[1];
    expect(code).toBeDefined();
    scope.browser = await openBrowser();
    const { page, context } = scope.browser;
    const sent: { url: string; authorization?: string }[] = [];
    page.on("request", (request) =>
      sent.push({ url: request.url(), authorization: request.headers().authorization }),
    );
    await page.goto(url);
    await page.getByRole("heading", { name: "Sessions" }).waitFor();
    await page.locator('body[data-connection="online"]').waitFor();
    // The code left the address bar at once, and no request carried it in its URL.
    expect(page.url()).toBe(`${base}/#/`);
    expect(sent.filter((each) => each.url.includes(code!))).toEqual([]);

    // No cookie at all; the sign-in is in this tab's sessionStorage, bound to this origin, its keys in
    // IndexedDB as CryptoKeys that do not export.
    expect(await context.cookies()).toEqual([]);
    expect(await page.evaluate(() => document.cookie)).toBe("");
    const credential = JSON.parse(
      (await page.evaluate(() => sessionStorage.getItem("floot.credential"))) ?? "{}",
    ) as UiCredential;
    expect(credential.origin).toBe(base);
    expect(credential.identityKey).toBeUndefined();
    expect(await page.content()).not.toContain(w.daemon!.file.token);
    const keys = await page.evaluate(async () => {
      const database = await new Promise<IDBDatabase>((resolve) => {
        const opening = indexedDB.open("floot");
        opening.onsuccess = () => resolve(opening.result);
      });
      const records = await new Promise<Record<string, unknown>[]>((resolve) => {
        const reading = database.transaction("page-keys").objectStore("page-keys").getAll();
        reading.onsuccess = () => resolve(reading.result as Record<string, unknown>[]);
      });
      return Promise.all(
        records.flatMap((record) =>
          Object.values(record)
            .filter((value): value is CryptoKey => value instanceof CryptoKey)
            .map(async (key) => ({
              type: key.type,
              extractable: key.extractable,
              exported: await crypto.subtle.exportKey("jwk", key).then(
                () => "exported",
                (error: Error) => error.name,
              ),
            })),
        ),
      );
    });
    expect(keys).toEqual([
      { type: "private", extractable: false, exported: "InvalidAccessError" },
      { type: "secret", extractable: false, exported: "InvalidAccessError" },
    ]);
    // Every API call carried one access token (never the stored token, never the API token) as a
    // header; it is in no storage of the page.
    const apiCalls = sent.filter((each) => new URL(each.url).pathname.startsWith("/v1/"));
    expect(apiCalls.length).toBeGreaterThan(0);
    const bearers = new Set(apiCalls.map((each) => each.authorization));
    expect(bearers.size).toBe(1);
    const accessToken = /^Bearer ([A-Za-z0-9_-]{43})$/.exec([...bearers][0] ?? "")?.[1];
    expect(accessToken).toBeDefined();
    expect([credential.token, w.daemon!.file.token]).not.toContain(accessToken);
    const storage = await page.evaluate(() => JSON.stringify({ ...sessionStorage, ...localStorage }));
    expect(storage).not.toContain(accessToken);

    // The code was single use.
    expect(
      await rawRequest(port, "/ui/sign-in", json, "POST", JSON.stringify({ code, publicKey: someKey })),
    ).toBe(401);

    // The stored token is no Bearer.
    expect(await rawRequest(port, "/v1/sessions", { authorization: `Bearer ${credential.token}` })).toBe(401);

    // A foreign Origin or Host is refused, with the page's access token as with the API token.
    const bearer = { authorization: `Bearer ${accessToken}` };
    expect(await rawRequest(port, "/v1/sessions", bearer)).toBe(200);
    expect(await rawRequest(port, "/v1/sessions", { ...bearer, origin: "http://evil.example" })).toBe(403);
    expect(await rawRequest(port, "/v1/sessions", { ...bearer, host: `evil.example:${port}` })).toBe(403);
    expect(await rawRequest(port, "/", { host: `evil.example:${port}` })).toBe(403);
    expect(
      await rawRequest(port, "/v1/sessions", {
        authorization: `Bearer ${w.daemon!.file.token}`,
        host: `attacker.test:${port}`,
      }),
    ).toBe(403);
    // Bound to its origin: the same token named for localhost:<port> is another origin's, refused.
    expect(await rawRequest(port, "/v1/sessions", { ...bearer, host: `localhost:${port}` })).toBe(401);
    // The page's token can change things (nothing ambient can), but cannot mint sign-in codes.
    const body = JSON.stringify({ backend: "claude" });
    expect(await rawRequest(port, "/v1/sessions", { ...json, ...bearer }, "POST", body)).toBe(201);
    expect(await rawRequest(port, "/v1/ui/login-codes", { ...bearer, origin: base }, "POST")).toBe(403);

    // The new-session form works from the page (same origin); it comes first, before the list, and its
    // first prompt is sent as the session's first turn.
    await expect(
      page
        .locator(".new-session")
        .evaluate(
          (form) =>
            (form.compareDocumentPosition(document.querySelector("#all-sessions")!) &
              Node.DOCUMENT_POSITION_FOLLOWING) !==
            0,
        ),
    ).resolves.toBe(true);
    await page.getByText("Options: model, workspace, sandbox").click();
    await page.getByLabel("Workspace").fill(join(w.env.root, "ws-from-form"));
    await page.getByLabel("First prompt").fill("[first] say hello");
    await page.getByRole("button", { name: "Create session" }).click();
    await page.locator(".session-head h1 code").waitFor();
    await page.getByText("FIRST REPLY").waitFor({ timeout: 90_000 });
    const created = (await w.client.request<{ sessions: FlootSession[] }>("GET", "/v1/sessions")).sessions;
    const fromForm = created.find((s) => s.workspace === join(w.env.root, "ws-from-form"));
    expect(fromForm).toBeDefined();
    expect((await w.turns(fromForm!.id)).map((turn) => turn.input.prompt)).toEqual(["[first] say hello"]);
    expect(page.url()).toMatch(/#\/s\//);

    // The same form on a 390×844 phone: first on the page, inside the screen, its button on screen
    // once the prompt is typed; the session it makes shows its reply.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${base}/#/`);
    await page.getByLabel("First prompt").fill("[phone] say hello");
    const create = page.getByRole("button", { name: "Create session" });
    await create.scrollIntoViewIfNeeded();
    const box = (await create.boundingBox())!;
    expect(box.x + box.width).toBeLessThanOrEqual(390);
    expect(box.y + box.height).toBeLessThanOrEqual(844);
    await expect(tooWide(page)).resolves.toEqual([]);
    await create.click();
    await page.getByText("PHONE REPLY").waitFor({ timeout: 90_000 });
    await expect(tooWide(page)).resolves.toEqual([]);
  });

  test("2+3. a prompt streams in as the double emits it; a reload mid-turn replays the same events once, then the tail", async () => {
    const w = await setUp({
      steps: [
        {
          match: { lastUserTextIncludes: "[stream]" },
          response: {
            events: [
              { type: "thinking", thinking: "The user wants three parts, one at a time." },
              { type: "text", text: "Alpha: the first part." },
              { type: "delay", ms: 2_500 },
              { type: "text", text: "Beta: the second part." },
              { type: "delay", ms: 2_500 },
              { type: "text", text: "Gamma: the last part." },
            ],
            usage: { input_tokens: 1_240, output_tokens: 96, cache_read_input_tokens: 800 },
          },
        },
        textReply("[earlier]", "Done: the repository has 3 packages."),
      ],
    });
    const session = await w.createSession();
    await w.waitForEnd((await w.send(session.id, "[earlier] how many packages are there?")).id);
    await w.createSession();
    const page = await signIn(w);
    await openSession(page, w, session);

    await sendFromPage(page, "[stream] explain it in three parts");
    await page.getByText("Alpha: the first part.").waitFor({ timeout: 60_000 });
    const turn = await currentTurn(w, session.id);
    // Seen before the double emitted the next block.
    expect(w.double.requests.filter((r) => JSON.stringify(r.body).includes("[stream]")).length).toBe(1);
    expect(await page.getByText("Gamma: the last part.").count()).toBe(0);
    expect(await page.getByRole("button", { name: "Queue" }).count()).toBe(1);
    await screenshot(page, "session-streaming");

    // Reload mid-turn: the page reattaches by identity.
    await page.reload();
    await page.getByText("Gamma: the last part.").waitFor({ timeout: 60_000 });
    await page.locator(`[data-turn-id="${turn.id}"][data-phase="completed"]`).waitFor();
    const done = await w.waitForEnd(turn.id);
    const shown = await renderedTurn(page, turn.id);
    expect(shown?.texts).toEqual([
      "Alpha: the first part.",
      "Beta: the second part.",
      "Gamma: the last part.",
    ]);
    expect(shown?.nextIndex).toBe(done.eventCount);
    const indexes = shown!.indexes;
    expect(indexes).toEqual([...indexes].sort((a, b) => a - b));
    expect(new Set(indexes).size).toBe(indexes.length);
    await expect(page.locator(`[data-turn-id="${turn.id}"] .thinking`).count()).resolves.toBe(1);
    await expect(page.locator(`[data-turn-id="${turn.id}"] .usage`).textContent()).resolves.toContain("in");

    // Readable at phone width, in the dark scheme too.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ colorScheme: "dark" });
    await screenshot(page, "session-phone-dark");
    await page.setViewportSize({ width: 1100, height: 820 });
    await page.emulateMedia({ colorScheme: "light" });

    await page.goto(`${baseOf(w)}/#/`);
    await page.locator(`[data-session-id="${session.id}"] .phase-completed`).waitFor();
    await screenshot(page, "sessions-list");
  });

  test("4. SIGKILL with the page open: it shows it is reconnecting, then the interrupted turn and a working Retry", async () => {
    const w = await setUp({
      steps: [
        {
          match: { lastUserTextIncludes: "[crash]" },
          response: { events: [{ type: "text", text: "Partial work before the crash." }, { type: "stall" }] },
        },
        textReply("[crash]", "Finished on retry."),
      ],
    });
    const session = await w.createSession();
    const page = await signIn(w);
    await openSession(page, w, session);
    await sendFromPage(page, "[crash] start the work");
    await page.getByText("Partial work before the crash.").waitFor({ timeout: 60_000 });
    const turn = await currentTurn(w, session.id);
    const port = w.daemon!.file.port;

    // The keeper killed too: the turn's CLI goes with it, so the turn is recovered, not adopted.
    await w.killDaemonAndKeeper();
    await page.locator('body[data-connection="offline"]').waitFor({ timeout: 15_000 });
    await expect(page.getByRole("alert").textContent()).resolves.toContain("Reconnecting");
    await screenshot(page, "session-reconnecting");

    await w.startDaemon();
    expect(w.daemon!.file.port).toBe(port);
    await page.locator('body[data-connection="online"]').waitFor({ timeout: 30_000 });
    await expect(page.getByRole("alert").textContent()).resolves.toMatch(
      /The daemon restarted after \d+ s \(generation \d+\): 1 turn interrupted/,
    );
    const interrupted = page.locator(`[data-turn-id="${turn.id}"][data-phase="interrupted"]`);
    await interrupted.waitFor({ timeout: 30_000 });
    await expect(interrupted.getByText("Partial work before the crash.").count()).resolves.toBe(1);
    const record = await w.turn(turn.id);
    expect((await renderedTurn(page, turn.id))?.nextIndex).toBe(record.eventCount);

    await interrupted.getByRole("button", { name: "Retry" }).click();
    await page.getByText("Finished on retry.").waitFor({ timeout: 60_000 });
    const turns = await w.turns(session.id);
    const retry = turns.find((t) => t.retryOf === turn.id)!;
    expect((await w.waitForEnd(retry.id)).phase).toBe("completed");
    await page.locator(`[data-turn-id="${retry.id}"][data-phase="completed"]`).waitFor();
    await expect(interrupted.getByRole("button", { name: "Retry" }).count()).resolves.toBe(0);
  });

  test("4b. a planned restart (SIGTERM, then a new start) with the page open and a turn streaming: the same port, the page reconnects by itself, says the turn kept running, and shows every word once", async () => {
    const words = Array.from({ length: 12 }, (_, index) => `word${index}`).join(" ");
    const w = await setUp({
      steps: [
        {
          match: { lastUserTextIncludes: "[stream]" },
          response: { events: [{ type: "text", text: words, chunks: 12, deltaDelayMs: 400 }] },
        },
        textReply("[after]", "Served by the new daemon."),
      ],
    });
    const session = await w.createSession();
    const page = await signIn(w);
    await openSession(page, w, session);
    const port = w.daemon!.file.port;
    const generation = w.daemon!.file.generation;
    await sendFromPage(page, "[stream] say the words");
    await page.locator(".assistant-text", { hasText: "word0" }).first().waitFor({ timeout: 60_000 });
    const turn = await currentTurn(w, session.id);

    await w.stopDaemon();
    // A clean stop removes daemon.json; the next start still takes the port the page knows.
    expect(w.readDaemonFile()).toBeUndefined();
    await page.locator('body[data-connection="offline"]').waitFor({ timeout: 15_000 });
    await w.startDaemon();
    expect(w.daemon!.file.port).toBe(port);
    expect(w.daemon!.file.generation).toBe(generation + 1);
    await page.locator('body[data-connection="online"]').waitFor({ timeout: 30_000 });
    await expect(page.getByRole("alert").textContent()).resolves.toMatch(
      new RegExp(
        `The daemon restarted after \\d+ s \\(generation ${generation + 1}\\): 1 turn kept running\\.`,
      ),
    );
    // The page went on following the kept turn: its whole answer once, no event lost or doubled.
    const done = page.locator(`[data-turn-id="${turn.id}"][data-phase="completed"]`);
    await done.waitFor({ timeout: 90_000 });
    const record = await w.turn(turn.id);
    expect(record.attempt).toBe(1);
    const shown = await renderedTurn(page, turn.id);
    expect(shown?.texts.join("")).toBe(words);
    expect(shown?.nextIndex).toBe(record.eventCount);
    // No sign-in again: the page sends a turn to the new daemon.
    await sendFromPage(page, "[after] still there?");
    await page.getByText("Served by the new daemon.").waitFor({ timeout: 60_000 });
  });

  test("5. a requestSecret form survives a restart and a value too short to mask; submitting completes the turn; a tool printing the secret leaves it nowhere", async () => {
    const secret = `s3cr3t-${Math.random().toString(36).slice(2)}-${Date.now()}`;
    const provided = (r: { body: unknown }) => JSON.stringify(r.body).includes("provided API_TOKEN");
    // The tool prints the value as is and base64-encoded (the credential file the result named, in the
    // runtime dir's `secrets/`).
    const printIt = 'f=$(ls "$FLOOT_RUNTIME_DIR"/*/secrets/*/cred-*); cat "$f"; echo; base64 -w0 "$f"; echo';
    const w = await setUp({
      steps: [
        {
          match: { toolResultFor: "toolu_print" },
          repeat: true,
          response: { events: [{ type: "text", text: "Deployed with the token." }] },
        },
        {
          match: provided,
          repeat: true,
          response: {
            events: [
              {
                type: "tool_use",
                id: "toolu_print",
                name: "Bash",
                input: { command: printIt, description: "Print the token (a careless tool)" },
              },
            ],
          },
        },
        {
          match: { toolResultFor: "toolu_check" },
          repeat: true,
          response: {
            events: [
              { type: "text", text: "The deploy needs a token." },
              {
                type: "tool_use",
                nameFrom: { endsWith: "requestSecret" },
                input: { name: "API_TOKEN", prompt: "The deploy token for staging" },
              },
            ],
          },
        },
        {
          match: { lastUserTextIncludes: "[secret]" },
          repeat: true,
          response: {
            events: [
              { type: "thinking", thinking: "First look at what is there, then ask for the token." },
              { type: "text", text: "Checking the deploy script first." },
              {
                type: "tool_use",
                id: "toolu_check",
                name: "Bash",
                input: { command: "echo deploy.sh ready", description: "Check the deploy script" },
              },
            ],
          },
        },
      ],
    });
    const session = await w.createSession();
    const page = await signIn(w);
    await openSession(page, w, session);
    await sendFromPage(page, "[secret] deploy to staging");
    const form = page.locator("form[data-secret-form]");
    await form.waitFor({ timeout: 60_000 });
    const turn = await currentTurn(w, session.id);
    expect(turn.phase).toBe("awaiting_secret");
    await page.setViewportSize({ width: 1100, height: 1180 });
    await page.locator(".tool summary").first().click();
    await form.scrollIntoViewIfNeeded();
    await screenshot(page, "session-secret-form");

    // The keeper killed too: recovery, not adoption (keeper-restart.test.ts has that).
    await w.killDaemonAndKeeper();
    await page.locator('body[data-connection="offline"]').waitFor({ timeout: 15_000 });
    await w.startDaemon();
    await page.locator(`[data-turn-id="${turn.id}"][data-phase="interrupted"]`).waitFor({ timeout: 30_000 });
    // The same request's form, back after the restart.
    const [request] = await w.secretRequests();
    expect(request).toMatchObject({ turnId: turn.id, status: "orphaned" });
    const again = page.locator(`form[data-secret-form="${request!.id}"]`);
    await again.waitFor();
    await expect(again.textContent()).resolves.toContain("interrupted");

    // A value too short to mask: the daemon's reason on the form, which stays open for a proper value.
    const field = again.getByLabel("Value of API_TOKEN");
    await expect(field.getAttribute("placeholder")).resolves.toBe(
      `at least ${secretValueMinLength} characters`,
    );
    await field.fill("ta");
    await again.getByRole("button", { name: "Provide" }).click();
    await again.locator(".secret-note.is-error").waitFor({ timeout: 30_000 });
    await expect(again.locator(".secret-note").textContent()).resolves.toContain(
      `at least ${secretValueMinLength} characters long`,
    );
    expect(await w.secretRequests()).toMatchObject([{ id: request!.id, status: "orphaned" }]);

    await field.fill(secret);
    await again.getByRole("button", { name: "Provide" }).click();
    await page.getByText("Deployed with the token.").waitFor({ timeout: 60_000 });
    const retry = (await w.turns(session.id)).find((t) => t.retryOf === turn.id)!;
    expect((await w.waitForEnd(retry.id)).phase).toBe("completed");
    expect(await w.secretRequests()).toEqual([]);

    // Not in the page's storage, the state dir (journal, -wal) or the browser profile.
    const storage = await page.evaluate(async () => ({
      local: JSON.stringify({ ...localStorage }),
      session: JSON.stringify({ ...sessionStorage }),
      databases: (await indexedDB.databases()).map((each) => each.name),
      pageKeys: await new Promise<unknown[]>((resolve) => {
        const opening = indexedDB.open("floot");
        opening.onsuccess = () => {
          const reading = opening.result.transaction("page-keys").objectStore("page-keys").getAll();
          reading.onsuccess = () =>
            resolve((reading.result as object[]).map((record) => Object.keys(record)));
        };
      }),
      cookie: document.cookie,
      inputs: [...document.querySelectorAll("input")].map((input) => input.value),
    }));
    // IndexedDB holds the sign-in's keys and nothing else (the profile's files are searched below).
    expect(storage.databases).toEqual(["floot"]);
    expect(storage.pageKeys).toEqual([["sessionId", "signingKey", "identityKey", "expiresAt"]]);
    expect(JSON.stringify(storage)).not.toContain(secret);
    const cookies = await scope.browser!.context.cookies();
    expect(JSON.stringify(cookies)).not.toContain(secret);
    expect(await page.content()).not.toContain(secret);
    expect(filesContaining([w.stateDir, scope.browser!.userDataDir], secret)).toEqual([]);
    // Only Claude Code's own transcript holds it: the tool printed it to the model, and what the CLI
    // stores is beyond the daemon's reach (see docs/threat-model.md).
    for (const path of filesContaining([w.env.home], secret)) expect(path).toMatch(/\/\.claude\/projects\//);
    expect(w.daemon!.process.stderr()).not.toContain(secret);

    // The tool did print it (the model saw it); what the daemon journaled, streams and shows is masked.
    const base64 = Buffer.from(secret).toString("base64");
    const toolResult = w.double.requests.find((r) => JSON.stringify(r.body).includes("toolu_print"));
    expect(JSON.stringify(toolResult?.body)).toContain(secret);
    const marker = "***SECRET(API_TOKEN)***";
    await page.locator(`[data-turn-id="${retry.id}"] .tool summary`).last().click();
    await expect(page.locator(`[data-turn-id="${retry.id}"]`).textContent()).resolves.toContain(marker);
    const dom = await page.content();
    expect(dom).not.toContain(secret);
    expect(dom).not.toContain(base64);
    const { stdout: followed } = await run(
      process.execPath,
      [bundlePath, "turn", "follow", retry.id, "--state", w.stateDir, "--json"],
      { env: w.env.env },
    );
    expect(followed).toContain(marker);
    expect(followed).not.toContain(secret);
    expect(followed).not.toContain(base64);
    expect(filesContaining([w.stateDir], base64)).toEqual([]);
    expect(w.daemon!.process.stderr()).not.toContain(base64);
  });
});
