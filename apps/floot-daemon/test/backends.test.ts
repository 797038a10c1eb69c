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
