import { createHash } from "node:crypto";
import { PermissionRule, permissionInputSummaryChars } from "@bridgeworks/protocol";

// Claude Code's rule syntax (`Tool`, `Tool(specifier)`, Bash's `Bash(prefix:*)`), as far as the daemon
// needs it: to suggest a rule for "allow for this session" and to answer a call of the same turn that a
// rule added meanwhile covers (Claude Code only reads --allowedTools when the turn starts).

/** What "allow for this session" adds unless the human names another rule. */
export function suggestRule(toolName: string, input: Readonly<Record<string, unknown>>): string {
  if (toolName === "Bash" && typeof input.command === "string") {
    const first = input.command.trim().split(/\s+/, 1)[0] ?? "";
    const rule = `Bash(${first}:*)`;
    if (first.length > 0 && PermissionRule.safeParse(rule).success) return rule;
  }
  return PermissionRule.safeParse(toolName).success ? toolName : "Bash";
}

/**
 * Whether `rule` certainly allows the call: a bare tool name, Bash's exact command or `prefix:*`.
 * Any other specifier (paths, domains) is not interpreted here: the call is asked about instead.
 */
export function ruleAllows(
  rule: string,
  toolName: string,
  input: Readonly<Record<string, unknown>>,
): boolean {
  const match = /^([^()]+)(?:\((.*)\))?$/.exec(rule);
  if (!match || match[1] !== toolName) return false;
  const specifier = match[2];
  if (specifier === undefined) return true;
  if (toolName !== "Bash" || typeof input.command !== "string") return false;
  const command = input.command.trim();
  // A compound command is never covered by a prefix: `npm test && rm -rf ~` must be asked about.
  if (/[;&|`$<>\n]/.test(command)) return false;
  if (specifier.endsWith(":*")) {
    const prefix = specifier.slice(0, -2);
    return command === prefix || command.startsWith(`${prefix} `);
  }
  return command === specifier;
}

/** The call's input as a human reads it, bounded: Bash's command, else its JSON. */
export function summarizeInput(toolName: string, input: Readonly<Record<string, unknown>>): string {
  const text =
    toolName === "Bash" && typeof input.command === "string" ? input.command : JSON.stringify(input);
  return text.length > permissionInputSummaryChars
    ? `${text.slice(0, permissionInputSummaryChars - 1)}…`
    : text;
}

/** Identifies the input, so a retry's identical call finds the decision made for the first one. */
export function digestInput(input: unknown): string {
  return createHash("sha256")
    .update(JSON.stringify(input) ?? "null")
    .digest("hex");
}
