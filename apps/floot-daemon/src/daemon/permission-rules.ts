import { createHash } from "node:crypto";
import { PermissionRule } from "@bridgeworks/protocol";
import { exactBashRule, parseRule, readBashContent, unescapedIndex } from "./claude-rule-syntax.js";
import { prefixRunsAnyCode, safePrefixLength } from "./code-running-commands.js";

// Claude Code's rules (`Tool`, `Tool(specifier)`, Bash's exact command, `prefix:*` and patterns), as far
// as the daemon needs them: to suggest a rule for "allow for this session", to answer a call a rule
// covers when Claude Code asks anyway (a rule added during the turn: Claude Code reads --allowedTools
// when the turn starts; a rule kept out of --allowedTools, see claude-rule-syntax.ts), and to say which
// rules let the agent run any code.

/**
 * What "allow for this session" adds unless the human names another rule: for Bash, a prefix only when
 * it runs no code nobody saw (`Bash(touch:*)`, `Bash(npm test:*)`), else the exact command; for another
 * tool, its name. Undefined when no rule covers only this call (an exact command too long for a rule).
 */
export function suggestRule(toolName: string, input: Readonly<Record<string, unknown>>): string | undefined {
  if (toolName !== "Bash") return PermissionRule.safeParse(toolName).success ? toolName : undefined;
  const command = typeof input.command === "string" ? input.command.trim() : "";
  if (command === "") return undefined;
  const words = command.split(/\s+/);
  const length = safePrefixLength(words);
  const rule = length === undefined ? exactBashRule(command) : `Bash(${words.slice(0, length).join(" ")}:*)`;
  return PermissionRule.safeParse(rule).success ? rule : undefined;
}

/**
 * Whether `rule` certainly allows the call: a bare tool name, Bash's exact command (compound or not:
 * the human saw all of it) or `prefix:*` on a simple command. Anything else (paths, domains, Bash
 * patterns) is not interpreted here: the call is asked about instead.
 */
export function ruleAllows(
  rule: string,
  toolName: string,
  input: Readonly<Record<string, unknown>>,
): boolean {
  const parsed = parseRule(rule);
  if (parsed === undefined || parsed.toolName !== toolName) return false;
  if (parsed.content === undefined) return true;
  if (toolName !== "Bash" || typeof input.command !== "string") return false;
  const command = input.command.trim();
  const reading = readBashContent(parsed.content);
  switch (reading.kind) {
    case "exact":
      return command === reading.command.trim();
    case "prefix":
      // A compound command is never covered by a prefix: `npm test && rm -rf ~` must be asked about.
      if (/[;&|`$<>\n\r]/.test(command)) return false;
      return command === reading.prefix || command.startsWith(`${reading.prefix} `);
    case "pattern":
      return false;
  }
}

/**
 * Whether `rule` lets the agent run any code: Bash itself, or a Bash prefix or pattern that begins with
 * an interpreter, a shell, a wrapper or a path (see code-running-commands.ts). An exact command does not.
 */
export function ruleRunsAnyCode(rule: string): boolean {
  const parsed = parseRule(rule);
  if (parsed === undefined || parsed.toolName !== "Bash") return false;
  if (parsed.content === undefined) return true;
  const reading = readBashContent(parsed.content);
  if (reading.kind === "exact") return false;
  if (reading.kind === "prefix") return prefixRunsAnyCode(reading.prefix);
  // What the pattern holds before its first `*`, in whole words.
  const head = reading.pattern.slice(0, unescapedIndex(reading.pattern, "*", "first"));
  return prefixRunsAnyCode(/\s$/.test(head) ? head : head.replace(/\S*$/, ""));
}

/** Bash's input fields that change nothing about what runs; with any other, the whole input is shown. */
const bashFieldsShownByCommand = new Set(["command", "description", "timeout", "run_in_background"]);

/**
 * The call as a human is shown it, whole: Bash's command (unless the input holds a field that changes
 * how it runs, e.g. `dangerouslyDisableSandbox`), else the input as JSON. A character that does not
 * print (controls but tab and line feed, format characters such as bidi overrides and zero-width
 * spaces, line and paragraph separators, lone surrogates) is written `⟨U+XXXX⟩`, so what a terminal or a
 * page shows is all there is.
 */
export function shownInput(toolName: string, input: Readonly<Record<string, unknown>>): string {
  const commandOnly =
    toolName === "Bash" &&
    typeof input.command === "string" &&
    Object.keys(input).every((key) => bashFieldsShownByCommand.has(key));
  const text = commandOnly ? (input.command as string) : JSON.stringify(input);
  return text.replace(
    /(?![\n\t])[\p{Cc}\p{Cf}\p{Cs}\u2028\u2029]/gu,
    (character) => `⟨U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}⟩`,
  );
}

/** Identifies the input, so a retry's identical call finds the decision made for the first one. */
export function digestInput(input: unknown): string {
  return createHash("sha256")
    .update(JSON.stringify(input) ?? "null")
    .digest("hex");
}
