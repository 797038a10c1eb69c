import { generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import { statSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import type { FlootLoginCode, UiAccess, UiChallenge, UiCredential } from "@bridgeworks/protocol";
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

/** A page's sign-in as the page keeps it: the stored credential and its non-exportable key's private half. */
interface SignedIn {
  credential: UiCredential;
  key: KeyObject;
}

/** One request on a connection of its own: no pooled connection to a killed daemon is ever reused. */
function call<T>(
  url: string,
  method: "GET" | "POST",
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ status: number; json: T }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method, headers, agent: false }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        text += chunk;
      });
      response.on("end", () => resolve({ status: response.statusCode ?? 0, json: JSON.parse(text) as T }));
    });
    request.on("error", reject);
    request.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

const post = <T>(url: string, body: unknown) =>
  call<T>(url, "POST", { "content-type": "application/json" }, body);

/** What each page does after a (re)start: a challenge signed with its key, traded for an access token. */
async function accessToken(origin: string, { credential, key }: SignedIn): Promise<string> {
  const { json: challenge } = await post<UiChallenge>(`${origin}/ui/challenge`, { token: credential.token });
  const message = Buffer.from(`floot-ui-access\n${origin}\n${challenge.nonce}`);
  const signature = sign("sha256", message, { key, dsaEncoding: "ieee-p1363" }).toString("base64url");
  const { json } = await post<UiAccess>(`${origin}/ui/access`, {
    token: credential.token,
    nonce: challenge.nonce,
    signature,
  });
  return json.accessToken;
}

async function overviewStatuses(origin: string, pages: SignedIn[]): Promise<number[]> {
  return Promise.all(
    pages.map(async (page) => {
      const token = await accessToken(origin, page);
      return (await call(`${origin}/v1/overview`, "GET", { authorization: `Bearer ${token}` })).status;
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
  const signedIn: SignedIn[] = [];
  for (let round = 1; round <= rounds; round += 1) {
    // The codes come over the socket, as floot open gets them; then every page redeems its own at once.
    const codes: string[] = [];
    for (let index = 0; index < signIns; index += 1) {
      codes.push((await world.client.request<FlootLoginCode>("POST", "/v1/ui/login-codes")).code);
    }
    const redeemed = await Promise.all(
      codes.map(async (code) => {
        const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
        const { x, y } = publicKey.export({ format: "jwk" });
        const answer = await post<UiCredential>(`${origin}/ui/sign-in`, {
          code,
          publicKey: { kty: "EC", crv: "P-256", x, y },
        });
        return { status: answer.status, page: { credential: answer.json, key: privateKey } };
      }),
    );
    expect(redeemed.map(({ status }) => status)).toEqual(Array(signIns).fill(201));
    const pages = redeemed.map(({ page }) => page);
    expect(new Set(pages.map(({ credential }) => credential.token)).size).toBe(signIns);
    expect(await overviewStatuses(origin, pages)).toEqual(Array(signIns).fill(200));
    signedIn.push(...pages);

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
