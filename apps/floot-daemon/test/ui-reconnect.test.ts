import { createHmac, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, test } from "vitest";
import { Unreachable } from "../ui/src/api.js";
import { watchSessionChanges } from "../ui/src/session-changes.js";

// The page's own modules (ui/src) run here against one port whose owner changes: first the daemon,
// then another user's server. Node has fetch, WebCrypto and streams; the page's `location` and
// `sessionStorage` are given, and relative URLs resolve against that origin as in the browser.

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

interface Seen {
  readonly url: string;
  readonly authorization: string | undefined;
}

async function onePort() {
  let owner: "daemon" | "squatter" = "daemon";
  const squatterSaw: Seen[] = [];
  const identityKey = randomBytes(32).toString("base64url");
  const openStreams = new Set<ServerResponse>();
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    if (owner === "squatter") {
      squatterSaw.push({ url: request.url ?? "", authorization: request.headers.authorization });
      response.writeHead(404).end();
      return;
    }
    if (request.url === "/ui/identity") {
      let body = "";
      request.on("data", (chunk: Buffer) => {
        body += chunk.toString();
      });
      request.on("end", () => {
        const { nonce } = JSON.parse(body) as { nonce: string };
        const proof = createHmac("sha256", Buffer.from(identityKey, "base64url"))
          .update(`${origin}\n${nonce}`)
          .digest("base64url");
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ proof }));
      });
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

  const token = randomBytes(32).toString("base64url");
  const credential = {
    token,
    sessionId: randomBytes(32).toString("base64url"),
    identityKey,
    origin,
    expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
  };
  const storage = new Map([["floot.credential", JSON.stringify(credential)]]);
  const realFetch = globalThis.fetch;
  const page = globalThis as unknown as Record<string, unknown>;
  const before = { location: page.location, sessionStorage: page.sessionStorage };
  page.location = { origin };
  page.sessionStorage = { getItem: (key: string) => storage.get(key) ?? null };
  globalThis.fetch = (input, init) => realFetch(new URL(String(input), origin), init);
  cleanups.push(() => {
    globalThis.fetch = realFetch;
    Object.assign(page, before);
  });

  return {
    token,
    squatterSaw,
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
  });
});
