import { z } from "zod";
import { lazySchema } from "./lazy-schema.js";

/** An agent's name: what `BEE_AGENT` or the working folder gives. */
export const AgentName = lazySchema(() =>
  z
    .string()
    .min(1, "agent name must not be empty")
    .max(64, "agent name must be at most 64 characters")
    .regex(/^[A-Za-z0-9._-]+$/, "agent name may hold only letters, digits, '.', '_' and '-'"),
);
export type AgentName = z.infer<typeof AgentName>;

const identityPattern = /^agent:([A-Za-z0-9._-]{1,64})#([0-9a-f]{8})$/;

/** One incarnation of an agent on the board: `agent:<name>#<8 hex>`. A `/clear` mints a new one. */
export const AgentIdentity = lazySchema(() =>
  z
    .string()
    .regex(identityPattern, "agent identity must look like agent:<name>#<8 lowercase hex>")
    .brand<"AgentIdentity">(),
);
export type AgentIdentity = z.infer<typeof AgentIdentity>;

export interface ParsedAgentIdentity {
  name: AgentName;
  nonce: string;
}

export function parseAgentIdentity(value: string): ParsedAgentIdentity {
  const identity = AgentIdentity.parse(value);
  const [, name, nonce] = identityPattern.exec(identity)!;
  return { name: name!, nonce: nonce! };
}

/** Mints a fresh identity; `randomBytes` is injected so tests can be deterministic. */
export function mintAgentIdentity(name: string, randomBytes: (size: number) => Uint8Array): AgentIdentity {
  const validName = AgentName.parse(name);
  const nonce = Buffer.from(randomBytes(4)).toString("hex");
  return AgentIdentity.parse(`agent:${validName}#${nonce}`);
}
