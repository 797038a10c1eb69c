import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fullBacklog } from "@bridgeworks/test-harness";
import { afterEach, expect, test } from "vitest";
import { FlootClient } from "../src/client/api-client.js";

// Linux refuses a unix-socket connect with EAGAIN while the listener's backlog is full (a flood of
// connections, a daemon busy for a moment). CI saw `floot` fail on it once under listener-limits'
// flood; a request now waits for room instead.

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "floot-backlog-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test("a request waits out a full listen backlog (EAGAIN) instead of failing, and is answered once there is room", async () => {
  const listener = await fullBacklog(join(tempDir(), "api.sock"));
  cleanups.push(() => listener.end());
  const answer = new FlootClient({ socket: listener.path }).request<{ pid: number }>("GET", "/v1/status");
  let settled = false;
  const settle = () => {
    settled = true;
  };
  void answer.then(settle, settle);
  await new Promise((resolve) => setTimeout(resolve, 300));
  // Neither answered (the listener is stopped) nor failed on the refused connect.
  expect(settled).toBe(false);
  listener.release();
  expect((await answer).pid).toBeGreaterThan(0);
});

test("a request to a socket nobody listens on still fails at once, naming it", async () => {
  const path = join(tempDir(), "api.sock");
  await expect(new FlootClient({ socket: path }).request("GET", "/v1/status")).rejects.toThrow(
    `the floot daemon at ${path} is not reachable`,
  );
});
