import { describe, expect, test } from "vitest";
import {
  CreateSessionRequest,
  FlootApiError,
  FlootDaemonFile,
  FlootLoginCode,
  FlootMoment,
  FlootOverview,
  FlootSession,
  SendTurnRequest,
  SubmitSecretRequest,
  SubmitSecretResponse,
} from "../src/index.js";
import { failedPaths } from "./issues.js";

const token = "a".repeat(64);

describe("FlootDaemonFile", () => {
  const socket = "/run/user/1000/floot/0123456789abcdef/api.sock";

  test("accepts port, token, pid, generation and the API socket", () => {
    const file = { port: 43_117, token, pid: 4242, generation: 3, socket };
    expect(FlootDaemonFile.parse(file)).toEqual(file);
  });

  test("refuses a short token, a zero generation, a relative or missing socket and an unknown field", () => {
    const valid = { port: 1, token, pid: 1, generation: 1, socket };
    expect(failedPaths(FlootDaemonFile, { ...valid, token: "abc" })).toEqual(["token"]);
    expect(failedPaths(FlootDaemonFile, { ...valid, generation: 0 })).toEqual(["generation"]);
    expect(failedPaths(FlootDaemonFile, { ...valid, socket: "api.sock" })).toEqual(["socket"]);
    expect(failedPaths(FlootDaemonFile, { port: 1, token, pid: 1, generation: 1 })).toEqual(["socket"]);
    expect(failedPaths(FlootDaemonFile, { ...valid, extra: 1 })).toEqual([""]);
  });
});

describe("CreateSessionRequest", () => {
  test("accepts a backend with the user's own configuration and additions", () => {
    const body = {
      backend: "codex",
      workspace: "/home/me/project",
      model: "gpt-5.1-codex",
      env: { GIT_AUTHOR_NAME: "me" },
      codexConfig: ['sandbox_mode="workspace-write"'],
    };
    expect(CreateSessionRequest.parse(body)).toEqual(body);
    expect(CreateSessionRequest.parse({ backend: "claude" })).toEqual({ backend: "claude" });
  });

  test("names the offending field", () => {
    expect(failedPaths(CreateSessionRequest, { backend: "pi" })).toEqual(["backend"]);
    expect(failedPaths(CreateSessionRequest, { backend: "claude", workspace: "relative/dir" })).toEqual([
      "workspace",
    ]);
    expect(failedPaths(CreateSessionRequest, { backend: "claude", env: { "1BAD": "x" } })).toEqual([
      "env.1BAD",
    ]);
    expect(failedPaths(CreateSessionRequest, { backend: "codex", codexConfig: ["no-equals"] })).toEqual([
      "codexConfig.0",
    ]);
  });

  test("a Codex session refuses Claude Code's permission options: its policy is explicit at creation", () => {
    expect(
      failedPaths(CreateSessionRequest, { backend: "codex", allowedTools: ["Bash"], permissionTimeoutMs: 5 }),
    ).toEqual(["allowedTools", "permissionTimeoutMs"]);
    const claude = { backend: "claude", allowedTools: ["Bash(npm test:*)"], permissionTimeoutMs: 60_000 };
    expect(CreateSessionRequest.parse(claude)).toEqual(claude);
  });
});

describe("FlootSession", () => {
  test("shows env names, never values", () => {
    const session = {
      id: "0190c0de-0000-7000-8000-000000000001",
      backend: "claude",
      status: "idle",
      queuedTurns: 0,
      createdAt: "2026-11-30T12:00:00.000Z",
      workspace: "/tmp/ws",
      envNames: ["FOO"],
      effectFreeTools: ["Read"],
      sandbox: { enabled: true },
    };
    expect(FlootSession.parse(session)).toEqual(session);
    expect(failedPaths(FlootSession, { ...session, env: { FOO: "bar" } })).toEqual([""]);
  });
});

describe("turn and secret bodies", () => {
  test("a turn needs a non-empty prompt", () => {
    expect(SendTurnRequest.parse({ prompt: "hi" })).toEqual({ prompt: "hi" });
    expect(failedPaths(SendTurnRequest, { prompt: "" })).toEqual(["prompt"]);
  });

  test("a secret submission carries only its value", () => {
    expect(SubmitSecretRequest.parse({ value: "s3cret" })).toEqual({ value: "s3cret" });
    expect(failedPaths(SubmitSecretRequest, { value: "" })).toEqual(["value"]);
    expect(failedPaths(SubmitSecretRequest, { value: "x", name: "y" })).toEqual([""]);
  });

  test("the submission's answer carries metadata, never the value", () => {
    const request = {
      id: "0190c0de-0000-7000-8000-00000000000a",
      turnId: "0190c0de-0000-7000-8000-00000000000b",
      sessionId: "0190c0de-0000-7000-8000-00000000000c",
      toolCallKey: "toolu_1",
      name: "GITHUB_TOKEN",
      prompt: "token please",
      status: "submitted",
      bridgeGeneration: 2,
      createdAt: "2026-11-30T12:00:00.000Z",
      updatedAt: "2026-11-30T12:00:01.000Z",
      resolvedAt: "2026-11-30T12:00:01.000Z",
    };
    expect(SubmitSecretResponse.parse({ request, deliveredTo: "call" }).deliveredTo).toBe("call");
    expect(failedPaths(SubmitSecretResponse, { request, deliveredTo: "call", value: "x" })).toEqual([""]);
  });

  test("an API error names its code and, when known, the field", () => {
    const body = { error: { code: "invalid_body", message: "prompt: must not be empty", field: "prompt" } };
    expect(FlootApiError.parse(body)).toEqual(body);
  });
});

describe("web UI shapes", () => {
  test("a login code is 32 base64url bytes with an expiry", () => {
    const code = { code: "A".repeat(43), expiresAt: "2026-11-30T12:01:00.000Z" };
    expect(FlootLoginCode.parse(code)).toEqual(code);
    expect(failedPaths(FlootLoginCode, { ...code, code: "short" })).toEqual(["code"]);
    expect(failedPaths(FlootLoginCode, { ...code, token: "x" })).toEqual([""]);
  });

  test("the overview lists sessions with their current turn and the open secret and permission requests", () => {
    const session = {
      id: "0190c0de-0000-7000-8000-000000000001",
      backend: "claude",
      status: "idle",
      queuedTurns: 0,
      createdAt: "2026-11-30T12:00:00.000Z",
      workspace: "/tmp/ws",
      envNames: [],
      effectFreeTools: [],
      sandbox: { enabled: false },
    };
    const status = {
      pid: 42,
      generation: 2,
      stateDir: "/tmp/state",
      startedAt: "2026-11-30T12:00:00.000Z",
      atStart: { keptRunning: 1, replayed: 0, continued: 0, waitingOnYou: 0, interrupted: 0 },
    };
    const overview = { status, sessions: [{ session }], secretRequests: [], permissionRequests: [] };
    expect(FlootOverview.parse(overview)).toEqual(overview);
    expect(
      failedPaths(FlootOverview, { ...overview, status: { ...status, atStart: { keptRunning: -1 } } }),
    ).toEqual([
      "status.atStart.keptRunning",
      "status.atStart.replayed",
      "status.atStart.continued",
      "status.atStart.waitingOnYou",
      "status.atStart.interrupted",
    ]);
    // What waits on a human is part of the page: a list without its permission requests is refused.
    expect(failedPaths(FlootOverview, { status, sessions: [{ session }], secretRequests: [] })).toEqual([
      "permissionRequests",
    ]);
    expect(failedPaths(FlootOverview, { ...overview, sessions: [{ session, currentTurn: {} }] })[0]).toMatch(
      /^sessions\.0\.currentTurn\./,
    );
  });
});

describe("effect-free tools", () => {
  test("a session may declare its own list; a name that is no tool name is refused by field", () => {
    expect(
      CreateSessionRequest.parse({ backend: "claude", effectFreeTools: ["Read", "mcp__floot__look"] }),
    ).toMatchObject({ effectFreeTools: ["Read", "mcp__floot__look"] });
    expect(failedPaths(CreateSessionRequest, { backend: "claude", effectFreeTools: ["rm -rf"] })).toEqual([
      "effectFreeTools.0",
    ]);
  });
});

describe("moments", () => {
  test("an approval, a secret or a turn's end, with its ids, a summary and the UI's link; nothing else", () => {
    const approval = {
      kind: "approval",
      session: "s-1",
      turn: "t-1",
      request: "r-1",
      summary: "Approve Bash: touch a",
      url: "http://127.0.0.1:4000/#/s/s-1",
      at: "2026-12-01T10:00:00.000Z",
    };
    expect(FlootMoment.parse(approval)).toEqual(approval);
    const ended = { ...approval, kind: "turn_ended", request: undefined, outcome: "completed" };
    expect(FlootMoment.parse(ended)).toMatchObject({ kind: "turn_ended", outcome: "completed" });
    expect(failedPaths(FlootMoment, { ...approval, kind: "question" })).toEqual(["kind"]);
    expect(failedPaths(FlootMoment, { ...ended, outcome: "running" })).toEqual(["outcome"]);
    expect(failedPaths(FlootMoment, { ...approval, value: "x" })).toEqual([""]);
  });
});
