import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { LogRecord } from "@bridgeworks/protocol";
import { describe, expect, test } from "vitest";
import { createLogger, streamSink } from "../src/index.js";

function capture(level?: "debug" | "info" | "warn" | "error") {
  const lines: string[] = [];
  const logger = createLogger({
    component: "test",
    ...(level && { level }),
    write: (line) => lines.push(line),
    now: () => Date.UTC(2025, 0, 2, 3, 4, 5),
  });
  return { logger, lines, records: () => lines.map((line) => LogRecord.parse(JSON.parse(line))) };
}

describe("createLogger", () => {
  test("writes one JSON line per call in the LogRecord schema, the fields after the four", () => {
    const { logger, lines, records } = capture();
    logger.info("turn spawned", { turn: "t1", pid: 42 });
    expect(lines).toEqual([
      '{"time":"2025-01-02T03:04:05.000Z","level":"info","component":"test","message":"turn spawned","turn":"t1","pid":42}\n',
    ]);
    expect(records()[0]).toMatchObject({ component: "test", turn: "t1" });
  });

  test("drops lines below its level (default info)", () => {
    const quiet = capture();
    quiet.logger.debug("hidden");
    quiet.logger.warn("shown");
    expect(quiet.records().map((record) => record.level)).toEqual(["warn"]);
    const chatty = capture("debug");
    chatty.logger.debug("shown");
    expect(chatty.records().map((record) => record.message)).toEqual(["shown"]);
    const errorsOnly = capture("error");
    errorsOnly.logger.warn("hidden");
    errorsOnly.logger.error("shown");
    expect(errorsOnly.records().map((record) => record.level)).toEqual(["error"]);
  });

  test("a field never replaces time, level, component or message", () => {
    const { logger, records } = capture();
    logger.error("real", { message: "forged", level: "debug", time: "then", component: "other", extra: 1 });
    expect(records()[0]).toEqual({
      time: "2025-01-02T03:04:05.000Z",
      level: "error",
      component: "test",
      message: "real",
      extra: 1,
    });
  });
});

describe("streamSink", () => {
  test("writes to the stream and appends to the file (0600) when one is named", () => {
    const dir = mkdtempSync(join(tmpdir(), "runtime-log-"));
    try {
      const stream = new PassThrough();
      const chunks: string[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk.toString()));
      const file = join(dir, "bee.log");
      const sink = streamSink(stream, file);
      sink("a\n");
      sink("b\n");
      expect(chunks.join("")).toBe("a\nb\n");
      expect(readFileSync(file, "utf8")).toBe("a\nb\n");
      expect(statSync(file).mode & 0o777).toBe(0o600);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
