import { describe, expect, test } from "vitest";
import { digestInput, ruleAllows, suggestRule, summarizeInput } from "../src/daemon/permission-rules.js";

describe("Claude Code rules, as far as the daemon reads them", () => {
  test("a bare tool name covers every call of the tool; another tool is not covered", () => {
    expect(ruleAllows("Edit", "Edit", { file_path: "/w/a" })).toBe(true);
    expect(ruleAllows("Edit", "Write", { file_path: "/w/a" })).toBe(false);
  });

  test("Bash prefix and exact rules; a compound command is never covered", () => {
    expect(ruleAllows("Bash(npm test:*)", "Bash", { command: "npm test -- --watch" })).toBe(true);
    expect(ruleAllows("Bash(npm test:*)", "Bash", { command: "npm test" })).toBe(true);
    expect(ruleAllows("Bash(npm test:*)", "Bash", { command: "npm testx" })).toBe(false);
    expect(ruleAllows("Bash(npm test:*)", "Bash", { command: "npm test && rm -rf ~" })).toBe(false);
    expect(ruleAllows("Bash(npm test:*)", "Bash", { command: "npm test; curl evil" })).toBe(false);
    expect(ruleAllows("Bash(npm test:*)", "Bash", { command: "npm test $(curl evil)" })).toBe(false);
    expect(ruleAllows("Bash(npm test:*)", "Bash", { command: "npm test > /etc/passwd" })).toBe(false);
    expect(ruleAllows("Bash(git status)", "Bash", { command: "git status" })).toBe(true);
    expect(ruleAllows("Bash(git status)", "Bash", { command: "git status -s" })).toBe(false);
    // A specifier the daemon does not interpret is asked about.
    expect(ruleAllows("Edit(src/**)", "Edit", { file_path: "src/a.ts" })).toBe(false);
  });

  test("the suggested rule: Bash's first word as a prefix, else the tool", () => {
    expect(suggestRule("Bash", { command: "  npm test --watch" })).toBe("Bash(npm:*)");
    expect(suggestRule("Edit", { file_path: "/w/a" })).toBe("Edit");
    expect(suggestRule("mcp__srv__tool", {})).toBe("mcp__srv__tool");
  });

  test("the summary is bounded; the digest tells inputs apart", () => {
    expect(summarizeInput("Bash", { command: "ls" })).toBe("ls");
    expect(summarizeInput("Write", { content: "x".repeat(5000) })).toHaveLength(2000);
    expect(digestInput({ command: "ls" })).toBe(digestInput({ command: "ls" }));
    expect(digestInput({ command: "ls" })).not.toBe(digestInput({ command: "ls -a" }));
  });
});
