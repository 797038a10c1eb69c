import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "@bridgeworks/runtime";
import { afterEach, describe, expect, test } from "vitest";
import { type RunningDaemon, startDaemon } from "../src/daemon/daemon.js";
import { StateDirLockedError } from "../src/daemon/state-lock.js";
import { resolveStateDir } from "../src/state-dir.js";

let daemon: RunningDaemon | undefined;
let root: string | undefined;

afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

async function start(): Promise<{ base: string; token: string; stateDir: string }> {
  root = mkdtempSync(join(tmpdir(), "floot-api-"));
  const stateDir = join(root, "state");
  daemon = await startDaemon({
    stateDir,
    env: { FLOOT_RUNTIME_DIR: join(root, "run"), PATH: process.env.PATH },
    logger: silentLogger,
  });
  const file = JSON.parse(readFileSync(join(stateDir, "daemon.json"), "utf8")) as { token: string };
  return { base: `http://127.0.0.1:${daemon.port}`, token: file.token, stateDir };
}

function call(
  base: string,
  path: string,
  init: { token?: string; method?: string; body?: string; headers?: Record<string, string> } = {},
) {
  return fetch(`${base}${path}`, {
    method: init.method ?? "GET",
    headers: {
      ...(init.token !== undefined && { authorization: `Bearer ${init.token}` }),
      ...(init.body !== undefined && { "content-type": "application/json" }),
      ...init.headers,
    },
    ...(init.body !== undefined && { body: init.body }),
  });
}

describe("daemon start", () => {
  test("writes daemon.json 0600 naming its port, pid and generation", async () => {
    const { stateDir } = await start();
    const path = join(stateDir, "daemon.json");
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const file = JSON.parse(readFileSync(path, "utf8"));
    expect(file).toMatchObject({ port: daemon!.port, pid: process.pid, generation: 1 });
    expect(file.token).toMatch(/^[0-9a-f]{64}$/);
  });

  test("a second daemon on the same state dir is refused before it opens anything", async () => {
    const { stateDir } = await start();
    await expect(startDaemon({ stateDir, env: {}, logger: silentLogger })).rejects.toBeInstanceOf(
      StateDirLockedError,
    );
  });
});

describe("HTTP API guards", () => {
  test("refuses a missing or wrong token", async () => {
    const { base, token } = await start();
    expect((await call(base, "/v1/sessions")).status).toBe(401);
    expect((await call(base, "/v1/sessions", { token: "1".repeat(64) })).status).toBe(401);
    expect((await call(base, "/v1/sessions", { token })).status).toBe(200);
  });

  test("refuses a foreign Origin, accepts the UI's own", async () => {
    const { base, token } = await start();
    const foreign = await call(base, "/v1/sessions", { token, headers: { origin: "http://evil.example" } });
    expect(foreign.status).toBe(403);
    const own = await call(base, "/v1/sessions", { token, headers: { origin: base } });
    expect(own.status).toBe(200);
  });

  test("validates bodies and names the field", async () => {
    const { base, token } = await start();
    const bad = await call(base, "/v1/sessions", {
      token,
      method: "POST",
      body: JSON.stringify({ backend: "pi" }),
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: "invalid_body", field: "backend" } });
    const unknown = await call(base, "/v1/sessions", {
      token,
      method: "POST",
      body: JSON.stringify({ backend: "claude", colour: "red" }),
    });
    expect(await unknown.json()).toMatchObject({ error: { field: "colour" } });
    const notJson = await fetch(`${base}/v1/sessions`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "text/plain" },
      body: "hi",
    });
    expect(notJson.status).toBe(415);
  });

  test("creates and lists sessions; unknown ids are 404; env values are never shown", async () => {
    const { base, token } = await start();
    const created = await call(base, "/v1/sessions", {
      token,
      method: "POST",
      body: JSON.stringify({ backend: "codex", env: { DEPLOY_KEY: "hidden-value" }, codexConfig: ["a.b=1"] }),
    });
    expect(created.status).toBe(201);
    const text = await created.text();
    expect(text).not.toContain("hidden-value");
    const session = JSON.parse(text);
    expect(session).toMatchObject({ backend: "codex", status: "idle", envNames: ["DEPLOY_KEY"] });
    const list = (await (await call(base, "/v1/sessions", { token })).json()) as {
      sessions: { id: string }[];
    };
    expect(list.sessions.map((s) => s.id)).toEqual([session.id]);
    expect((await call(base, "/v1/turns/nope", { token })).status).toBe(404);
    expect((await call(base, "/v1/sessions/nope/current-turn", { token })).status).toBe(404);
    expect(
      (await call(base, "/v1/secret-requests/nope/submit", { token, method: "POST", body: '{"value":"x"}' }))
        .status,
    ).toBe(404);
  });

  test("a method a path does not take is 405 with Allow naming the ones it does", async () => {
    const { base, token } = await start();
    const cases: [string, string, string][] = [
      ["DELETE", "/v1/sessions", "GET, POST"],
      ["POST", "/v1/status", "GET"],
      ["PUT", "/v1/turns/t1/cancel", "POST"],
      ["GET", "/ui/sign-in", "POST"],
      ["GET", "/ui/identity", "POST"],
      ["GET", "/ui/challenge", "POST"],
      ["GET", "/ui/access", "POST"],
      ["POST", "/", "GET, HEAD"],
    ];
    for (const [method, path, allow] of cases) {
      const response = await call(base, path, { token, method });
      expect(response.status, `${method} ${path}`).toBe(405);
      expect(response.headers.get("allow"), `${method} ${path}`).toBe(allow);
      expect(await response.json()).toMatchObject({ error: { code: "method_not_allowed" } });
    }
  });

  test("a refused nested field is named dotted", async () => {
    const { base, token } = await start();
    const bad = await call(base, "/v1/sessions", {
      token,
      method: "POST",
      body: JSON.stringify({ backend: "claude", env: { "1PASSWORD": "x" } }),
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: "invalid_body", field: "env.1PASSWORD" } });
  });

  test("without a web UI installed, / is a 404 that needs no token", async () => {
    const { base } = await start();
    const response = await call(base, "/");
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { message: "the web UI is not installed" } });
  });
});

describe("the secret runtime dir", () => {
  // The runtime base is shared ground (/dev/shm/floot-<uid> when there is no XDG_RUNTIME_DIR): another
  // user may create the name first. The daemon refuses it rather than write credentials there.
  test.each([
    ["another user's dir", "foreign_owner"],
    ["a symlink to the user's own dir", "symlink"],
  ])("refuses %s as its base", async (_what, code) => {
    root = mkdtempSync(join(tmpdir(), "floot-runtime-"));
    chmodSync(root, 0o755);
    const shared = join(root, "shm");
    mkdirSync(shared, { mode: 0o1777 });
    chmodSync(shared, 0o1777);
    const base = join(shared, "floot-0");
    if (code === "foreign_owner") {
      execFileSync("setpriv", [
        "--reuid",
        "65534",
        "--regid",
        "65534",
        "--clear-groups",
        "mkdir",
        "-m",
        "0777",
        base,
      ]);
    } else {
      mkdirSync(join(root, "elsewhere"));
      symlinkSync(join(root, "elsewhere"), base);
    }
    await expect(
      startDaemon({
        stateDir: join(root, "state"),
        env: { FLOOT_RUNTIME_DIR: base, PATH: process.env.PATH },
        logger: silentLogger,
      }),
    ).rejects.toMatchObject({ code });
  });
});

describe("resolveStateDir", () => {
  test("--state, then FLOOT_STATE_DIR, then XDG_STATE_HOME, then ~/.local/state", () => {
    const env = { FLOOT_STATE_DIR: "/s/env", XDG_STATE_HOME: "/x", HOME: "/home/u" };
    expect(resolveStateDir({ flag: "/s/flag", env })).toBe("/s/flag");
    expect(resolveStateDir({ env })).toBe("/s/env");
    expect(resolveStateDir({ env: { XDG_STATE_HOME: "/x", HOME: "/home/u" } })).toBe("/x/floot");
    expect(resolveStateDir({ env: { XDG_STATE_HOME: "rel", HOME: "/home/u" } })).toBe(
      "/home/u/.local/state/floot",
    );
  });
});
