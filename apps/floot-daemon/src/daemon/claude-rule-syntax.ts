// Claude Code's permission rule syntax, as Claude Code 2.1.332 reads it (read in the binary, then
// measured with `claude -p --allowedTools RULE` on the model double; the facts are in docs/contract.md,
// "How Claude Code 2.1.332 reads a Bash rule"):
// - `Tool(raw)`: the first and the last parenthesis not preceded by an odd run of backslashes delimit
//   `raw` (the binary's `bD`, with `A`/`b`); `raw` is unescaped `\(` -> `(`, `\)` -> `)`, then
//   `\\` -> `\` (its `Hba`) into the rule's content.
// - A Bash content ending in `:*` is a prefix; one holding a `*` not preceded by an odd run of
//   backslashes is a wildcard pattern (`Bash(python3 -c "print(6*7)")` allowed `python3 -c
//   "print(6+1, 7)"`); anything else is an exact command, compared as is (`\*` stays two characters).
// - `--allowedTools` is split on commas and spaces outside parentheses, but backslashes are not honoured
//   there: `Bash(touch q9\) Bash \(x)` granted all of Bash. So a rule holding a parenthesis or a
//   backslash is never put in `--allowedTools`; the daemon answers for it (see `claudeReadsAsFlootDoes`).

/** A rule split as Claude Code splits it: the tool, and the unescaped content inside the parentheses. */
export interface ParsedRule {
  toolName: string;
  content?: string;
}

/** How the daemon reads a Bash rule's content. */
export type BashRuleReading =
  | { kind: "exact"; command: string }
  | { kind: "prefix"; prefix: string }
  /** A wildcard pattern: Claude Code matches it; the daemon does not interpret it (it asks a human). */
  | { kind: "pattern"; pattern: string };

export function parseRule(rule: string): ParsedRule | undefined {
  const open = unescapedIndex(rule, "(", "first");
  const close = unescapedIndex(rule, ")", "last");
  if (open === -1 && close === -1) return { toolName: rule };
  if (open <= 0 || close !== rule.length - 1 || close <= open) return undefined;
  const toolName = rule.slice(0, open);
  if (/[()]/.test(toolName)) return undefined;
  const raw = rule.slice(open + 1, close);
  if (raw === "" || raw === "*") return { toolName };
  return { toolName, content: raw.replaceAll("\\(", "(").replaceAll("\\)", ")").replaceAll("\\\\", "\\") };
}

export function readBashContent(content: string): BashRuleReading {
  const prefix = /^(.+):\*$/.exec(content)?.[1];
  if (prefix !== undefined) return { kind: "prefix", prefix };
  if (unescapedIndex(content, "*", "first") !== -1) return { kind: "pattern", pattern: content };
  return { kind: "exact", command: content.replace(/\\([*\\])/g, "$1") };
}

/**
 * The rule that allows exactly `command` in the daemon's reading: `*` written `\*` (else it would be a
 * wildcard), `\` written `\\\\` (both unescapes take a pair), parentheses `\(` and `\)`.
 */
export function exactBashRule(command: string): string {
  const escaped = command.replace(/[\\*()]/g, (character) =>
    character === "\\" ? "\\\\\\\\" : `\\${character}`,
  );
  return `Bash(${escaped})`;
}

/** The longest rule the daemon puts in `--allowedTools` (one argv string holds them all). */
const claudeRuleMaxChars = 1024;

/**
 * Whether Claude Code reads `rule` as the daemon does, and it is safe in `--allowedTools`: no
 * parenthesis or backslash inside (the splitter does not honour escapes, and Claude Code compares `\*`
 * as two characters), no line break, at most 1024 characters. The daemon's own rules check covers the
 * others when Claude Code asks.
 */
export function claudeReadsAsFlootDoes(rule: string): boolean {
  const parsed = parseRule(rule);
  if (parsed === undefined || rule.length > claudeRuleMaxChars) return false;
  const raw = rule.slice(parsed.toolName.length + 1, -1);
  return !/[()\\\n\r]/.test(raw);
}

/** Index of the first or last `character` not preceded by an odd run of backslashes, or -1. */
export function unescapedIndex(text: string, character: string, which: "first" | "last"): number {
  const escapedAt = (index: number) => {
    let backslashes = 0;
    for (let at = index - 1; at >= 0 && text[at] === "\\"; at--) backslashes++;
    return backslashes % 2 === 1;
  };
  if (which === "first") {
    for (let index = 0; index < text.length; index++)
      if (text[index] === character && !escapedAt(index)) return index;
  } else {
    for (let index = text.length - 1; index >= 0; index--)
      if (text[index] === character && !escapedAt(index)) return index;
  }
  return -1;
}
