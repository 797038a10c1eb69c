import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { UiAuth } from "../src/daemon/ui-auth.js";
import { Unreachable } from "../ui/src/api.js";
import { watchSessionChanges } from "../ui/src/session-changes.js";

// The page's own modules (ui/src) run here against one port whose owner changes: first the daemon,
// then another user's server. The daemon's side is its own sign-in (`UiAuth`: the credential and the
// identity proof). Node has fetch, WebCrypto and streams; the page's `location` and
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
  const stateDir = mkdtempSync(join(tmpdir(), "floot-ui-reconnect-"));
  cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }));
  const auth = new UiAuth({ stateDir });
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
        const { sessionId, nonce } = JSON.parse(body) as { sessionId: string; nonce: string };
        const proof = auth.prove(sessionId, origin, nonce);
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

  const credential = (await auth.redeemLoginCode(auth.mintLoginCode().code, origin))!;
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
    token: credential.token,
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
