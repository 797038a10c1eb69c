import type { FlootOverview, FlootSessionChange, FlootSessionList } from "@bridgeworks/protocol";
import { afterEach, expect, test } from "vitest";
import { FlootWorld } from "./daemon-harness.js";

// The paged session lists and the change stream through the built daemon's HTTP API.

let world: FlootWorld | undefined;

afterEach(async () => {
  const problems = (await world?.dispose()) ?? [];
  world = undefined;
  expect(problems).toEqual([]);
});

test("lists are keyset pages, bad parameters are named, and /v1/changes pushes each new session", async () => {
  world = await FlootWorld.create("claude", { steps: [] });
  const { port, token } = (await world.startDaemon()).file;
  const get = (path: string, init: RequestInit = {}) =>
    fetch(`http://127.0.0.1:${port}${path}`, { ...init, headers: { authorization: `Bearer ${token}` } });

  const changes = new AbortController();
  const stream = await get("/v1/changes", { signal: changes.signal });
  expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
  const heard: FlootSessionChange[] = [];
  const reading = (async () => {
    const decoder = new TextDecoder();
    let buffer = "";
    try {
      for await (const chunk of stream.body!) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        for (let split = buffer.indexOf("\n\n"); split !== -1; split = buffer.indexOf("\n\n")) {
          const data = buffer
            .slice(0, split)
            .split("\n")
            .find((line) => line.startsWith("data: "));
          buffer = buffer.slice(split + 2);
          if (data) heard.push(JSON.parse(data.slice(6)) as FlootSessionChange);
        }
      }
    } catch {
      // Aborted at the end of the test.
    }
  })();

  const ids: string[] = [];
  for (let i = 0; i < 5; i += 1) ids.push((await world.createSession()).id);
  const page1 = (await (await get("/v1/sessions?limit=2")).json()) as FlootSessionList;
  expect(page1.sessions.map((s) => s.id)).toEqual([ids[4], ids[3]]);
  const page2 = (await (
    await get(`/v1/sessions?limit=2&cursor=${page1.nextCursor}`)
  ).json()) as FlootSessionList;
  expect(page2.sessions.map((s) => s.id)).toEqual([ids[2], ids[1]]);
  const overview = (await (await get("/v1/overview?limit=10&status=idle")).json()) as FlootOverview;
  expect(overview.sessions.map((s) => s.session.id)).toEqual([...ids].reverse());
  expect(overview.nextCursor).toBeUndefined();
  expect(((await (await get("/v1/overview?status=running")).json()) as FlootOverview).sessions).toEqual([]);
  // Nothing waits on a person: the inbox's page is empty (and `waiting=false` is the plain list).
  const waiting = (await (await get("/v1/overview?waiting=true")).json()) as FlootOverview;
  expect(waiting.sessions).toEqual([]);
  expect(waiting.nextCursor).toBeUndefined();
  const plain = (await (await get("/v1/overview?waiting=false&limit=1")).json()) as FlootOverview;
  expect(plain.sessions.map((s) => s.session.id)).toEqual([ids[4]]);

  for (const [query, field] of [
    ["limit=0", "limit"],
    ["limit=501", "limit"],
    ["status=busy", "status"],
    ["cursor=not-a-cursor", "cursor"],
    [`q=${"x".repeat(201)}`, "q"],
    ["waiting=yes", "waiting"],
    ["waiting=true&status=idle", "status"],
    ["waiting=true&q=fix", "q"],
    ["waiting=true&limit=0", "limit"],
    ["waiting=true&cursor=not-a-cursor", "cursor"],
  ] as const) {
    const response = await get(`/v1/overview?${query}`);
    expect(response.status, query).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(
      new RegExp(`^${field}`),
    );
  }

  await expect.poll(() => heard.map((change) => change.summary.session.id), { timeout: 30_000 }).toEqual(ids);
  changes.abort();
  await reading;
}, 120_000);
