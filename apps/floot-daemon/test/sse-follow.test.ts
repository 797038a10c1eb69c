// A follower from the start of a long turn, against the real journal and a real HTTP server in this
// process: the replay goes a page at a time, the loop turning between pages, and a reader that stops
// reading is waited for, not buffered for. Followers that connect at once start a slice at a time.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, get, type Server, type ServerResponse } from "node:http";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "@bridgeworks/runtime";
import { openJournal, type TurnJournal } from "@bridgeworks/turn-journal";
import { afterEach, expect, test } from "vitest";
import { SlicedQueue } from "../src/daemon/http/sliced-queue.js";
import { followOverSse } from "../src/daemon/http/sse-follow.js";
import { acceptedConnections } from "./accepted-connections.js";

const eventCount = 30_000;
// About 250 bytes per frame: the whole turn is several times what loopback's socket buffers hold.
const padding = "x".repeat(160);
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

function longTurn(events = eventCount): { journal: TurnJournal; turnId: string } {
  const dir = mkdtempSync(join(tmpdir(), "floot-sse-follow-"));
  const journal = openJournal({ path: join(dir, "journal.sqlite"), batch: { maxEvents: 1000 } });
  cleanups.push(() => {
    journal.maintenance.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const session = journal.sessions.createSession({ backend: "claude" });
  const turn = journal.turns.submitTurn(session.id, { prompt: "a long one" });
  journal.turns.transition(turn.id, { phase: "spawning" });
  journal.turns.transition(turn.id, { phase: "running", process: { pid: 4242, startTime: "1" } });
  for (let index = 0; index < events; index += 1) {
    journal.events.appendEvents(turn.id, [{ type: "reasoning", text: `${index} ${padding}` }]);
  }
  journal.events.flush();
  return { journal, turnId: turn.id };
}

/** Serves the follow of `turnId`; `responses` gets each response, `writes` the loop tick of each write. */
async function serve(
  journal: TurnJournal,
  turnId: string,
  ticks: { count: number },
  writes: number[],
  starts = new SlicedQueue({ sliceMs: 2, onError: (error) => console.error(error) }),
  onRead = () => {},
) {
  const responses: ServerResponse[] = [];
  const server: Server = createServer((request, response) => {
    responses.push(response);
    const write = response.write.bind(response) as (chunk: string) => boolean;
    response.write = ((chunk: string) => {
      writes.push(ticks.count);
      return write(chunk);
    }) as typeof response.write;
    if (request.url === "/read") {
      onRead();
      response.end("read");
      return;
    }
    followOverSse(request, response, journal.turns.getTurn(turnId)!, {
      journal,
      heartbeatMs: 60_000,
      openStreams: new Set(),
      frames: new WeakMap(),
      starts,
      logger: silentLogger,
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => {
    server.closeAllConnections();
    server.close();
  });
  const { port } = server.address() as { port: number };
  return { port, responses, server };
}

function openFollow(port: number, turnId: string): Socket {
  const socket = connect(port, "127.0.0.1");
  socket.write(`GET /v1/turns/${turnId}/follow?from=0 HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`);
  cleanups.push(() => socket.destroy());
  return socket;
}

/** Counts turns of the event loop (one per check phase) until stopped. */
function countTicks(): { count: number } {
  const ticks = { count: 0, stopped: false };
  const tick = () => {
    ticks.count += 1;
    if (!ticks.stopped) setImmediate(tick);
  };
  setImmediate(tick);
  cleanups.push(() => {
    ticks.stopped = true;
  });
  return ticks;
}

/** The event indexes the socket delivers, resolved once the terminal event arrived. */
function readUntilTerminal(socket: Socket): Promise<number[]> {
  const indexes: number[] = [];
  let text = "";
  socket.setEncoding("utf8");
  return new Promise((resolve) => {
    socket.on("data", (chunk: string) => {
      text += chunk;
      const frames = text.split("\n\n");
      text = frames.pop()!;
      for (const frame of frames) {
        const id = /^id: (\d+)$/m.exec(frame);
        if (id) indexes.push(Number(id[1]));
        if (frame.includes('"type":"terminal"')) resolve(indexes);
      }
    });
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test("a reader that stops reading holds under a tenth of the turn in the daemon, then gets every event in order", async () => {
  const { journal, turnId } = longTurn();
  const writes: number[] = [];
  const { port, responses } = await serve(journal, turnId, countTicks(), writes);
  const socket = openFollow(port, turnId);
  socket.pause();
  // Wait until the daemon stops writing (the socket full), at most 10 s.
  let lastWrites = -1;
  for (let waited = 0; waited < 10_000 && writes.length !== lastWrites; waited += 200) {
    lastWrites = writes.length;
    await sleep(200);
  }
  const response = responses[0]!;
  const turnBytes = eventCount * 250;
  expect(response.writableNeedDrain).toBe(true);
  // Without backpressure the whole turn (7 MB) would wait in the response's buffer.
  expect(response.writableLength).toBeLessThan(turnBytes / 10);

  journal.turns.transition(turnId, { phase: "completed" });
  const delivered = readUntilTerminal(socket);
  socket.resume();
  const indexes = await delivered;
  const stored = journal.events.readEvents(turnId, 0, eventCount + 10).length;
  expect(indexes).toEqual(Array.from({ length: stored }, (_, index) => index));
}, 60_000);

test("a replay of many pages lets the event loop turn between its pages", async () => {
  const { journal, turnId } = longTurn();
  journal.turns.transition(turnId, { phase: "completed" });
  const writes: number[] = [];
  const { port } = await serve(journal, turnId, countTicks(), writes);
  await readUntilTerminal(openFollow(port, turnId));
  // 60 pages of 500: read in one call, every write would be in the same turn of the loop.
  expect(writes.length).toBeGreaterThanOrEqual(eventCount / 500);
  expect(new Set(writes).size).toBeGreaterThanOrEqual(eventCount / 500 / 2);
}, 60_000);

test("a follower with nothing to replay gets the stream's headers at once, not with the first event", async () => {
  const { journal, turnId } = longTurn(3);
  const { port } = await serve(journal, turnId, countTicks(), []);
  const from = journal.events.readEvents(turnId).length;
  const status = await new Promise<number | undefined>((resolve, reject) => {
    const request = get(
      { host: "127.0.0.1", port, path: `/v1/turns/${turnId}/follow?from=${from}` },
      (response) => resolve(response.statusCode),
    );
    request.on("error", reject);
    cleanups.push(() => request.destroy());
    // No event comes: without the headers by now, a client would wait for the turn's next event.
    setTimeout(() => resolve(undefined), 10_000);
  });
  expect(status).toBe(200);
}, 30_000);

test("a read that comes with a hundred followers is answered before most of them have started", async () => {
  const { journal, turnId } = longTurn(3);
  // Each start costs a millisecond of this clock: two starts per slice of 2 ms.
  let clock = 0;
  const now = () => (clock += 0.5);
  const starts = new SlicedQueue({ sliceMs: 2, now, onError: (error) => console.error(error) });
  let startedAtRead: number | undefined;
  const { responses, server } = await serve(journal, turnId, countTicks(), [], starts, () => {
    startedAtRead = responses.filter((response) => response.headersSent).length;
  });
  const sockets = await acceptedConnections(server, 101, (socket) => cleanups.push(() => socket.destroy()));
  const followers = sockets.slice(0, 100);
  const reader = sockets[100]!;
  let streaming = 0;
  for (const socket of followers) {
    socket.once("data", () => (streaming += 1));
    socket.write(`GET /v1/turns/${turnId}/follow?from=0 HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`);
  }
  reader.write("GET /read HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n");
  await new Promise((resolve) => reader.once("data", resolve));
  // Started in its request handler, every follower ahead of the read would have been streaming.
  expect(startedAtRead).toBeLessThan(20);
  for (let waited = 0; streaming < 100; waited += 10) {
    if (waited > 20_000) throw new Error(`${streaming} of 100 followers streaming after 20 s`);
    await sleep(10);
  }
}, 30_000);
