import { readFileSync } from "node:fs";
import type { BackendEvent } from "@bridgeworks/protocol";
import type { CliExit, StreamTranslator, TurnOutcome } from "../src/index.js";

const fixtureDir = new URL("./fixtures/", import.meta.url);

/** The stdout lines of a recorded run of the real CLI (see fixtures/README.md). */
export function fixtureLines(backend: "claude" | "codex", name: string): string[] {
  return readFileSync(new URL(`${backend}/${name}.jsonl`, fixtureDir), "utf8")
    .split("\n")
    .filter((line) => line !== "");
}

export function fixtureStderr(backend: "claude" | "codex", name: string): string {
  return readFileSync(new URL(`${backend}/${name}.stderr.txt`, fixtureDir), "utf8");
}

export interface Replay {
  events: BackendEvent[];
  aborts: Array<{ code: string; message: string }>;
  outcome: TurnOutcome;
}

export function replay(
  translator: StreamTranslator,
  lines: readonly string[],
  exit: Partial<CliExit> = {},
  stopRequested = false,
): Replay {
  const events: BackendEvent[] = [];
  const aborts: Replay["aborts"] = [];
  for (const line of lines) {
    const translated = translator.translate(line);
    events.push(...translated.events);
    if (translated.abort) aborts.push(translated.abort);
  }
  const outcome = translator.classify({ code: 0, signal: null, stderrTail: "", ...exit }, { stopRequested });
  return { events, aborts, outcome };
}

export function eventTypes(events: readonly BackendEvent[]): string[] {
  return events.map((event) => event.type);
}
