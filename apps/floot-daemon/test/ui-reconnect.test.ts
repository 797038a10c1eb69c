import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { UiPublicKey } from "@bridgeworks/protocol";
import { afterEach, describe, expect, test } from "vitest";
import { UiAuth } from "../src/daemon/ui-auth.js";
import { Unreachable } from "../ui/src/api.js";
import { signInWithCode, takeLoginCode } from "../ui/src/credential.js";
import { watchSessionChanges } from "../ui/src/session-changes.js";
import { memoryIndexedDb } from "./memory-indexeddb.js";

// The page's own modules (ui/src) run here against one port whose owner changes: first the daemon,
// then another user's server. The daemon's side is its own sign-in (`UiAuth`: the credential, the
// identity proof, the challenge and the access token). Node has fetch, WebCrypto and streams; the page's
// `location`, `history`, `sessionStorage` and `indexedDB` (memory-indexeddb.ts) are given, and relative
// URLs resolve against that origin as in the browser.

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

/** Any of the /ui routes' bodies (each reads its own fields). */
interface RouteBody {
  code: string;
  publicKey: UiPublicKey;
  sessionId: string;
  nonce: string;
  token: string;
  signature: string;
}

interface Seen {
  readonly url: string;
  readonly authorization: string | undefined;
}

async function onePort() {
  let owner: "daemon" | "squatter" = "daemon";
  const squatterSaw: Seen[] = [];
  const daemonSawBearers: string[] = [];
  const stateDir = mkdtempSync(join(tmpdir(), "floot-ui-reconnect-"));
  cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }));
  const auth = new UiAuth({ stateDir });
  const openStreams = new Set<ServerResponse>();
  // The daemon's /ui routes (http/ui-pages.ts), each answered by `UiAuth` as the daemon answers them.
  const signInRoutes: Record<string, (body: RouteBody) => Promise<unknown>> = {
    "/ui/sign-in": (body) => auth.redeemLoginCode(body.code, origin, body.publicKey),
    "/ui/identity": async (body) => ({ proof: auth.prove(body.sessionId, origin, body.nonce) }),
    "/ui/challenge": async (body) => auth.challenge(body.token, origin),
    "/ui/access": async (body) => auth.grantAccess(body.token, origin, body.nonce, body.signature),
  };
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    if (owner === "squatter") {
      squatterSaw.push({ url: request.url ?? "", authorization: request.headers.authorization });
      response.writeHead(404).end();
      return;
    }
    const answer = signInRoutes[request.url ?? ""];
    if (answer !== undefined) {
      let body = "";
      request.on("data", (chunk: Buffer) => {
        body += chunk.toString();
      });
      request.on("end", () => {
        void answer(JSON.parse(body) as RouteBody).then((result) =>
          response
            .writeHead(result === undefined ? 401 : 200, { "content-type": "application/json" })
            .end(JSON.stringify(result ?? {})),
        );
      });
      return;
    }
    const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1];
    if (bearer !== undefined) daemonSawBearers.push(bearer);
    if (!auth.isAccess(bearer, origin)) {
      response.writeHead(401).end();
      return;
    }
    response.writeHead(200, { "content-type": "text/event-stream" });
    response.write(": open\n\n");
    openStreams.add(response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  cleanups.push(() => server.close());
  cleanups.push(() => server.closeAllConnections());

  const storage = new Map<string, string>();
  const realFetch = globalThis.fetch;
  const page = globalThis as unknown as Record<string, unknown>;
  const names = ["location", "history", "sessionStorage", "indexedDB"] as const;
  const before = Object.fromEntries(names.map((name) => [name, page[name]]));
  page.location = { origin, pathname: "/", hash: `#login=${auth.mintLoginCode().code}` };
  page.history = { replaceState() {} };
  page.sessionStorage = {
    getItem: (key: string) => storage.get(key) ?? null,
    setItem: (key: string, value: string) => storage.set(key, value),
  };
  page.indexedDB = memoryIndexedDb();
  globalThis.fetch = (input, init) => realFetch(new URL(String(input), origin), init);
  cleanups.push(() => {
    globalThis.fetch = realFetch;
    Object.assign(page, before);
  });
  // The page's own sign-in: its key pair made, the code and public key traded for the credential.
  await signInWithCode(takeLoginCode()!);
  const { token } = JSON.parse(storage.get("floot.credential")!) as { token: string };

  return {
    token,
    squatterSaw,
    daemonSawBearers,
    /** The daemon dies with the stream open, and another user's server answers on its port at once. */
    daemonReplacedBySquatter() {
      owner = "squatter";
      for (const stream of openStreams) stream.destroy();
    },
  };
}

describe("the page's change stream after the daemon died", () => {
  test("a broken stream makes the page prove the daemon again: the token never reaches whoever holds the port next", async () => {
    const port = await onePort();
    const abort = new AbortController();
    cleanups.push(() => abort.abort());

    let opened = false;
    const first = watchSessionChanges(
      () => {
        opened = true;
        port.daemonReplacedBySquatter();
      },
      () => {},
      abort.signal,
    );
    await expect(first).rejects.toBeInstanceOf(Unreachable);
    expect(opened).toBe(true);

    // The reconnect (the sessions list retries at once on its first attempt) meets the squatter.
    await expect(
      watchSessionChanges(
        () => {},
        () => {},
        abort.signal,
      ),
    ).rejects.toBeInstanceOf(Unreachable);
    expect(port.squatterSaw.map((seen) => seen.url)).toEqual(["/ui/identity"]);
    expect(port.squatterSaw.map((seen) => seen.authorization)).toEqual([undefined]);
    expect(JSON.stringify(port.squatterSaw)).not.toContain(port.token);
    // The first stream carried an access token (not the stored token); the squatter saw none of it.
    expect(port.daemonSawBearers.length).toBe(1);
    expect(port.daemonSawBearers).not.toContain(port.token);
    expect(JSON.stringify(port.squatterSaw)).not.toContain(port.daemonSawBearers[0]);
  });
});
