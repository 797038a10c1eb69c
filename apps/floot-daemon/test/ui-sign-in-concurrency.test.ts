import { statSync } from "node:fs";
import { join } from "node:path";
import type { FlootLoginCode, UiCredential } from "@bridgeworks/protocol";
import { afterEach, expect, test } from "vitest";
import { uiSessionsFileName } from "../src/daemon/ui-auth.js";
import { FlootWorld } from "./daemon-harness.js";

// Browsers signing in at once: each redemption saves the page tokens' digests to <state>/ui-sessions.json
// (atomic, 0600) before it answers. Concurrent whole-file writes renamed in whatever order they
// finished, so an older list could land last and a signed-in page lost its token at the next start.

let world: FlootWorld | undefined;

afterEach(async () => {
  const problems = (await world?.dispose()) ?? [];
  world = undefined;
  expect(problems).toEqual([]);
});

const signIns = 50;

async function overviewStatuses(origin: string, credentials: UiCredential[]): Promise<number[]> {
  return Promise.all(
    credentials.map(async ({ token }) => {
      const response = await fetch(`${origin}/v1/overview`, {
        headers: { authorization: `Bearer ${token}` },
      });
      await response.body?.cancel();
      return response.status;
    }),
  );
}

const rounds = 3;

test(`${signIns} sign-ins redeemed at once all work, and all still work after a restart on the same port (${rounds} rounds)`, async () => {
  world = await FlootWorld.create("claude", { steps: [] });
  // libuv's thread pool as wide as the burst: the saves' file operations run side by side and finish in
  // any order, as they may on any loaded machine (with its 4 threads they mostly finish in turn).
  const wide = { UV_THREADPOOL_SIZE: String(signIns) };
  const { port } = (await world.startDaemon(wide)).file;
  const origin = `http://127.0.0.1:${port}`;
  const signedIn: UiCredential[] = [];
  for (let round = 1; round <= rounds; round += 1) {
    // The codes come over the socket, as floot open gets them; then every page redeems its own at once.
    const codes: string[] = [];
    for (let index = 0; index < signIns; index += 1) {
      codes.push((await world.client.request<FlootLoginCode>("POST", "/v1/ui/login-codes")).code);
    }
    const redeemed = await Promise.all(
      codes.map(async (code) => {
        const response = await fetch(`${origin}/ui/sign-in`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ code }),
        });
        return { status: response.status, credential: (await response.json()) as UiCredential };
      }),
    );
    expect(redeemed.map(({ status }) => status)).toEqual(Array(signIns).fill(201));
    const credentials = redeemed.map(({ credential }) => credential);
    expect(new Set(credentials.map(({ token }) => token)).size).toBe(signIns);
    expect(await overviewStatuses(origin, credentials)).toEqual(Array(signIns).fill(200));
    signedIn.push(...credentials);

    // Every answer came after its token was saved: a SIGKILL right after loses none of them.
    await world.killDaemon();
    await world.startDaemon(wide, {}, ["--port", String(port)]);
    expect(world.daemon?.file.port).toBe(port);
    expect(await overviewStatuses(origin, signedIn), `round ${round}`).toEqual(
      Array(signedIn.length).fill(200),
    );
  }
  expect(statSync(join(world.stateDir, uiSessionsFileName)).mode & 0o777).toBe(0o600);
});
