import { HumanSender, parseAgentIdentity } from "@bridgeworks/protocol";
import { argumentError } from "./errors.js";

/** Limits every board implementation applies to the same arguments. */
export const listLimit = { default: 50, max: 500 };
export const waitLimit = { default: 20, max: 500 };
export const maxTimeoutMs = 3_600_000;
/** Random ids can collide; mint again this many times before giving up. */
export const mintAttempts = 5;

/** The agent behind a sender, or null for a human. */
export function describeSender(sender: string): { agent: string | null } {
  if (HumanSender.safeParse(sender).success) return { agent: null };
  return { agent: parseAgentIdentity(sender).name };
}

export function requireObject(value: unknown, argument: string): void {
  if (typeof value !== "object" || value === null) throw argumentError(argument, "must be an object");
}
