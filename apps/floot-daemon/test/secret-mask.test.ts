import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type BackendEvent,
  type DecisionActor,
  PermissionRule,
  permissionInputShownBytes,
  permissionRuleMaxChars,
  secretValueMinLength,
  TurnEvent,
  toolGateInputPreviewChars,
} from "@bridgeworks/protocol";
import { openJournal, type TurnJournal } from "@bridgeworks/turn-journal";
import { afterEach, describe, expect, test } from "vitest";
import { journalMasking } from "../src/daemon/journal-masking.js";
import { eventFieldKinds, type FieldKind, type FieldKinds, maskEvent } from "../src/daemon/masked-fields.js";
import { SecretBroker, SecretBrokerError } from "../src/daemon/secret-broker.js";
import { cutPartialMinLength, maskMarker, SecretMask } from "../src/daemon/secret-mask.js";
import { SecretVault } from "../src/daemon/secret-vault.js";

/** A person at the CLI, as the daemon identifies one. */
const person: DecisionActor = { via: "socket", peer: { pid: 4242, uid: 1000, executable: "/usr/bin/node" } };

// A value with every character an encoding treats apart: a quote and a backslash (JSON), non-ASCII
// (Python's ASCII-only JSON), a space (form encoding), `/`, `+` and `=` (base64 and URL encoding).
const secret = 'hunter2 "s3cr3t"\\/+=?&é';
const marker = maskMarker("API_TOKEN");
const json = (text: string) => JSON.stringify(text).slice(1, -1);
const bytes = Buffer.from(secret);
const forms: Record<string, string> = {
  "as is": secret,
  "in JSON text": json(secret),
  "in JSON text twice": json(json(secret)),
  "in JSON text three times": json(json(json(secret))),
  "in ASCII-only JSON text (Python)": json(secret).replace("é", "\\u00e9"),
  "in ASCII-only JSON text, in JSON text": json(json(secret).replace("é", "\\u00e9")),
  base64: bytes.toString("base64"),
  "base64 unpadded": bytes.toString("base64").replace(/=+$/, ""),
  base64url: bytes.toString("base64url"),
  "URL-encoded": encodeURIComponent(secret),
  "form-encoded": new URLSearchParams({ v: secret }).toString().slice(2),
};

let dir: string | undefined;
let opened: TurnJournal | undefined;
afterEach(() => {
  opened?.maintenance.close();
  opened = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function registered(value = secret): SecretMask {
  const mask = new SecretMask();
  mask.register("API_TOKEN", value);
  return mask;
}

function runningTurn(mask = registered()): { journal: TurnJournal; turnId: string } {
  dir = mkdtempSync(join(tmpdir(), "floot-mask-"));
  opened = openJournal({ path: join(dir, "journal.db"), transform: journalMasking(mask) });
  const journal = opened;
  const session = journal.sessions.createSession({ backend: "claude" });
  const turn = journal.turns.submitTurn(session.id, { prompt: "deploy" });
  journal.turns.transition(turn.id, { phase: "spawning" });
  journal.turns.transition(turn.id, { phase: "running", process: { pid: 4242, startTime: "1" } });
  return { journal, turnId: turn.id };
}

function stateDirBytes(): string {
  opened?.events.flush();
  return readdirSync(dir!)
    .map((name) => readFileSync(join(dir!, name)).toString("latin1"))
    .join("\n");
}

/** The latin1 view of a form as the journal's files hold UTF-8 text. */
const onDisk = (text: string) => Buffer.from(text).toString("latin1");

describe("secret masking: encodings", () => {
  test.each(Object.entries(forms))("a value %s becomes the marker naming the secret", (_, form) => {
    expect(registered().maskText(`before ${form} after`)).toBe(`before ${marker} after`);
  });

  test("strings inside JSON are masked, object keys too; numbers and the shape are kept", () => {
    expect(registered().maskJson({ output: [{ text: `x${secret}y`, [secret]: 1 }], n: 1 })).toEqual({
      output: [{ text: `x${marker}y`, [marker]: 1 }],
      n: 1,
    });
  });

  test(`a value shorter than ${secretValueMinLength} characters is not taken; masking is one pass and idempotent`, () => {
    expect(() => registered("a".repeat(secretValueMinLength - 1))).toThrow(RangeError);
    // A value inside a marker's own text: markers already there stay whole, so masking again is a no-op.
    const mask = registered("*SECRET(");
    mask.register("DOTS", "a.*b+c?d");
    const once = mask.maskText("*SECRET( and a.*b+c?d, not aXbbcd");
    expect(once).toBe(`${marker} and ***SECRET(DOTS)***, not aXbbcd`);
    expect(mask.maskText(once)).toBe(once);
  });

  test("a text cut short with … where the cut split a form: the part before the … is masked too", () => {
    const mask = registered();
    for (const form of Object.values(forms)) {
      for (let keep = cutPartialMinLength; keep < form.length; keep++) {
        const cut = `{"command":"echo ${form.slice(0, keep)}…`;
        expect(mask.maskCutText(cut), `${form} cut after ${keep}`).toBe(`{"command":"echo ${marker}…`);
      }
      // Fewer characters are what any text may end with ("ls -la…" and a base64 form "aHVu…").
      const few = `{"command":"echo ${form.slice(0, cutPartialMinLength - 1)}…`;
      expect(mask.maskCutText(few)).toBe(few);
      expect(mask.maskCutText(`x ${form} y…`)).toBe(`x ${marker} y…`);
    }
    // Without a cut, nothing else changes.
    expect(mask.maskCutText(`${secret.slice(0, 4)} done`)).toBe(`${secret.slice(0, 4)} done`);
  });
});

describe("secret masking: structural fields", () => {
  const fieldsOf = (schema: unknown): Record<string, unknown> | undefined => {
    const def = (schema as { _zod: { def: { type: string; innerType?: unknown } } })._zod.def;
    if (def.type === "optional") return fieldsOf(def.innerType);
    return def.type === "object" ? (schema as { shape: Record<string, unknown> }).shape : undefined;
  };

  test("every field of every event type of protocol's schema has a kind, and no kind names a field that is not there", () => {
    const types = TurnEvent.options.map((option) => option.shape.type.value as string);
    expect(Object.keys(eventFieldKinds).sort()).toEqual([...types].sort());
    const check = (where: string, shape: Record<string, unknown>, kinds: FieldKinds) => {
      const fields = Object.keys(shape).filter((field) => field !== "type");
      expect(Object.keys(kinds).sort(), where).toEqual(fields.sort());
      for (const [field, kind] of Object.entries(kinds)) {
        if (typeof kind !== "object") continue;
        const nested = fieldsOf(shape[field]);
        expect(nested, `${where}.${field} is a record`).toBeDefined();
        check(`${where}.${field}`, nested!, kind);
      }
    };
    for (const option of TurnEvent.options) {
      const type = option.shape.type.value as keyof typeof eventFieldKinds;
      check(type, option.shape, eventFieldKinds[type] as FieldKinds);
    }
  });

  test("each event type keeps its type and structural fields when they equal the secret; its content is masked", () => {
    // A value that is a type name and an id at once: masking structure would corrupt every such event.
    const value = "tool.admitted";
    const mask = registered(value);
    const sample = (kinds: FieldKinds): Record<string, unknown> =>
      Object.fromEntries(Object.entries(kinds).map(([field, kind]) => [field, holding(kind)]));
    const holding = (kind: FieldKind): unknown =>
      typeof kind === "object" ? sample(kind) : kind === "structural" ? value : `Bash(x ${value} y)`;
    const expected = (kinds: FieldKinds): Record<string, unknown> =>
      Object.fromEntries(
        Object.entries(kinds).map(([field, kind]) => [
          field,
          typeof kind === "object"
            ? expected(kind)
            : kind === "structural"
              ? value
              : kind === "rule"
                ? "Bash(x ***SECRET[API_TOKEN]*** y)"
                : `Bash(x ${marker} y)`,
        ]),
      );
    for (const [type, kinds] of Object.entries(eventFieldKinds)) {
      const event = { type, ...sample(kinds as FieldKinds) } as unknown as TurnEvent;
      expect(maskEvent(mask, event), type).toEqual({ type, ...expected(kinds as FieldKinds) });
    }
  });

  test("a value equal to a type name, a tool id and a tool name: the events journal unchanged in structure", () => {
    const mask = registered("tool.admitted");
    mask.register("ID", "toolu_01abcdef");
    mask.register("TOOL", "mcp__floot__requestSecret");
    const { journal: masked, turnId: id } = runningTurn(mask);
    const events: BackendEvent[] = [
      { type: "tool.started", toolId: "toolu_01abcdef", name: "mcp__floot__requestSecret", input: {} },
      {
        type: "tool.completed",
        toolId: "toolu_01abcdef",
        output: "tool.admitted toolu_01abcdef",
        isError: false,
      },
    ];
    masked.events.appendEvents(id, events);
    masked.gate.admitToolCall(id, {
      toolCallId: "toolu_01abcdef",
      toolName: "mcp__floot__requestSecret",
      inputPreview: '{"note":"tool.admitted"}',
      effectFree: false,
    });
    masked.turns.transition(id, { phase: "completed" });
    const read = masked.events
      .readEvents(id, 0)
      .map(({ event }) => event)
      .filter((event) => event.type !== "phase");
    expect(read.map((event) => event.type)).toEqual([
      "tool.started",
      "tool.completed",
      "tool.admitted",
      "terminal",
    ]);
    expect(read[1]).toEqual({
      type: "tool.completed",
      toolId: "toolu_01abcdef",
      output: "***SECRET(API_TOKEN)*** ***SECRET(ID)***",
      isError: false,
    });
    expect(read[0]).toEqual(events[0]);
    expect(read[2]).toMatchObject({ toolId: "toolu_01abcdef", name: "mcp__floot__requestSecret" });
    expect(masked.turns.getTurn(id)?.phase).toBe("completed");
  });
});

describe("secret masking: the journal", () => {
  test("tool output, admissions, secret prompts, permission requests and decisions, and errors are masked before they are journaled", () => {
    const { journal, turnId } = runningTurn();
    const printed = Object.values(forms)
      .map((form) => `line ${form}`)
      .join("\n");
    const input = { command: `curl -H "Authorization: ${json(secret)}" -d '{"t":"${json(secret)}"}'` };
    journal.events.appendEvents(turnId, [
      { type: "tool.started", toolId: "t1", name: "Bash", input },
      { type: "tool.completed", toolId: "t1", output: printed, isError: false },
      { type: "assistant.text", text: `The token is ${secret}.` },
      { type: "warning", code: "w", message: `saw ${json(secret)}` },
    ]);
    journal.gate.admitToolCall(turnId, {
      toolCallId: "t2",
      toolName: "Bash",
      inputPreview: JSON.stringify(input),
      effectFree: false,
    });
    const permission = journal.permissions.requestPermission(turnId, {
      toolCallKey: "t2",
      toolName: "Bash",
      inputSummary: JSON.stringify(input),
      inputDigest: "0".repeat(64),
      unmatchedRules: [`Bash(echo ${forms["URL-encoded"]}:*)`],
      suggestedRule: `Bash(API_TOKEN=${forms.base64}:*)`,
    });
    journal.permissions.decidePermissionRequest(
      permission.id,
      { behavior: "deny", message: `not with ${secret}` },
      person,
    );
    journal.secrets.requestSecret(turnId, { toolCallKey: "t3", name: "OTHER", prompt: `unlike ${secret}` });
    journal.turns.transition(turnId, {
      phase: "failed",
      error: { code: "cli_crashed", message: `died printing ${json(json(secret))}` },
    });
    const events = JSON.stringify(journal.events.readEvents(turnId, 0));
    const rows = JSON.stringify([
      journal.turns.getTurn(turnId),
      journal.permissions.getPermissionRequest(permission.id),
    ]);
    const disk = stateDirBytes();
    for (const [name, form] of Object.entries(forms)) {
      for (const text of [events, rows]) expect(text, name).not.toContain(json(form));
      expect(disk, name).not.toContain(onDisk(form));
      expect(disk, name).not.toContain(onDisk(json(form)));
    }
    expect(journal.permissions.getPermissionRequest(permission.id)).toMatchObject({
      inputSummary: `{"command":"curl -H \\"Authorization: ${marker}\\" -d '{\\"t\\":\\"${marker}\\"}'"}`,
      unmatchedRules: ["Bash(echo ***SECRET[API_TOKEN]***:*)"],
      suggestedRule: "Bash(API_TOKEN=***SECRET[API_TOKEN]***:*)",
      decision: { behavior: "deny", message: `not with ${marker}` },
    });
    expect(journal.turns.getTurn(turnId)?.error).toEqual({
      code: "cli_crashed",
      message: `died printing ${marker}`,
    });
  });

  test("a bounded text a marker made longer is cut to its bound; a rule that would be too long keeps only the marker", () => {
    const mask = new SecretMask();
    const name = "THE_DEPLOY_KEY_OF_THE_STAGING_CLUSTER";
    mask.register(name, secret);
    const { journal, turnId } = runningTurn(mask);
    const many = `${secret} `.repeat(Math.ceil(toolGateInputPreviewChars / (secret.length + 1)));
    const preview = `${many.slice(0, toolGateInputPreviewChars - 1)}…`;
    journal.gate.admitToolCall(turnId, {
      toolCallId: "t1",
      toolName: "Bash",
      inputPreview: preview,
      effectFree: false,
    });
    // Valid as asked, too long once each value is a marker (longer than the value).
    const values = `${secret.replace(/[(),]/g, "")} `.repeat(permissionRuleMaxChars);
    const rule = `Bash(${values.slice(0, permissionRuleMaxChars - "Bash()".length).trimEnd()})`;
    expect(PermissionRule.safeParse(rule).success).toBe(true);
    const request = journal.permissions.requestPermission(turnId, {
      toolCallKey: "t1",
      toolName: "Bash",
      inputSummary: preview,
      inputDigest: "0".repeat(64),
      unmatchedRules: [],
      suggestedRule: rule,
    });
    const admitted = journal.events.readEvents(turnId, 0).find(({ event }) => event.type === "tool.admitted");
    const text = admitted?.event.type === "tool.admitted" ? admitted.event.inputPreview : "";
    expect(text).toHaveLength(toolGateInputPreviewChars);
    expect(text.startsWith(`${maskMarker(name)} ${maskMarker(name)} `)).toBe(true);
    expect(text.endsWith("…")).toBe(true);
    // A request keeps the whole call (up to its own, far larger bound): masked, not cut.
    expect(request.inputSummary.length).toBeGreaterThan(toolGateInputPreviewChars);
    expect(request.inputSummary.length).toBeLessThanOrEqual(permissionInputShownBytes);
    expect(request.inputSummary).not.toContain(secret.slice(0, 12));
    expect(request.inputSummary.startsWith(`${maskMarker(name)} ${maskMarker(name)} `)).toBe(true);
    expect(request.suggestedRule).toBe(`Bash(***SECRET[${name}]***)`);
    expect(stateDirBytes()).not.toContain(secret.slice(0, 12));
  });

  test("a value split across streamed deltas, in any form and at every cut, is masked whole and the text is kept", () => {
    const shown = [forms["in JSON text"], forms["in JSON text twice"], forms.base64];
    const text = `Here: ${secret}. Escaped: ${shown[0]} ${shown[1]}. Encoded: ${shown[2]} done`;
    const expected = `Here: ${marker}. Escaped: ${marker} ${marker}. Encoded: ${marker} done`;
    for (let first = 1; first < text.length - 1; first += 3) {
      for (const second of [first + 1, Math.min(text.length - 1, first + 7)]) {
        const { journal, turnId } = runningTurn();
        const pieces = [text.slice(0, first), text.slice(first, second), text.slice(second)];
        journal.events.appendEvents(
          turnId,
          pieces.map((piece): BackendEvent => ({ type: "assistant.delta", text: piece })),
        );
        journal.turns.transition(turnId, { phase: "completed" });
        const deltas = journal.events
          .readEvents(turnId, 0)
          .flatMap(({ event }) => (event.type === "assistant.delta" ? [event.text] : []));
        expect(deltas.join(""), `cut at ${first}/${second}`).toBe(expected);
        for (const delta of deltas)
          for (const form of Object.values(forms)) expect(delta).not.toContain(form);
        opened!.maintenance.close();
        opened = undefined;
        rmSync(dir!, { recursive: true, force: true });
        dir = undefined;
      }
    }
  });

  test(`the broker refuses a value shorter than ${secretValueMinLength} characters with the reason; the request stays pending`, async () => {
    const mask = new SecretMask();
    const { journal, turnId } = runningTurn(mask);
    const vault = new SecretVault(join(dir!, "run", "secrets"), () => "c1");
    await vault.open();
    const broker = new SecretBroker(journal, vault, () => undefined, mask);
    const asked = journal.secrets.requestSecret(turnId, {
      toolCallKey: "k",
      name: "API_TOKEN",
      prompt: "token",
    });
    const refusal = (() => {
      try {
        broker.submit(asked.id, "ta", person);
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(SecretBrokerError);
    expect(refusal).toMatchObject({ code: "secret_too_short" });
    expect((refusal as Error).message).toContain(`at least ${secretValueMinLength} characters`);
    expect(journal.secrets.getSecretRequest(asked.id)?.status).toBe("pending");
    expect(mask.empty).toBe(true);
    expect(broker.submit(asked.id, "long-enough", person).request.status).toBe("submitted");
    vault.close();
  });
});
