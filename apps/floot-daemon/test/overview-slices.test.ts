// Overview pages asked at once read their pages a step at a time in the shared sliced queue, against
// the real journal and a real HTTP server in this process: a read that comes with them is answered
// before most of them have read anything.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openJournal } from "@bridgeworks/turn-journal";
import { afterEach, expect, test } from "vitest";
import { type SessionListDeps, sendOverview } from "../src/daemon/http/session-lists.js";
import { SlicedQueue } from "../src/daemon/http/sliced-queue.js";
import { SessionStore } from "../src/daemon/session-store.js";
import { acceptedConnections } from "./accepted-connections.js";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

test("a read that comes with twenty overview pages is answered before most of them have read their page", async () => {
  const dir = mkdtempSync(join(tmpdir(), "floot-overview-slices-"));
  const journal = openJournal({ path: join(dir, "journal.sqlite") });
  cleanups.push(() => {
    journal.maintenance.close();
    rmSync(dir, { recursive: true, force: true });
  });
  for (let i = 0; i < 30; i += 1) journal.sessions.createSession({ backend: "claude" });
  let pagesRead = 0;
  const listSessionPageInSteps = journal.sessions.listSessionPageInSteps.bind(journal.sessions);
  journal.sessions.listSessionPageInSteps = (query, options) => {
    pagesRead += 1;
    return listSessionPageInSteps(query, options);
  };
  // Each step costs a millisecond of this clock: a slice of 2 ms holds a couple of them.
  let clock = 0;
  const slices = new SlicedQueue({ sliceMs: 2, now: () => (clock += 0.5), onError: (e) => console.error(e) });
  const deps: SessionListDeps = {
    journal,
    sessions: new SessionStore(dir),
    status: () => ({
      pid: process.pid,
      generation: 1,
      stateDir: dir,
      startedAt: new Date().toISOString(),
      atStart: { keptRunning: 0, replayed: 0, continued: 0, waitingOnYou: 0, interrupted: 0 },
    }),
    openPermissionRequests: () => [],
    slices,
  };
  let pagesReadAtRead: number | undefined;
  const server = createServer((request, response) => {
    if (request.url === "/read") {
      pagesReadAtRead = pagesRead;
      response.end("read");
      return;
    }
    sendOverview(deps, request, response).catch((error) => response.destroy(error));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => server.close());
  const sockets = await acceptedConnections(server, 21, (socket) => cleanups.push(() => socket.destroy()));
  const pages = sockets.slice(0, 20);
  const reader = sockets[20]!;
  const answered = pages.map((socket) => new Promise((resolve) => socket.once("data", resolve)));
  for (const socket of pages) socket.write("GET /v1/overview?limit=10 HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
  reader.write("GET /read HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
  await new Promise((resolve) => reader.once("data", resolve));
  // Read on arrival, every page ahead of the read would have been read already.
  expect(pagesReadAtRead).toBeLessThan(10);
  await Promise.all(answered);
  expect(pagesRead).toBe(20);
}, 30_000);
