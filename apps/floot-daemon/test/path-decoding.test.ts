import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createLogger } from "@bridgeworks/runtime";
import { afterAll, beforeAll, expect, test } from "vitest";
import { type RunningDaemon, startDaemon } from "../src/daemon/daemon.js";

// A malformed percent-escape in a path is the caller's mistake: 400 naming the path, no error log.

let root: string;
let daemon: RunningDaemon;
let token: string;
const logLines: string[] = [];

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "floot-path-"));
  const stateDir = join(root, "state");
  daemon = await startDaemon({
    stateDir,
    env: { FLOOT_RUNTIME_DIR: join(root, "run"), PATH: process.env.PATH },
    logger: createLogger({ component: "floot-daemon", write: (line) => logLines.push(line) }),
  });
  token = (JSON.parse(readFileSync(join(stateDir, "daemon.json"), "utf8")) as { token: string }).token;
});

afterAll(async () => {
  await daemon.stop();
  rmSync(root, { recursive: true, force: true });
});

test.each([
  "/v1/sessions/%E0%A4%A",
  "/v1/sessions/%zz/turns",
  "/v1/turns/%E0%A4%A/events",
  "/v1/secret-requests/%C3%28%/submit",
])("%s is a 400 naming the path, and nothing is logged as an error", async (path) => {
  const method = path.endsWith("/submit") ? "POST" : "GET";
  const response = await fetch(`http://127.0.0.1:${daemon.port}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(method === "POST" && { "content-type": "application/json" }),
    },
    ...(method === "POST" && { body: '{"value":"x"}' }),
  });
  const body = (await response.json()) as { error: { code: string; message: string } };
  expect(response.status).toBe(400);
  expect(body.error).toEqual({
    code: "bad_request",
    message: `the path ${JSON.stringify(path)} has a malformed percent-escape`,
  });
  expect(logLines.filter((line) => JSON.parse(line).level === "error")).toEqual([]);
});
