import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BackendEvent } from "@bridgeworks/protocol";
import { openJournal, type TurnJournal } from "@bridgeworks/turn-journal";
import { afterEach, describe, expect, test } from "vitest";
import { maskingJournal } from "../src/daemon/masking-journal.js";
import { maskMarker, SecretMask } from "../src/daemon/secret-mask.js";

const secret = "hunter2-s3cr3t/+=?&value";
const marker = maskMarker("API_TOKEN");
const forms = [
  secret,
  Buffer.from(secret).toString("base64"),
  Buffer.from(secret).toString("base64url"),
  encodeURIComponent(secret),
];

let dir: string | undefined;
let raw: TurnJournal | undefined;
afterEach(() => {
  raw?.close();
  raw = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function runningTurn(): { journal: TurnJournal; turnId: string } {
  dir = mkdtempSync(join(tmpdir(), "floot-mask-"));
  raw = openJournal({ path: join(dir, "journal.db") });
  const mask = new SecretMask();
  mask.register("API_TOKEN", secret);
  const journal = maskingJournal(raw, mask);
  const session = journal.createSession({ backend: "claude" });
  const turn = journal.submitTurn(session.id, { prompt: "deploy" });
  journal.transition(turn.id, { phase: "spawning" });
  journal.transition(turn.id, { phase: "running", process: { pid: 4242, startTime: "1" } });
  return { journal, turnId: turn.id };
}

function stateDirBytes(): string {
  raw?.flush();
  return readdirSync(dir!)
    .map((name) => readFileSync(join(dir!, name)).toString("latin1"))
    .join("\n");
}

describe("secret masking", () => {
  test("each form of a registered value becomes the marker naming the secret", () => {
    const mask = new SecretMask();
    mask.register("API_TOKEN", secret);
    for (const form of forms) {
      expect(mask.maskText(`before ${form} after`)).toBe(`before ${marker} after`);
    }
    expect(mask.maskJson({ output: [{ text: `x${secret}y` }], n: 1 })).toEqual({
      output: [{ text: `x${marker}y` }],
      n: 1,
    });
  });

  test("a value of any length is masked, however short; a marker is never masked again", () => {
    const mask = new SecretMask();
    mask.register("PIN", "123");
    mask.register("C", "E");
    expect(mask.maskText("pin 123, 41234")).toBe("pin ***SECRET(PIN)***, 4***SECRET(PIN)***4");
    // "E" is in the marker's own text ("SECRET"): one pass, so the markers stay whole.
    expect(mask.maskText("E 123")).toBe("***SECRET(C)*** ***SECRET(PIN)***");
    // Its base64 forms ("MTIz", "RQ==", "RQ") too, and regex characters are taken literally.
    expect(mask.maskText("MTIz RQ== RQ")).toBe("***SECRET(PIN)*** ***SECRET(C)*** ***SECRET(C)***");
    mask.register("DOTS", "a.*");
    expect(mask.maskText("abc a.* a.*b")).toBe("abc ***SECRET(DOTS)*** ***SECRET(DOTS)***b");
    mask.register("NONE", "");
    expect(mask.maskText("x")).toBe("x");
  });

  test("tool output, admissions, secret prompts and errors are masked before they are journaled", () => {
    const { journal, turnId } = runningTurn();
    const printed = forms.map((form) => `line ${form}`).join("\n");
    journal.appendEvents(turnId, [
      { type: "tool.started", toolId: "t1", name: "Bash", input: { command: `echo ${secret}` } },
      { type: "tool.completed", toolId: "t1", output: printed, isError: false },
      { type: "assistant.text", text: `The token is ${secret}.` },
    ]);
    journal.admitToolCall(turnId, {
      toolCallId: "t2",
      toolName: "Bash",
      inputPreview: `curl -H ${secret}`,
      effectFree: false,
    });
    journal.transition(turnId, {
      phase: "failed",
      error: { code: "cli_crashed", message: `died printing ${secret}` },
    });
    const events = JSON.stringify(journal.readEvents(turnId, 0));
    const turn = JSON.stringify(journal.getTurn(turnId));
    for (const form of forms) {
      expect(events).not.toContain(form);
      expect(turn).not.toContain(form);
    }
    expect(events).toContain(marker);
    expect(turn).toContain(marker);
    const disk = stateDirBytes();
    for (const form of forms) expect(disk).not.toContain(form);
  });

  test("a value split across streamed deltas, at every cut, is masked whole and the text is kept", () => {
    const text = `Here: ${secret}. Encoded: ${forms[1]} done`;
    const expected = `Here: ${marker}. Encoded: ${marker} done`;
    for (let first = 1; first < text.length - 1; first += 3) {
      for (const second of [first + 1, Math.min(text.length - 1, first + 7)]) {
        const { journal, turnId } = runningTurn();
        const pieces = [text.slice(0, first), text.slice(first, second), text.slice(second)];
        journal.appendEvents(
          turnId,
          pieces.map((piece): BackendEvent => ({ type: "assistant.delta", text: piece })),
        );
        journal.transition(turnId, { phase: "completed" });
        const deltas = journal
          .readEvents(turnId, 0)
          .flatMap(({ event }) => (event.type === "assistant.delta" ? [event.text] : []));
        expect(deltas.join(""), `cut at ${first}/${second}`).toBe(expected);
        for (const delta of deltas) for (const form of forms) expect(delta).not.toContain(form);
        raw!.close();
        raw = undefined;
        rmSync(dir!, { recursive: true, force: true });
        dir = undefined;
      }
    }
  });
});
