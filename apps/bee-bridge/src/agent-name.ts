import { basename } from "node:path";
import { UsageError } from "@bridgeworks/cli";
import { AgentName } from "@bridgeworks/protocol";

/**
 * `BEE_AGENT` when set (it must already be a valid name), else the working folder's name with every
 * character an agent name cannot hold replaced by `-`, cut to 64 characters.
 */
export function resolveAgentName(env: Readonly<Record<string, string | undefined>>, cwd: string): AgentName {
  const explicit = env.BEE_AGENT;
  if (explicit !== undefined && explicit !== "") {
    const parsed = AgentName.safeParse(explicit);
    if (!parsed.success)
      throw new UsageError("BEE_AGENT", parsed.error.issues[0]?.message ?? "invalid agent name");
    return parsed.data;
  }
  return sanitizeAgentName(basename(cwd));
}

export function sanitizeAgentName(raw: string): AgentName {
  const cleaned = raw
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 64);
  return AgentName.parse(cleaned === "" ? "agent" : cleaned);
}
