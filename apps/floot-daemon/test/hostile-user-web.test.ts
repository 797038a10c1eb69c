import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";
import type { FlootSession } from "@bridgeworks/protocol";
import { ProcessTracker, type TrackedProcess, waitUntil } from "@bridgeworks/test-harness";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { openBrowser, processesMentioning, signInLink, type TestBrowser } from "./browser.js";
import { appDir, bundlePath, FlootWorld, stageForOtherUsers } from "./daemon-harness.js";

// Issue 12's hostile-local-user attacks on the browser side, each step of the attacker run as another
// uid (65534, through setpriv) against the real daemon bundle and Debian's Chromium. docs/threat-model.md
// lists what each one shows.

const run = promisify(execFile);
const hostileDir = join(appDir, "test/hostile");
const attackerUid = "65534";
// The attacker runs copies of test/hostile/: the checkout may be out of its uid's reach.
let attackerScripts: ReturnType<typeof stageForOtherUsers>;
const tracker = new ProcessTracker();
let world: FlootWorld | undefined;
let browser: TestBrowser | undefined;
const cleanups: (() => void)[] = [];

afterEach(async () => {
  await browser?.close();
  browser = undefined;
  for (const cleanup of cleanups.splice(0)) cleanup();
  await tracker.endAll();
  const problems = (await world?.dispose()) ?? [];
  world = undefined;
  expect(problems).toEqual([]);
});

/** A node script of `test/hostile/` as the other user: no groups, nothing of ours it may read. */
function asAttacker(script: string, args: string[] = [], env: Record<string, string> = {}): TrackedProcess {
  return tracker.spawn(
    "setpriv",
    [
      "--reuid",
      attackerUid,
      "--regid",
      attackerUid,
      "--clear-groups",
      process.execPath,
      join(attackerScripts.root, "hostile", script),
      ...args,
    ],
    { cwd: "/", env: { PATH: "/usr/bin:/bin", ...env }, stdio: ["ignore", "pipe", "pipe"] },
  );
}

/** The daemon's log lines (its stderr also says where it listens, in words). */
function jsonLines(text: string): Record<string, unknown>[] {
  return text
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** A browser signed in to the world's daemon, and the token its tab holds. */
async function signedInTab(w: FlootWorld): Promise<{ page: Page; token: string }> {
  browser = await openBrowser();
  const { page } = browser;
  await page.goto(await signInLink(w));
  await page.locator('body[data-connection="online"]').waitFor({ timeout: 60_000 });
  const stored = await page.evaluate(() => sessionStorage.getItem("floot.credential"));
  return { page, token: (JSON.parse(stored!) as { token: string }).token };
}

/** What the squatter's page copied out of the tab (test/hostile/port-squatter.mjs). */
interface Loot {
  session: Record<string, string>;
  local: Record<string, string>;
  indexedDB: { database: string; store: string; record: Record<string, unknown> }[];
  signed: { nonce: string; signature: string }[];
  /** What the origin's open tabs answered its request for their sign-in (issue 32). */
  broadcast: unknown[];
}

/** The token the tab's sessionStorage names its sign-in by. */
function storedToken(loot: Loot): string {
  return (JSON.parse(loot.session["floot.credential"]!) as { token: string }).token;
}

/** The other user binds `port` and serves `test/hostile/port-squatter.mjs` there. */
async function squat(port: number) {
  const squatter = asAttacker("port-squatter.mjs", [String(port)]);
  await squatter.waitForOutput((out) => out.includes('"listening"'), 30_000);
  const lines = () => jsonLines(squatter.stdout());
  expect(lines()[0]).toEqual({ listening: port, uid: Number(attackerUid) });
  return {
    lines,
    /** Reloads the tab: the squatter's page runs in the tab's origin and posts all it could copy. */
    async stealOnReload(page: Page): Promise<Loot> {
      await page.reload();
      await squatter.waitForOutput((out) => out.includes('"stolen"'), 60_000);
      return lines().find((line) => line.stolen)!.stolen as Loot;
    },
    /** Opens `url` (the port's origin) in a new tab of the browser: the squatter's page runs there. */
    async stealInNewTab(url: string): Promise<Loot> {
      const tab = await browser!.context.newPage();
      await tab.goto(url);
      await squatter.waitForOutput((out) => out.includes('"stolen"'), 60_000);
      return lines().find((line) => line.stolen)!.stolen as Loot;
    },
    async leave(): Promise<void> {
      process.kill(squatter.pid, "SIGTERM");
      await squatter.exited;
    },
  };
}

interface Replay {
  uid: number;
  tried: number;
  bearers: { overview: number; create: number }[];
  challenges: number[];
  access: number[];
  created: number[];
}

/** As the other user: all the tab's copied storage against the daemon on `port`, naming `claimed` as Host and Origin. */
async function replay(loot: Loot, port: number, claimed: number): Promise<Replay> {
  const attempt = asAttacker("replay-token.mjs", [String(port), String(claimed)], {
    STOLEN: JSON.stringify(loot),
  });
  await attempt.exited;
  return jsonLines(attempt.stdout())[0] as unknown as Replay;
}

/** Every status of a replay: each Bearer on /v1, each challenge, each signature offered. */
function statusesOf(result: Replay) {
  return {
    overview: [...new Set(result.bearers.map((each) => each.overview))],
    create: [...new Set(result.bearers.map((each) => each.create))],
    challenges: [...new Set(result.challenges)].sort(),
    access: [...new Set(result.access)].sort(),
  };
}

/** A request to 127.0.0.1:`port` with `headers` (a Host of our choosing): its status and body. */
function rawText(port: number, path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; text: string }>((resolve, reject) => {
    const request = httpRequest({ host: "127.0.0.1", port, path, headers }, (response) => {
      let text = "";
      response.on("data", (chunk: Buffer) => {
        text += chunk.toString();
      });
      response.on("end", () => resolve({ status: response.statusCode ?? 0, text }));
    });
    request.on("error", reject);
    request.end();
  });
}

async function setUp(): Promise<FlootWorld> {
  world = await FlootWorld.create("claude", { steps: [] });
  await world.startDaemon();
  return world;
}

/** A tab signed in to a new daemon, which then dies; the other user binds its port. */
async function squattedTab() {
  const w = await setUp();
  const port = w.daemon!.file.port;
  const { page, token } = await signedInTab(w);
  await w.killDaemon();
  return { w, port, page, token, squatter: await squat(port) };
}

describe("a hostile local user against the web UI", () => {
  beforeAll(() => {
    attackerScripts = stageForOtherUsers({ hostile: hostileDir });
  });
  afterAll(() => attackerScripts.remove());

  test("attack 1: a page of another user on another 127.0.0.1 port gets no credential from a signed-in browser", async () => {
    const w = await setUp();
    const daemonPort = w.daemon!.file.port;
    const attacker = asAttacker("attacker-server.mjs", [String(daemonPort)]);
    await attacker.waitForOutput((out) => out.includes('"port"'), 30_000);
    const attackerPort = (jsonLines(attacker.stdout())[0] as { port: number }).port;

    browser = await openBrowser();
    const { page } = browser;
    await page.goto(await signInLink(w));
    await page.locator('body[data-connection="online"]').waitFor({ timeout: 60_000 });
    // The victim follows a link from the signed-in page to the attacker's.
    await page.evaluate((url) => {
      location.href = url;
    }, `http://127.0.0.1:${attackerPort}/`);
    await attacker.waitForOutput((out) => out.includes('"done"'), 60_000);
    const outcome = jsonLines(attacker.stdout()).find((line) => line.done) as {
      uid: number;
      seen: { headers: Record<string, string> }[];
      report: Record<string, string>;
      replays: { credential: string[]; overview: number; create: number }[];
    };
    expect(outcome.uid).toBe(Number(attackerUid));

    // Nothing the browser sent the attacker's server carried a credential.
    expect(outcome.seen.length).toBeGreaterThan(0);
    for (const { headers } of outcome.seen) {
      expect(headers.cookie).toBeUndefined();
      expect(headers.authorization).toBeUndefined();
    }
    // Nothing the attacker's page could read in the browser either, and the daemon refused it.
    expect(outcome.report.cookie).toBe("");
    expect(outcome.report.session).toBe("{}");
    expect(outcome.report.overview).not.toMatch(/status 2/);
    expect(outcome.report.create).not.toMatch(/status 2/);
    // Replaying anything it saw (or nothing), with forged Host and Origin: no overview, no session.
    expect(outcome.replays.length).toBeGreaterThan(0);
    for (const replay of outcome.replays) {
      expect(replay.overview).toBe(401);
      expect(replay.create).toBe(401);
    }
    const { sessions } = await w.client.request<{ sessions: FlootSession[] }>("GET", "/v1/sessions");
    expect(sessions).toEqual([]);
  });

  test("attack 2, browser side: another user takes the dead daemon's port; the open page sends it nothing, and the token a reload lets it steal is revoked", async () => {
    // 1. The daemon dies; the other user binds its port.
    const { w, port, page, token, squatter } = await squattedTab();

    // 2. The open page (the daemon's own code) reconnects there: it challenges the port's owner, gets
    //    no valid proof, and sends no token, however often it retries.
    const seen = () => squatter.lines().filter((line) => line.seen);
    await waitUntil(() => seen().length >= 3, 90_000, "the open page tried the squatter three times");
    for (const { seen: request } of seen()) {
      const { headers, url } = request as { headers: Record<string, string>; url: string };
      expect(headers.authorization, url).toBeUndefined();
      expect(JSON.stringify(request), url).not.toContain(token);
    }
    expect(seen().some((line) => (line.seen as { url: string }).url === "/ui/identity")).toBe(true);
    expect(await page.evaluate(() => document.body.dataset.connection)).not.toBe("online");

    // 3. A reload loads the squatter's page into the tab's origin, which reads the token.
    const stolen = await squatter.stealOnReload(page);
    expect(storedToken(stolen)).toBe(token);

    // 4. The victim's daemon, configured for that port, finds it taken: it fails, naming it, and
    //    revokes every token bound to it.
    const configured = w.spawnDaemon({}, {}, ["--port", String(port)]);
    expect(await configured.exited).not.toEqual({ code: 0, signal: null });
    expect(configured.stderr()).toMatch(/EADDRINUSE/);

    // 5. The squatter leaves and the daemon comes back on its port: the stolen token is refused, with
    //    the daemon's Host and with another port named.
    await squatter.leave();
    await w.startDaemon({}, {}, ["--port", String(port)]);
    expect(w.daemon!.file.port).toBe(port);
    // The sign-in is revoked: its token does not even get a challenge to sign.
    const same = await replay(stolen, port, port);
    expect(same.uid).toBe(Number(attackerUid));
    expect(statusesOf(same)).toEqual({ overview: [401], create: [401], challenges: [401], access: [] });
    const other = await replay(stolen, port, port + 1);
    expect(statusesOf(other)).toEqual({ overview: [403], create: [403], challenges: [403], access: [] });
    const { sessions } = await w.client.request<{ sessions: FlootSession[] }>("GET", "/v1/sessions");
    expect(sessions).toEqual([]);
    // The user signs in again with a fresh link, on the same port.
    await page.goto("about:blank");
    await page.goto(await signInLink(w));
    await page.locator('body[data-connection="online"]').waitFor({ timeout: 60_000 });
  }, 300_000);

  test("attack 2, browser side: a token stolen on a port the daemon left is refused when it comes back there", async () => {
    const w = await setUp();
    const port = w.daemon!.file.port;
    const { page, token } = await signedInTab(w);

    // 1. The next start takes another port (here told to: `--port 0`; a clean stop keeps the last
    //    port otherwise): the tokens of the old one are of no use, and are dropped.
    await w.stopDaemon();
    await w.startDaemon({}, {}, ["--port", "0"]);
    expect(w.daemon!.file.port).not.toBe(port);

    // 2. The other user binds the old port; the tab, reloaded, hands its page the token.
    const squatter = await squat(port);
    const stolen = await squatter.stealOnReload(page);
    expect(storedToken(stolen)).toBe(token);

    // 3. Later the daemon is started on that port again (the squatter gone): the sign-in was dropped
    //    when the daemon bound another port, so its token gets no challenge.
    await squatter.leave();
    await w.killDaemon();
    await w.startDaemon({}, {}, ["--port", String(port)]);
    const result = await replay(stolen, port, port);
    expect(result.uid).toBe(Number(attackerUid));
    expect(statusesOf(result)).toEqual({ overview: [401], create: [401], challenges: [401], access: [] });
  }, 300_000);

  test("issue 36, attack 5: all a reloaded tab's storage, copied by a squatter that left before the daemon came back, opens nothing; the tab reattaches by itself", async () => {
    // 1. The daemon dies; the other user binds its port; the tab, reloaded, runs its page, which copies
    //    sessionStorage and IndexedDB and signs made-up nonces with every key it finds there.
    const { w, port, page, token, squatter } = await squattedTab();
    const stolen = await squatter.stealOnReload(page);
    expect(storedToken(stolen)).toBe(token);

    // 2. The squatter leaves before the daemon starts again: the daemon finds its port free and has
    //    nothing to revoke.
    await squatter.leave();
    await w.startDaemon({}, {}, ["--port", String(port)]);
    expect(w.daemon!.file.port).toBe(port);

    // 3. Every string it copied, as a Bearer with the daemon's own Host and Origin, reads and creates
    //    nothing; the token gets challenges (the session id, as long, gets none), and no signature it
    //    holds (the page key's, made while its page was loaded, over nonces the daemon never issued, or
    //    its own key's) answers one.
    const result = await replay(stolen, port, port);
    expect(result.uid).toBe(Number(attackerUid));
    expect(result.tried).toBeGreaterThanOrEqual(3);
    expect(statusesOf(result)).toEqual({
      overview: [401],
      create: [401],
      challenges: [200, 401],
      access: [401],
    });
    expect(result.access.length).toBe(2 * stolen.signed.length + 1);
    expect(result.created).toEqual([]);
    const elsewhere = await replay(stolen, port, port + 1);
    expect(statusesOf(elsewhere)).toEqual({ overview: [403], create: [403], challenges: [403], access: [] });
    const { sessions } = await w.client.request<{ sessions: FlootSession[] }>("GET", "/v1/sessions");
    expect(sessions).toEqual([]);

    // What it copied of the keys: CryptoKeys that would not export in any format, nothing else.
    const keys = stolen.indexedDB.flatMap(({ record }) =>
      Object.values(record).filter(
        (value): value is { exported: Record<string, string> } =>
          typeof value === "object" && value !== null && "exported" in value,
      ),
    );
    expect(keys.length).toBe(2);
    for (const key of keys) {
      for (const outcome of Object.values(key.exported)) expect(outcome).toMatch(/^refused: /);
    }
    expect(stolen.signed.length).toBe(1);

    // 4. The user's tab, reloaded on the daemon's page, reattaches with what it stored: no new sign-in.
    await page.reload();
    await page.locator('body[data-connection="online"]').waitFor({ timeout: 60_000 });
    await page.getByRole("heading", { name: "Sessions" }).waitFor();
  }, 300_000);

  test("issue 32: a new tab the squatter's page loaded asks the open tab for its sign-in; the tab checks the port's owner first and answers nothing", async () => {
    // 1. A signed-in tab stays open; the daemon dies; the other user binds its port.
    const { port, page, token, squatter } = await squattedTab();

    // 2. The user opens the page in a new tab, which loads the squatter's page into the origin: it asks
    //    over the BroadcastChannel, as the daemon's page does, and hears the open tab say it is there,
    //    then decline (the port's owner gave no valid proof). No answer holds the sign-in.
    const stolen = await squatter.stealInNewTab(`http://127.0.0.1:${port}/`);
    expect(stolen.broadcast).toEqual([
      { type: "here", id: "squatter" },
      { type: "decline", id: "squatter" },
    ]);
    expect(JSON.stringify(stolen)).not.toContain(token);
    expect(stolen.session).toEqual({});
    // The open tab proved the port's owner before anything else, and sent it nothing of its sign-in.
    const seen = squatter.lines().filter((line) => line.seen);
    for (const { seen: request } of seen) expect(JSON.stringify(request)).not.toContain(token);
    expect(await page.evaluate(() => document.body.dataset.connection)).not.toBe("online");
  }, 300_000);

  test("issue 36, localhost: another user cannot take [::1] on the daemon's port, so a localhost link reaches the daemon", async () => {
    const w = await setUp();
    const port = w.daemon!.file.port;
    const link = await signInLink(w);
    // floot open names 127.0.0.1; a user may still type localhost, which Chromium tries on [::1] first.
    expect(link.startsWith(`http://127.0.0.1:${port}/#login=`)).toBe(true);

    const squatter = asAttacker("v6-squatter.mjs", [String(port)]);
    await squatter.waitForOutput((out) => out.includes('"listen"'), 30_000);
    const report = jsonLines(squatter.stdout()).find((line) => line.listen) as {
      uid: number;
      listen: Record<string, string>;
    };
    expect(report.uid).toBe(Number(attackerUid));
    expect(report.listen).toEqual({ "::1": "EADDRINUSE", "::": "EADDRINUSE" });
    await squatter.exited;

    browser = await openBrowser();
    await browser.page.goto(link.replace("127.0.0.1", "localhost"));
    await browser.page.locator('body[data-connection="online"]').waitFor({ timeout: 60_000 });
    expect(await browser.page.evaluate(() => location.origin)).toBe(`http://localhost:${port}`);
    expect(squatter.stdout()).not.toContain('"seen"');
  }, 180_000);

  test("issue 36, localhost: with [::1] held by another user at start, the daemon serves no localhost, says why and names 127.0.0.1, and revokes that port's localhost sign-ins", async () => {
    const w = await setUp();
    const port = w.daemon!.file.port;
    // A tab signed in on localhost while the daemon holds [::1].
    browser = await openBrowser();
    await browser.page.goto((await signInLink(w)).replace("127.0.0.1", "localhost"));
    await browser.page.locator('body[data-connection="online"]').waitFor({ timeout: 60_000 });
    const stored = await browser.page.evaluate(() => sessionStorage.getItem("floot.credential"));
    const { token } = JSON.parse(stored!) as { token: string };
    const sessionsFile = join(w.stateDir, "ui-sessions.json");
    const digest = createHash("sha256").update(token).digest("hex");
    expect(readFileSync(sessionsFile, "utf8")).toContain(digest);

    // The daemon dies; the other user takes [::1] on its port; the daemon comes back on 127.0.0.1.
    await w.killDaemon();
    const squatter = asAttacker("v6-squatter.mjs", [String(port)]);
    await squatter.waitForOutput((out) => out.includes('"listen"'), 30_000);
    expect((jsonLines(squatter.stdout()).find((line) => line.listen) as { listen: unknown }).listen).toEqual({
      "::1": "listening",
      "::": "EADDRINUSE",
    });
    await w.startDaemon({}, {}, ["--port", String(port)]);
    expect(w.daemon!.file.port).toBe(port);

    // It says why in its log, and to anyone who names localhost, with the address to use instead.
    const address = `http://127.0.0.1:${port}/`;
    const logged = jsonLines(w.daemon!.process.stderr()).find((line) =>
      String(line.message).includes("localhost is not served"),
    );
    expect(logged).toMatchObject({ level: "warn", port, code: "EADDRINUSE", revoked: 1 });
    expect(String(logged?.reason)).toContain(`another process holds [::1]:${port}`);
    const asLocalhost = { host: `localhost:${port}` };
    const pageAnswer = await rawText(port, "/", asLocalhost);
    expect(pageAnswer.status).toBe(403);
    expect(pageAnswer.text).toContain(`<a href="${address}">${address}</a>`);
    const apiAnswer = await rawText(port, "/v1/status", asLocalhost);
    expect(apiAnswer.status).toBe(403);
    expect((JSON.parse(apiAnswer.text) as { error: { message: string } }).error.message).toContain(address);
    expect((await rawText(port, "/", { host: `127.0.0.1:${port}` })).status).toBe(200);
    // The localhost sign-in is gone: whoever holds [::1] may have read that tab meanwhile.
    expect(readFileSync(sessionsFile, "utf8")).not.toContain(digest);
    process.kill(squatter.pid, "SIGTERM");
    await squatter.exited;
  }, 300_000);

  test("the state dir's files and the daemon's environment are closed to another user; the page cannot be framed", async () => {
    const w = await setUp();
    browser = await openBrowser();
    await browser.page.goto(await signInLink(w));
    await browser.page.locator('body[data-connection="online"]').waitFor({ timeout: 60_000 });
    const files = ["daemon.json", "daemon.key", "ui-sessions.json", "journal.sqlite", "journal.sqlite-wal"]
      .map((name) => join(w.stateDir, name))
      .filter((path) => existsSync(path));
    expect(files.length).toBeGreaterThanOrEqual(4);
    // Private by their own modes (not only by the temp dir above them) ...
    expect(statSync(w.stateDir).mode & 0o777).toBe(0o700);
    for (const path of files) expect(statSync(path).mode & 0o777, path).toBe(0o600);
    // ... and unreadable to the other user, with the daemon's environment.
    const environ = `/proc/${w.daemon!.process.pid}/environ`;
    const reader = asAttacker("read-paths.mjs", [...files, environ]);
    await reader.exited;
    const { uid, results } = jsonLines(reader.stdout())[0] as {
      uid: number;
      results: { path: string; outcome: string }[];
    };
    expect(uid).toBe(Number(attackerUid));
    expect(results.map((each) => each.path)).toEqual([...files, environ]);
    for (const each of results) expect(each.outcome, each.path).toBe("EACCES");
    // Pages are never framed (a clickjacking page of another user shows nothing of the UI).
    const page = await fetch(`http://127.0.0.1:${w.daemon!.file.port}/`);
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
  });

  test("attack 3: during floot open the sign-in code is in no process's argv", async () => {
    const w = await setUp();
    const watcher = asAttacker("cmdline-watcher.mjs");
    await watcher.waitForOutput((out) => out.includes('"watching"'), 30_000);

    const profile = mkdtempSync(join(tmpdir(), "floot-hostile-chromium-"));
    const pidFile = join(profile, "..", `${profile.split("/").pop()}.pid`);
    cleanups.push(() => {
      const left = processesMentioning(profile);
      for (const pid of left) process.kill(pid, "SIGKILL");
      rmSync(profile, { recursive: true, force: true });
      rmSync(pidFile, { force: true });
    });
    // A desktop session: floot open hands the browser what it opens through xdg-open.
    await run(process.execPath, [bundlePath, "open", "--state", w.stateDir], {
      env: {
        ...w.env.env,
        FLOOT_RUNTIME_DIR: w.runtimeDir,
        DISPLAY: ":99",
        PATH: [hostileDir, w.env.env.PATH ?? ""].join(delimiter),
        FLOOT_TEST_BROWSER_PROFILE: profile,
        FLOOT_TEST_BROWSER_PIDFILE: pidFile,
      },
    });
    // The browser signs in (the daemon stores the new session's digest) ...
    await waitUntil(
      () => {
        const path = join(w.stateDir, "ui-sessions.json");
        return (
          existsSync(path) &&
          (JSON.parse(readFileSync(path, "utf8")) as { sessions: unknown[] }).sessions.length > 0
        );
      },
      90_000,
      "the browser signed in through floot open",
    );
    process.kill(watcher.pid, "SIGTERM");
    await watcher.exited;
    const result = jsonLines(watcher.stdout()).find((line) => "scans" in line) as {
      scans: number;
      found: { code: string; argv: string }[];
    };
    const browserPid = Number(readFileSync(pidFile, "utf8").trim());
    expect(processesMentioning(profile)).toContain(browserPid);
    process.kill(browserPid, "SIGTERM");
    expect(result.scans).toBeGreaterThan(10);
    expect(result.found).toEqual([]);
  }, 180_000);

  test("attack 8: a command the agent runs cannot raise a secret request with the turn's credential", async () => {
    const command = `${process.execPath} ${join(hostileDir, "raise-secret-request.mjs")}`;
    world = await FlootWorld.create("claude", {
      steps: [
        {
          match: { toolResultFor: "toolu_attack" },
          repeat: true,
          response: { events: [{ type: "text", text: "Ran it." }] },
        },
        {
          match: { lastUserTextIncludes: "[attack8]" },
          response: {
            events: [
              {
                type: "tool_use",
                id: "toolu_attack",
                name: "Bash",
                input: { command, description: "Run the project's setup script" },
              },
            ],
          },
        },
      ],
    });
    const w = world;
    await w.startDaemon();
    // The token mechanics, unconfined: confined, the command reaches no socket at all (hostile-agent.test.ts).
    const session = await w.createSession({ sandbox: { enabled: false } });
    const turn = await w.send(session.id, "[attack8] run the setup script");
    await waitUntil(
      async () => {
        const events = await w.client.request<{ events: { event: { type: string } }[] }>(
          "GET",
          `/v1/turns/${turn.id}/events`,
        );
        return events.events.some((each) => each.event.type === "tool.completed");
      },
      120_000,
      "the attack's tool call completed",
    );
    const events = await w.client.request<{ events: { event: Record<string, unknown> }[] }>(
      "GET",
      `/v1/turns/${turn.id}/events`,
    );
    const completed = events.events.find((each) => each.event.type === "tool.completed")?.event;
    const output = typeof completed?.output === "string" ? completed.output : JSON.stringify(completed);
    const report = /ATTACK8 (\{.*\})/.exec(output)?.[1];
    expect(report, output).toBeDefined();
    const found = JSON.parse(report!) as {
      socket: boolean;
      tokenFile: string | null;
      attempts: { source: string; how: string; answers: string[][] }[];
    };
    // The tool saw the socket and tried what it inherited; no attempt got an MCP session.
    expect(found.socket).toBe(true);
    expect(found.attempts.length).toBeGreaterThan(0);
    if (found.tokenFile !== null) expect(existsSync(found.tokenFile)).toBe(false);
    for (const each of found.attempts) {
      expect(each.how, each.source).toBe("closed by the daemon");
      expect(each.answers, each.source).toEqual([]);
    }
    expect(await w.secretRequests()).toEqual([]);
    expect((await w.waitForEnd(turn.id)).phase).toBe("completed");
  });
});
