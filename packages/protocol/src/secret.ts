import { z } from "zod";
import { DecisionActor } from "./confinement.js";
import { lazySchema } from "./lazy-schema.js";
import { JournalId } from "./turn.js";

// Every schema here is strict on purpose: secret-request metadata is journaled, the secret's bytes never
// are, so an object that carries a `value`, `secret` or any other unknown field is refused, not stripped.

const IsoTimestamp = lazySchema(() =>
  z.iso.datetime({ offset: true, error: "timestamp must be an ISO 8601 date-time" }),
);

/**
 * `pending` waits for a human; `submitted`, `cancelled` and `expired` are final answers; `orphaned` means
 * the turn that asked is gone (interrupted by a restart): the request is still shown and may be answered,
 * and the answer starts an explicit retry instead of reaching the old call.
 */
export const SecretRequestStatus = lazySchema(() =>
  z.enum(["pending", "submitted", "cancelled", "expired", "orphaned"]),
);
export type SecretRequestStatus = z.infer<typeof SecretRequestStatus>;

/** The statuses a caller may resolve a request to. */
export const SecretResolution = lazySchema(() =>
  SecretRequestStatus.extract(["submitted", "cancelled", "expired"]),
);
export type SecretResolution = z.infer<typeof SecretResolution>;

/** Statuses a request can still be answered from. */
export const openSecretRequestStatuses: readonly SecretRequestStatus[] = ["pending", "orphaned"];

/**
 * The shortest secret value the daemon takes (in characters, as JavaScript counts them); a shorter one is
 * refused at submission (`secret_too_short`). The daemon masks a submitted value, as is and in every
 * encoding it masks, wherever a turn's content holds it. A shorter value would match what a turn
 * ordinarily shows, not only the secret: two to seven characters are common words and parts of words
 * (`ta` in "data" and "start"), numbers and the keys of a tool's JSON input (`command`, `content`),
 * and their base64 forms (at most ten characters of the base64 alphabet) turn up by chance in hashes,
 * ids and encoded output; each such match would become a marker, unreadable and many times longer than
 * what it replaced. Eight is also what GitLab asks of a masked CI/CD variable.
 */
export const secretValueMinLength = 8;

/** Why `value` cannot be submitted as a secret (the daemon's refusal, word for word), or undefined. */
export function secretValueProblem(value: string): string | undefined {
  if (value.length >= secretValueMinLength) return undefined;
  return `a secret must be at least ${secretValueMinLength} characters long: a shorter value cannot be masked without masking ordinary words and ids too; the request stays open for a proper value`;
}

/** What a `requestSecret` tool call asks for. */
export const SecretRequestDraft = lazySchema(() =>
  z.strictObject({
    /** The tool call's own id (Claude `_meta["claudecode/toolUseId"]`, Codex `_meta.callId`): repeats dedupe. */
    toolCallKey: z.string().min(1, "toolCallKey must not be empty").max(256),
    /** What the secret is, e.g. `GITHUB_TOKEN`. */
    name: z.string().min(1, "secret name must not be empty").max(128),
    /** Text shown to the human. */
    prompt: z.string().max(4000),
  }),
);
export type SecretRequestDraft = z.infer<typeof SecretRequestDraft>;

/**
 * The arguments of floot's `requestSecret` MCP tool, as the model writes them: the schema that validates
 * a call is the one `tools/list` shows, so the name's pattern and the prompt's bound are in both.
 */
export const RequestSecretToolInput = lazySchema(() =>
  z.strictObject({
    name: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "name must look like an environment variable name")
      .describe("What the secret is, as an env var name, e.g. GITHUB_TOKEN"),
    prompt: z
      .string()
      .max(4000, "prompt must be at most 4000 characters")
      .default("")
      .describe("What to tell the human, e.g. why it is needed"),
  }),
);
export type RequestSecretToolInput = z.infer<typeof RequestSecretToolInput>;

export const SecretRequest = lazySchema(() =>
  z.strictObject({
    id: JournalId,
    turnId: JournalId,
    sessionId: JournalId,
    toolCallKey: SecretRequestDraft.shape.toolCallKey,
    name: SecretRequestDraft.shape.name,
    prompt: SecretRequestDraft.shape.prompt,
    status: SecretRequestStatus,
    /** The bridge generation the asking tool call came through. */
    bridgeGeneration: z.number().int().nonnegative(),
    createdAt: IsoTimestamp,
    updatedAt: IsoTimestamp,
    resolvedAt: IsoTimestamp.optional(),
    /** Who submitted the value (never the value). */
    submittedBy: DecisionActor.optional(),
  }),
);
export type SecretRequest = z.infer<typeof SecretRequest>;
