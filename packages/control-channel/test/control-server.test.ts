import { randomBytes } from "node:crypto";
import { connect } from "node:net";
import { type AgentIdentity, mintAgentIdentity, type RetireOutcome } from "@bridgeworks/protocol";
import { afterEach, describe, expect, test } from "vitest";
import {
  bridgeProof,
  type ControlServer,
  type ControlServerOptions,
  challengeAuthorization,
  mintNonce,
  mintToken,
  parseServerChallenge,
  retireAuthorization,
  retireMac,
  type SettledRetireOutcome,
  startControlServer,
} from "../src/index.js";
import { corsHeaders, deferred, proveRetire, type RawResponse, send, sendRaw } from "./helpers.js";

const retired = mintAgentIdentity("worker", randomBytes) as AgentIdentity;
const current = mintAgentIdentity("worker", randomBytes) as AgentIdentity;
const done: SettledRetireOutcome = { status: "done", retired, current };

const servers: ControlServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

interface Harness {
  server: ControlServer;
  token: string;
  retireCalls: () => number;
  /** Headers of a retire that answered a fresh challenge, plus `extra`. */
  authorized: (extra?: Record<string, string>) => Promise<Record<string, string>>;
}

const ownProcess = { pid: process.pid, startTime: "4242" };

async function start(
  retire: ControlServerOptions["retire"] = async () => done,
  answerWithinMs = 300,
): Promise<Harness> {
  const token = mintToken(randomBytes);
  let calls = 0;
  const server = await startControlServer({
    token,
    process: ownProcess,
    answerWithinMs,
    retire: () => {
      calls += 1;
      return retire();
    },
  });
  servers.push(server);
  return {
    server,
    token,
    retireCalls: () => calls,
    authorized: async (extra = {}) => ({ authorization: await proveRetire(server.port, token), ...extra }),
  };
}

function expectNoCors(response: RawResponse): void {
  expect(corsHeaders(response.headers)).toEqual([]);
}

describe("refusals", () => {
  test("a request without authorization is refused with 401, asking for a challenge", async () => {
    const { server, retireCalls } = await start();
    const response = await send(server.port);
    expect(response.status).toBe(401);
    expect(response.headers["www-authenticate"]).toBe("Bee-Challenge");
    expectNoCors(response);
    expect(retireCalls()).toBe(0);
  });

  test("the token itself is refused in any form: a bearer, right or wrong, and malformed proofs get 401", async () => {
    const { server, token, retireCalls } = await start();
    const wrong = mintToken(randomBytes);
    const nonce = mintNonce(randomBytes);
    for (const authorization of [
      `Bearer ${token}`,
      `Bearer ${wrong}`,
      `Basic ${token}`,
      "Bearer",
      `Bee-Proof nonce=${nonce}, mac=${token}`,
      `Bee-Proof nonce=${nonce}`,
      `Bee-Challenge nonce=${nonce.slice(0, -1)}`,
      `Bee-Challenge nonce=${nonce.toUpperCase()}`,
    ]) {
      const response = await send(server.port, { headers: { authorization } });
      expect(response.status, authorization.replace(token, "<token>")).toBe(401);
      expect(response.headers["www-authenticate"], authorization).toBe("Bee-Challenge");
      expectNoCors(response);
    }
    expect(retireCalls()).toBe(0);
  });

  test("a request carrying an Origin header is refused with 403, even with the right token", async () => {
    const { server, authorized, retireCalls } = await start();
    for (const origin of ["https://evil.example", "null", `http://127.0.0.1:${server.port}`]) {
      const response = await send(server.port, { headers: await authorized({ origin }) });
      expect(response.status, origin).toBe(403);
      expectNoCors(response);
    }
    expect(retireCalls()).toBe(0);
  });

  test("a foreign Host is refused with 403", async () => {
    const { server, authorized, retireCalls } = await start();
    for (const host of [
      `localhost:${server.port}`,
      `127.0.0.1:${server.port + 1}`,
      "127.0.0.1",
      `evil.example:${server.port}`,
      `[::1]:${server.port}`,
    ]) {
      const response = await send(server.port, { headers: await authorized({ host }) });
      expect(response.status, host).toBe(403);
      expectNoCors(response);
    }
    expect(retireCalls()).toBe(0);
  });

  test("a second Host header is refused with 403", async () => {
    const { server, token, retireCalls } = await start();
    const raw = [
      "POST /retire HTTP/1.1",
      `Host: 127.0.0.1:${server.port}`,
      "Host: evil.example",
      `Authorization: ${await proveRetire(server.port, token)}`,
      "Content-Length: 0",
      "",
      "",
    ].join("\r\n");
    const response = await sendRaw(server.port, raw);
    expect(response.status, response.head).toBe(403);
    expect(corsHeaders(response.head)).toEqual([]);
    expect(retireCalls()).toBe(0);
  });

  test("a text/plain simple POST is refused: 401 without a token, 415 with one", async () => {
    const { server, authorized, retireCalls } = await start();
    const withoutToken = await send(server.port, { headers: { "content-type": "text/plain" }, body: "{}" });
    expect(withoutToken.status).toBe(401);
    expectNoCors(withoutToken);
    for (const contentType of [
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
    ]) {
      const response = await send(server.port, {
        headers: await authorized({ "content-type": contentType }),
        body: "{}",
      });
      expect(response.status, contentType).toBe(415);
      expectNoCors(response);
    }
    expect(retireCalls()).toBe(0);
  });

  test("an OPTIONS preflight is refused with 405 and approves nothing", async () => {
    const { server, retireCalls } = await start();
    const response = await send(server.port, {
      method: "OPTIONS",
      headers: {
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization",
        "access-control-request-private-network": "true",
      },
    });
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe("POST");
    expectNoCors(response);
    expect(retireCalls()).toBe(0);
  });

  test("other methods on /retire are refused with 405", async () => {
    const { server, authorized, retireCalls } = await start();
    for (const method of ["GET", "PUT", "DELETE", "PATCH"]) {
      const response = await send(server.port, { method, headers: await authorized() });
      expect(response.status, method).toBe(405);
      expectNoCors(response);
    }
    expect(retireCalls()).toBe(0);
  });

  test("other paths are refused with 404", async () => {
    const { server, authorized, retireCalls } = await start();
    for (const path of ["/other", "/", "/retire/", "/retire?now=1", "/RETIRE"]) {
      const response = await send(server.port, { path, headers: await authorized() });
      expect(response.status, path).toBe(404);
      expectNoCors(response);
    }
    expect(retireCalls()).toBe(0);
  });

  test("a body over 1 KiB is refused with 413, declared or chunked", async () => {
    const { server, authorized, retireCalls } = await start();
    const big = JSON.stringify({ padding: "x".repeat(1100) });
    const declared = await send(server.port, {
      headers: await authorized({ "content-type": "application/json" }),
      body: big,
    });
    expect(declared.status).toBe(413);
    expectNoCors(declared);
    const chunked = await send(server.port, {
      headers: await authorized({ "content-type": "application/json", "transfer-encoding": "chunked" }),
      body: big,
    });
    expect(chunked.status).toBe(413);
    expect(retireCalls()).toBe(0);
  });

  test("a body that is not JSON is refused with 400", async () => {
    const { server, authorized, retireCalls } = await start();
    const response = await send(server.port, {
      headers: await authorized({ "content-type": "application/json" }),
      body: "retire!",
    });
    expect(response.status).toBe(400);
    expect(retireCalls()).toBe(0);
  });
});

describe("the challenge", () => {
  test("is answered 401 with a fresh nonce and an HMAC of the token over both nonces, the serving process and its port", async () => {
    const { server, token, retireCalls } = await start();
    const clientNonce = mintNonce(randomBytes);
    const answers = [];
    for (let round = 0; round < 2; round += 1) {
      const response = await send(server.port, {
        headers: { authorization: challengeAuthorization(clientNonce) },
      });
      expect(response.status).toBe(401);
      expectNoCors(response);
      const challenge = parseServerChallenge(String(response.headers["www-authenticate"]));
      expect(challenge).toBeDefined();
      expect(challenge!.proof).toBe(
        bridgeProof(token, {
          clientNonce,
          serverNonce: challenge!.serverNonce,
          process: ownProcess,
          port: server.port,
        }),
      );
      expect(response.body).not.toContain(token);
      answers.push(challenge!.serverNonce);
    }
    expect(answers[0]).not.toBe(answers[1]);
    expect(retireCalls()).toBe(0);
  });

  test("is not answered to a request with an Origin or a foreign Host: no proof reaches a page", async () => {
    const { server } = await start();
    const authorization = challengeAuthorization(mintNonce(randomBytes));
    for (const headers of [
      { authorization, origin: "https://evil.example" } as Record<string, string>,
      { authorization, host: `localhost:${server.port}` },
    ]) {
      const response = await send(server.port, { headers });
      expect(response.status).toBe(403);
      expect(response.headers["www-authenticate"]).toBeUndefined();
    }
  });

  test("a server nonce is good for one retire only: the same proof again is refused", async () => {
    const { server, authorized, retireCalls } = await start();
    const headers = await authorized();
    expect((await send(server.port, { headers })).status).toBe(200);
    const replayed = await send(server.port, { headers });
    expect(replayed.status).toBe(401);
    expect(retireCalls()).toBe(1);
  });

  test("a MAC made with another token, for another client nonce or a nonce the server never issued is refused", async () => {
    const { server, token, retireCalls } = await start();
    const port = server.port;
    const challenge = async (clientNonce: string) => {
      const response = await send(port, { headers: { authorization: challengeAuthorization(clientNonce) } });
      return parseServerChallenge(String(response.headers["www-authenticate"]))!.serverNonce;
    };
    const clientNonce = mintNonce(randomBytes);
    const attempts = [
      ["another token", mintToken(randomBytes), clientNonce, await challenge(clientNonce)],
      ["another client nonce", token, mintNonce(randomBytes), await challenge(clientNonce)],
      ["an unissued server nonce", token, clientNonce, mintNonce(randomBytes)],
    ] as const;
    for (const [what, key, macClientNonce, serverNonce] of attempts) {
      const mac = retireMac(key, { clientNonce: macClientNonce, serverNonce, port });
      const response = await send(port, {
        headers: { authorization: retireAuthorization(serverNonce, mac) },
      });
      expect(response.status, what).toBe(401);
    }
    expect(retireCalls()).toBe(0);
  });
});

describe("retire", () => {
  test("a correct request answers 200 with the retire outcome", async () => {
    const { server, authorized, retireCalls } = await start();
    const response = await send(server.port, {
      headers: await authorized({ "content-type": "application/json" }),
      body: "{}",
    });
    expect(response.status).toBe(200);
    expect(response.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(response.body)).toEqual(done);
    expectNoCors(response);
    expect(retireCalls()).toBe(1);
  });

  test("an empty body without Content-Type and a JSON content type with a charset are accepted", async () => {
    const { server, authorized } = await start();
    expect((await send(server.port, { headers: await authorized() })).status).toBe(200);
    const withCharset = await send(server.port, {
      headers: await authorized({ "content-type": "Application/JSON; charset=utf-8" }),
      body: "{}",
    });
    expect(withCharset.status).toBe(200);
  });

  test("a retire that rejects answers 500 with its message", async () => {
    const { server, authorized } = await start(async () => {
      throw new Error("board unavailable");
    });
    const response = await send(server.port, { headers: await authorized() });
    expect(response.status).toBe(500);
    expect(JSON.parse(response.body)).toEqual({ status: "failed", error: "board unavailable" });
    expectNoCors(response);
  });

  test("a retire that throws synchronously or reports failure answers 500", async () => {
    const throwing = await start(() => {
      throw new Error("sync boom");
    });
    const thrown = await send(throwing.server.port, { headers: await throwing.authorized() });
    expect(thrown.status).toBe(500);
    expect(JSON.parse(thrown.body)).toEqual({ status: "failed", error: "sync boom" });

    const reporting = await start(async () => ({ status: "failed", error: "depart refused" }));
    const reported = await send(reporting.server.port, { headers: await reporting.authorized() });
    expect(reported.status).toBe(500);
    expect(JSON.parse(reported.body)).toEqual({ status: "failed", error: "depart refused" });
  });

  test("a retire that resolves to something that is not an outcome answers 500", async () => {
    const { server, authorized } = await start(
      async () => ({ status: "done" }) as unknown as SettledRetireOutcome,
    );
    const response = await send(server.port, { headers: await authorized() });
    expect(response.status).toBe(500);
    expect(JSON.parse(response.body)).toEqual({
      status: "failed",
      error: "retire produced an invalid outcome",
    });
  });

  test("a slow retire answers 202 running, and the next request after it settled starts a new retire", async () => {
    const slow = deferred<SettledRetireOutcome>();
    let firstCall = true;
    const { server, authorized, retireCalls } = await start(() => {
      if (firstCall) {
        firstCall = false;
        return slow.promise;
      }
      return Promise.resolve(done);
    }, 100);
    const response = await send(server.port, { headers: await authorized() });
    expect(response.status).toBe(202);
    expect(JSON.parse(response.body)).toEqual({ status: "running" } satisfies RetireOutcome);
    expectNoCors(response);

    slow.resolve(done);
    await slow.promise;
    const next = await send(server.port, { headers: await authorized() });
    expect(next.status).toBe(200);
    expect(retireCalls()).toBe(2);
  });

  test("concurrent requests join the running retire instead of starting a second one", async () => {
    const gate = deferred<SettledRetireOutcome>();
    const { server, authorized, retireCalls } = await start(() => gate.promise, 5000);
    const responses = Promise.all(
      [1, 2, 3].map(async () => send(server.port, { headers: await authorized() })),
    );
    await waitUntil(() => retireCalls() > 0);
    // Let the other two requests arrive while the first retire still runs.
    await new Promise((resolve) => setTimeout(resolve, 100));
    gate.resolve(done);
    const answered = await responses;
    expect(answered.map((response) => response.status)).toEqual([200, 200, 200]);
    expect(answered.map((response) => JSON.parse(response.body))).toEqual([done, done, done]);
    expect(retireCalls()).toBe(1);
  });

  test("a hanging retire answers 202 within the default 5 s, and close() returns promptly", async () => {
    const token = mintToken(randomBytes);
    const server = await startControlServer({
      token,
      process: ownProcess,
      retire: () => new Promise(() => {}),
    });
    servers.push(server);
    const authorization = await proveRetire(server.port, token);
    const startedAt = performance.now();
    const response = await send(server.port, { headers: { authorization } });
    const waitedMs = performance.now() - startedAt;
    expect(response.status).toBe(202);
    expect(waitedMs).toBeGreaterThanOrEqual(4900);
    expect(waitedMs).toBeLessThan(6500);

    const closeStartedAt = performance.now();
    await server.close();
    expect(performance.now() - closeStartedAt).toBeLessThan(1000);
  }, 15_000);

  test("close() does not wait for a request that waits on a hanging retire", async () => {
    const { server, authorized, retireCalls } = await start(() => new Promise(() => {}), 5000);
    const pending = send(server.port, { headers: await authorized() }).then(
      (response) => ({ kind: "answered" as const, status: response.status }),
      (error: Error) => ({ kind: "dropped" as const, message: error.message }),
    );
    await waitUntil(() => retireCalls() > 0);
    const closeStartedAt = performance.now();
    await server.close();
    expect(performance.now() - closeStartedAt).toBeLessThan(1000);
    expect((await pending).kind).toBe("dropped");
    // Idempotent.
    await server.close();
  });

  test("the server listens on 127.0.0.1 only", async () => {
    const { server } = await start();
    expect(server.host).toBe("127.0.0.1");
    for (const host of ["127.0.0.2", "::1"]) {
      await expect(canConnect(host, server.port), host).resolves.toBe(false);
    }
    await expect(canConnect("127.0.0.1", server.port)).resolves.toBe(true);
  });

  test("an invalid token option is refused at start", async () => {
    await expect(
      startControlServer({ token: "short", process: ownProcess, retire: async () => done }),
    ).rejects.toThrow(/64 lowercase hex/);
  });
});

async function waitUntil(condition: () => boolean, timeoutMs = 2000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error("condition not reached");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

function canConnect(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });
}
