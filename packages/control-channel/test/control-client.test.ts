import { randomBytes } from "node:crypto";
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type AgentIdentity, mintAgentIdentity, type RunFile } from "@bridgeworks/protocol";
import { afterEach, describe, expect, test } from "vitest";
import {
  bridgeProof,
  type ControlServer,
  mintToken,
  parseRetireAuthorization,
  postRetire,
  type SettledRetireOutcome,
  serverChallenge,
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

const ownProcess = { pid: process.pid, startTime: "4242" };

async function controlServer(retire: () => Promise<SettledRetireOutcome>, answerWithinMs = 200) {
  const token = mintToken(randomBytes);
  const server: ControlServer = await startControlServer({
    token,
    process: ownProcess,
    retire,
    answerWithinMs,
  });
  closers.push(() => server.close());
  const runFile: RunFile = { port: server.port, token, ...ownProcess };
  return { server, runFile };
}

/** A run file for `port` with a token of its own. */
function runFileFor(port: number): RunFile {
  return { port, token: mintToken(randomBytes), ...ownProcess };
}

interface ImpostorAnswer {
  status: number;
  body: string;
  headers?: Record<string, string>;
  delayMs?: number;
}

/** A plain server standing in for whatever else might listen on a reused port. */
async function impostor(handle: (headers: IncomingHttpHeaders) => ImpostorAnswer): Promise<number> {
  const server: Server = createServer((request, response) => {
    const answer = handle(request.headers);
    setTimeout(() => {
      response.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
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
    await expect(postRetire(runFileFor(port))).resolves.toEqual({ kind: "dead_port", port });
  });

  test("a bridge that holds another token cannot prove this one: unproven, and no retire is asked", async () => {
    let retires = 0;
    const { runFile } = await controlServer(async () => {
      retires += 1;
      return done;
    });
    const result = await postRetire({ ...runFile, token: mintToken(randomBytes) });
    expect(result).toEqual({
      kind: "unproven",
      port: runFile.port,
      reason: "its proof does not match the run file's token and process",
    });
    expect(retires).toBe(0);
  });

  test("a bridge with the run file's token but another process (a start time of its own) is unproven", async () => {
    const { runFile } = await controlServer(async () => done);
    const result = await postRetire({ ...runFile, startTime: "4243" });
    expect(result).toMatchObject({ kind: "unproven" });
  });

  test("a relay to the real bridge on another port is unproven: the proof names the port it was made on", async () => {
    const { runFile } = await controlServer(async () => done);
    const relayed: IncomingHttpHeaders[] = [];
    const relay: Server = createServer((request, response) => {
      relayed.push(request.headers);
      const forward = httpRequest(
        {
          host: "127.0.0.1",
          port: runFile.port,
          method: request.method,
          path: request.url,
          agent: false,
          headers: { ...request.headers, host: `127.0.0.1:${runFile.port}` },
        },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        },
      );
      request.pipe(forward);
    });
    await new Promise<void>((resolve) => relay.listen({ host: "127.0.0.1", port: 0 }, resolve));
    closers.push(() => new Promise<void>((resolve) => relay.close(() => resolve())));
    const relayPort = (relay.address() as AddressInfo).port;
    const result = await postRetire({ ...runFile, port: relayPort });
    expect(result).toMatchObject({ kind: "unproven", port: relayPort });
    // Only the challenge went through the relay.
    expect(relayed.map((headers) => parseRetireAuthorization(headers.authorization ?? "")?.scheme)).toEqual([
      "challenge",
    ]);
  });

  test("an impostor sees only a challenge nonce, with the exact Host and no Origin; whatever it answers is unproven", async () => {
    const seen: IncomingHttpHeaders[] = [];
    const answers: ImpostorAnswer[] = [
      { status: 200, body: JSON.stringify(done) },
      { status: 401, body: "{}", headers: { "www-authenticate": "Bearer" } },
      {
        status: 401,
        body: "{}",
        headers: { "www-authenticate": serverChallenge("0".repeat(64), "1".repeat(64)) },
      },
    ];
    for (const answer of answers) {
      const port = await impostor((headers) => {
        seen.push(headers);
        return answer;
      });
      const runFile = runFileFor(port);
      await expect(postRetire(runFile), answer.body).resolves.toMatchObject({ kind: "unproven", port });
      const headers = seen.at(-1)!;
      expect(JSON.stringify(headers)).not.toContain(runFile.token);
      expect(parseRetireAuthorization(headers.authorization ?? "")?.scheme).toBe("challenge");
      expect(headers.host).toBe(`127.0.0.1:${port}`);
      expect(headers.origin).toBeUndefined();
      expect(headers["content-type"]).toBe("application/json");
    }
    expect(seen.length).toBe(answers.length);
  });

  test("after a good proof, an answer that is not an outcome or whose status disagrees with its HTTP code is a bad answer", async () => {
    for (const [status, body] of [
      [200, "<html>"],
      [200, JSON.stringify({ status: "running" })],
    ] as const) {
      const runFile = runFileFor(1);
      const port = await impostor((headers) => {
        const authorization = parseRetireAuthorization(headers.authorization ?? "");
        if (authorization?.scheme !== "challenge") return { status, body };
        // An impostor that knows the token proves itself; only its answer to the retire is wrong.
        const serverNonce = "2".repeat(64);
        const proof = bridgeProof(runFile.token, {
          clientNonce: authorization.clientNonce,
          serverNonce,
          process: ownProcess,
          port: runFile.port,
        });
        return {
          status: 401,
          body: "{}",
          headers: { "www-authenticate": serverChallenge(serverNonce, proof) },
        };
      });
      runFile.port = port;
      await expect(postRetire(runFile), body).resolves.toMatchObject({ kind: "bad_answer", httpStatus: 200 });
    }
  });

  test("a server that does not answer in time is timed out", async () => {
    const port = await impostor(() => ({ status: 200, body: JSON.stringify(done), delayMs: 5000 }));
    const startedAt = performance.now();
    const result = await postRetire(runFileFor(port), { timeoutMs: 200 });
    expect(result).toEqual({ kind: "timed_out", timeoutMs: 200 });
    expect(performance.now() - startedAt).toBeLessThan(2000);
  });

  test("an invalid run file is refused before any request", async () => {
    await expect(postRetire({ port: 0, token: "x", pid: 1, startTime: "1" } as RunFile)).rejects.toThrow(
      /token/,
    );
    await expect(postRetire({ port: 1, token: mintToken(randomBytes), pid: 1 } as RunFile)).rejects.toThrow(
      /startTime/,
    );
  });
});
