import { PermissionRule, type TurnError, type TurnEvent } from "@bridgeworks/protocol";
import { ruleMarker, type SecretMask } from "./secret-mask.js";

/**
 * What masking does to one field of an event:
 * - `structural`: kept as is: the event's type, ids, indexes, names, phases, statuses, codes, flags and
 *   numbers (masking one would corrupt the event, or change what it refers to);
 * - `content`: what an agent, a tool or a person wrote: every string in it masked (a JSON value's
 *   strings and keys too);
 * - `cut`: content its source may have cut short with `…` (the gate's preview, a permission's summary):
 *   masked, and a value the cut split is masked too;
 * - `rule`: a permission rule (or a list of them): its specifier masked, and still a valid rule;
 * - an object: a nested record (a turn error), field by field.
 */
export type FieldKind = "structural" | "content" | "cut" | "rule" | FieldKinds;
export interface FieldKinds {
  readonly [field: string]: FieldKind;
}

type KindsOf<Event> = { readonly [Field in Exclude<keyof Event, "type">]-?: FieldKind };

/**
 * Every field of every event type, structural or content: the one place masking reads it from. A type
 * error when protocol's `TurnEvent` gains a type or a field (and `test/secret-mask.test.ts` walks the
 * schema itself). The journal's drafts (tool admission, secret and permission requests, decisions,
 * turn errors) are masked by the fields of the events they become.
 */
export const eventFieldKinds: { readonly [Event in TurnEvent as Event["type"]]: KindsOf<Event> } = {
  "backend.started": { conversationId: "structural" },
  "assistant.delta": { text: "content" },
  "assistant.text": { text: "content" },
  reasoning: { text: "content" },
  "tool.started": { toolId: "structural", name: "structural", input: "content", effectFree: "structural" },
  "tool.completed": { toolId: "structural", output: "content", isError: "structural" },
  usage: {
    input: "structural",
    output: "structural",
    cacheRead: "structural",
    cacheWrite: "structural",
    costUsd: "structural",
    contextUsed: "structural",
    contextWindow: "structural",
  },
  warning: { code: "structural", message: "content" },
  error: { code: "structural", message: "content" },
  // The name is the key the value is held and delivered under, and the marker's own text.
  "secret.requested": {
    requestId: "structural",
    toolCallKey: "structural",
    name: "structural",
    prompt: "content",
  },
  // Who answered: a process or a page, never content.
  "secret.resolved": { requestId: "structural", status: "structural", by: "structural" },
  "permission.requested": {
    requestId: "structural",
    toolName: "structural",
    inputSummary: "cut",
    unmatchedRules: "rule",
    suggestedRule: "rule",
  },
  "permission.resolved": {
    requestId: "structural",
    status: "structural",
    rule: "rule",
    message: "content",
    by: "structural",
  },
  "tool.admitted": {
    toolId: "structural",
    name: "structural",
    inputPreview: "cut",
    effectFree: "structural",
  },
  phase: { phase: "structural" },
  terminal: {
    outcome: "structural",
    error: { code: "structural", message: "content" },
    continuedBy: "structural",
  },
};

/** `event` with its content fields masked; its structural fields, `type` first, as they were. */
export function maskEvent<Event extends TurnEvent>(mask: SecretMask, event: Event): Event {
  if (mask.empty) return event;
  return maskRecord(mask, event, eventFieldKinds[event.type as Event["type"]] as FieldKinds) as Event;
}

/** One field of an event type, as `maskEvent` masks it. */
export function maskEventField<Type extends TurnEvent["type"], Value>(
  mask: SecretMask,
  type: Type,
  field: keyof (typeof eventFieldKinds)[Type],
  value: Value,
): Value {
  if (mask.empty) return value;
  return maskValue(mask, value, eventFieldKinds[type][field] as FieldKind) as Value;
}

/** A turn error (a failed turn's, a replay's reason), as a `terminal` event carries it. */
export function maskTurnError<Error extends TurnError | undefined>(mask: SecretMask, error: Error): Error {
  return error === undefined ? error : maskEventField(mask, "terminal", "error", error);
}

function maskRecord(mask: SecretMask, record: object, kinds: FieldKinds): object {
  // A field no kind names (none should exist: the test walks the schema) is masked as content.
  return Object.fromEntries(
    Object.entries(record).map(([field, value]) => [
      field,
      field === "type" ? value : maskValue(mask, value, kinds[field] ?? "content"),
    ]),
  );
}

function maskValue(mask: SecretMask, value: unknown, kind: FieldKind): unknown {
  if (value === undefined || kind === "structural") return value;
  if (kind === "content") return mask.maskJson(value);
  if (kind === "cut") return typeof value === "string" ? mask.maskCutText(value) : mask.maskJson(value);
  if (kind === "rule") {
    if (Array.isArray(value)) return value.map((each) => maskValue(mask, each, "rule"));
    return typeof value === "string" ? maskRule(mask, value) : mask.maskJson(value);
  }
  return value !== null && typeof value === "object" ? maskRecord(mask, value, kind) : mask.maskJson(value);
}

/**
 * A rule's specifier masked with `ruleMarker`, the tool name kept: `Bash(API_TOKEN=***SECRET[API_TOKEN]***
 * ./deploy:*)`. Claude Code reads each `*` of a rule as a wildcard (2.1.332: "Use * for wildcards"), so
 * such a rule matches only a command that holds `SECRET[API_TOKEN]` itself: allowing it never allows more
 * than was asked. When the masked rule is no longer valid (too long), only the marker stays:
 * `Bash(***SECRET[API_TOKEN]***)`.
 */
function maskRule(mask: SecretMask, rule: string): string {
  const match = /^([^()]*)\((.*)\)$/s.exec(rule);
  if (!match) return rule;
  const [, tool, specifier] = match as unknown as [string, string, string];
  const masked = mask.maskText(specifier, ruleMarker);
  if (masked === specifier) return rule;
  const maskedRule = `${tool}(${masked})`;
  if (PermissionRule.safeParse(maskedRule).success) return maskedRule;
  return `${tool}(${/\*\*\*SECRET\[[^\]]*\]\*\*\*/.exec(masked)![0]})`;
}
