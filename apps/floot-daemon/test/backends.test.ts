import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { FlootBackendList } from "@bridgeworks/protocol";
import { DOUBLE_API_KEY } from "@bridgeworks/test-harness";
import { afterEach, expect, test } from "vitest";
import { bundlePath, FlootWorld } from "./daemon-harness.js";

// `GET /v1/backends` and `floot backends` against the real, pinned CLIs the isolated environment links:
// path and version found the way turns find them, sign-in by name only, a missing CLI with its hint.

let world: FlootWorld | undefined;
afterEach(async () => {
  const problems = (await world?.dispose()) ?? [];
  world = undefined;
  expect(problems).toEqual([]);
});

test("each backend: path, version, signed in by variable name; a missing one says how to install it", async () => {
  world = await FlootWorld.create("claude", { steps: [] });
  const w = world;
  await w.startDaemon({ FLOOT_CODEX_COMMAND: "/nonexistent/codex" });
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [bundlePath, "backends", "--state", w.stateDir, "--json"],
    { env: { ...process.env, HOME: w.env.home } },
  );
  const list = JSON.parse(stdout) as FlootBackendList;
  expect(list).toEqual(await w.client.request("GET", "/v1/backends"));
  const [claude, codex] = list.backends;
  expect(claude).toMatchObject({
    backend: "claude",
    installed: true,
    path: expect.stringMatching(/\/claude$/),
    version: expect.stringContaining("2.1.332"),
    signedIn: { likely: true, via: "env", detail: "ANTHROPIC_API_KEY" },
  });
  expect(codex).toMatchObject({
    backend: "codex",
    command: "/nonexistent/codex",
    installed: false,
    installHint: expect.stringContaining("npm install -g @openai/codex"),
  });
  expect(codex?.path).toBeUndefined();
  // Names and paths only: never the key itself.
  expect(stdout).not.toContain(DOUBLE_API_KEY);
});

test("issue 36: each backend says whether its sandbox runs here; where it cannot, a confined session is refused naming why, and --unconfined goes on", async () => {
  world = await FlootWorld.create("claude", { steps: [] });
  const w = world;
  // Claude Code's sandbox needs bwrap and socat on the daemon's PATH: a PATH with the CLIs and node only.
  const { mkdirSync, symlinkSync } = await import("node:fs");
  const { join } = await import("node:path");
  const bare = join(w.env.root, "bare-bin");
  mkdirSync(bare);
  for (const name of ["claude", "codex"]) symlinkSync(join(w.env.binDir, name), join(bare, name));
  symlinkSync(process.execPath, join(bare, "node"));
  await w.startDaemon({ PATH: bare });
  const { backends } = await w.client.request<FlootBackendList>("GET", "/v1/backends");
  expect(backends.find((each) => each.backend === "claude")?.sandbox).toMatchObject({
    available: false,
    problem: expect.stringMatching(/bubblewrap \(bwrap\) and socat/),
  });
  const refused = await w.client.request("POST", "/v1/sessions", { backend: "claude" }).then(
    () => undefined,
    (error: unknown) => error as { status?: number; code?: string; message: string },
  );
  expect(refused).toMatchObject({ status: 409 });
  expect(refused?.message).toMatch(/sandbox cannot run here: .*bwrap.*--unconfined/);
  const unconfined = await w.client.request<{ sandbox: unknown }>("POST", "/v1/sessions", {
    backend: "claude",
    sandbox: { enabled: false },
  });
  expect(unconfined.sandbox).toEqual({ enabled: false });
  // And `floot backends` in words.
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [bundlePath, "backends", "--state", w.stateDir],
    {
      env: { ...process.env, HOME: w.env.home },
    },
  );
  expect(stdout).toMatch(/claude .*\n {2}sandbox unavailable: .*bwrap.*\(sessions need --unconfined\)/);
  expect(stdout).toMatch(/codex .*\n {2}sandbox: Codex's/);
});
