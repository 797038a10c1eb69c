import { randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type AgentIdentity, mintAgentIdentity, type RunFile } from "@bridgeworks/protocol";
import { afterEach, describe, expect, test } from "vitest";
import {
  type ControlServer,
  mintToken,
  postRetire,
  type SettledRetireOutcome,
  startControlServer,
} from "../src/index.js";

const done: SettledRetireOutcome = {
  status: "done",
  retired: mintAgentIdentity("worker", randomBytes) as AgentIdentity,
  current: mintAgentIdentity("worker", randomBytes) as AgentIdentity,
};

const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

async function controlServer(retire: () => Promise<SettledRetireOutcome>, answerWithinMs = 200) {
  const token = mintToken(randomBytes);
  const server: ControlServer = await startControlServer({ token, retire, answerWithinMs });
  closers.push(() => server.close());
  const runFile: RunFile = { port: server.port, token, pid: process.pid };
  return { server, runFile };
}

/** A plain server standing in for whatever else might listen on a reused port. */
async function impostor(
  handle: (headers: IncomingHttpHeaders) => { status: number; body: string; delayMs?: number },
): Promise<number> {
  const server: Server = createServer((request, response) => {
    const answer = handle(request.headers);
    setTimeout(() => {
      response.writeHead(answer.status, { "content-type": "application/json" });
      response.end(answer.body);
    }, answer.delayMs ?? 0);
  });
  await new Promise<void>((resolve) => server.listen({ host: "127.0.0.1", port: 0 }, resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return (server.address() as AddressInfo).port;
}

async function freedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen({ host: "127.0.0.1", port: 0 }, resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("postRetire", () => {
  test("a done retire comes back answered with the outcome", async () => {
    const { runFile } = await controlServer(async () => done);
    await expect(postRetire(runFile)).resolves.toEqual({ kind: "answered", httpStatus: 200, outcome: done });
  });

  test("a slow retire comes back as running, a failed one as failed", async () => {
    const slow = await controlServer(() => new Promise(() => {}), 100);
    await expect(postRetire(slow.runFile)).resolves.toEqual({
      kind: "answered",
      httpStatus: 202,
      outcome: { status: "running" },
    });
    const failing = await controlServer(async () => {
      throw new Error("board unavailable");
    });
    await expect(postRetire(failing.runFile)).resolves.toEqual({
      kind: "answered",
      httpStatus: 500,
      outcome: { status: "failed", error: "board unavailable" },
    });
  });

  test("a port nobody listens on is a dead port", async () => {
    const port = await freedPort();
    const runFile: RunFile = { port, token: mintToken(randomBytes), pid: process.pid };
    await expect(postRetire(runFile)).resolves.toEqual({ kind: "dead_port", port });
  });

  test("a wrong token is refused with the server's reason", async () => {
    const { runFile } = await controlServer(async () => done);
    const result = await postRetire({ ...runFile, token: mintToken(randomBytes) });
    expect(result).toEqual({ kind: "refused", httpStatus: 401, error: "a valid bearer token is required" });
  });

  test("the token travels as a bearer header with the exact Host and no Origin", async () => {
    let seen: IncomingHttpHeaders | undefined;
    const port = await impostor((headers) => {
      seen = headers;
      return { status: 200, body: JSON.stringify(done) };
    });
    const token = mintToken(randomBytes);
    await postRetire({ port, token, pid: process.pid });
    expect(seen?.authorization).toBe(`Bearer ${token}`);
    expect(seen?.host).toBe(`127.0.0.1:${port}`);
    expect(seen?.origin).toBeUndefined();
    expect(seen?.["content-type"]).toBe("application/json");
  });

  test("an answer that is not an outcome, or whose status disagrees with its HTTP code, is a bad answer", async () => {
    const garbage = await impostor(() => ({ status: 200, body: "<html>" }));
    await expect(postRetire({ port: garbage, token: mintToken(randomBytes), pid: 1 })).resolves.toMatchObject(
      {
        kind: "bad_answer",
        httpStatus: 200,
      },
    );
    const mismatched = await impostor(() => ({ status: 200, body: JSON.stringify({ status: "running" }) }));
    await expect(
      postRetire({ port: mismatched, token: mintToken(randomBytes), pid: 1 }),
    ).resolves.toMatchObject({
      kind: "bad_answer",
      httpStatus: 200,
    });
  });

  test("a server that does not answer in time is timed out", async () => {
    const port = await impostor(() => ({ status: 200, body: JSON.stringify(done), delayMs: 5000 }));
    const startedAt = performance.now();
    const result = await postRetire({ port, token: mintToken(randomBytes), pid: 1 }, { timeoutMs: 200 });
    expect(result).toEqual({ kind: "timed_out", timeoutMs: 200 });
    expect(performance.now() - startedAt).toBeLessThan(2000);
  });

  test("an invalid run file is refused before any request", async () => {
    await expect(postRetire({ port: 0, token: "x", pid: 1 } as RunFile)).rejects.toThrow(/token/);
  });
});
