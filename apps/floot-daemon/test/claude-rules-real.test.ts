import { toolResultText } from "@bridgeworks/model-double";
import { doubledEnvironments } from "@bridgeworks/test-harness";
import { afterEach, describe, expect, test } from "vitest";
import { exactBashRule } from "../src/daemon/claude-rule-syntax.js";

// How the real claude 2.1.332 reads a Bash rule in --allowedTools, the facts claude-rule-syntax.ts
// builds on: `claude -p --permission-mode default --allowedTools RULE` on the model double, whose model
// runs one Bash command; the tool result says whether the rule let it run ("requires approval" when not:
// no permission prompt tool here). `touch` and `python3`, not `echo`: Claude Code runs a read-only
// command such as `echo hi there` under no rule at all.

const doubled = doubledEnvironments();
afterEach(() => doubled.dispose());

async function resultUnder(rules: string, command: string): Promise<string> {
  const { double, environment } = await doubled.start({
    steps: [
      {
        match: { lastUserTextIncludes: "[go]" },
        response: {
          events: [
            {
              type: "tool_use",
              id: "toolu_rule",
              nameFrom: { equals: "Bash" },
              input: { command, description: "run" },
            },
          ],
        },
      },
      { match: { toolResultFor: "toolu_rule" }, response: { events: [{ type: "text", text: "DONE" }] } },
    ],
  });
  const claude = environment.spawn("claude", [
    ...["-p", "[go] run it", "--permission-mode", "default", "--allowedTools", rules],
    ...["--output-format", "stream-json", "--verbose"],
  ]);
  const exit = await claude.exited;
  expect(exit.code, claude.stderr()).toBe(0);
  const results = double.requests.map((request) => toolResultText("anthropic", request.body, "toolu_rule"));
  return results.find((text) => text !== undefined) ?? "(no tool result)";
}

const ran = (result: string) => !/requires? approval|needs approval/.test(result);

describe("claude 2.1.332's Bash rules, measured", () => {
  test("a rule without :* is an exact command (compound too); its parentheses may be escaped", async () => {
    expect(ran(await resultUnder("Bash(touch x1)", "touch x1"))).toBe(true);
    expect(ran(await resultUnder("Bash(touch x1)", "touch x1 x2"))).toBe(false);
    expect(ran(await resultUnder("Bash(touch c1 && touch c2)", "touch c1 && touch c2"))).toBe(true);
    expect(ran(await resultUnder("Bash(touch c1 && touch c2)", "touch c1 && touch c2 && touch c3"))).toBe(
      false,
    );
    expect(await resultUnder('Bash(python3 -c "print\\(6+1\\)")', 'python3 -c "print(6+1)"')).toBe("7");
    expect(ran(await resultUnder('Bash(python3 -c "print\\(6+1\\)")', 'python3 -c "print(6+1)" x'))).toBe(
      false,
    );
  }, 120_000);

  test("an unescaped * makes it a wildcard; an escaped one is compared as two characters", async () => {
    expect(await resultUnder('Bash(python3 -c "print(6*7)")', 'python3 -c "print(6+1, 7)"')).toBe("7 7");
    const exact = exactBashRule('python3 -c "print(6*7)"');
    expect(exact).toBe('Bash(python3 -c "print\\(6\\*7\\)")');
    expect(ran(await resultUnder(exact, 'python3 -c "print(6*7)"'))).toBe(false);
  }, 120_000);

  test("--allowedTools splits outside parentheses but ignores their escapes: an escaped one can grant all of Bash", async () => {
    expect(
      await resultUnder('Bash(touch q0),Bash(python3 -c "print\\(6,7\\)")', 'python3 -c "print(6,7)"'),
    ).toBe("6 7");
    expect(await resultUnder("Bash(touch q9\\) Bash \\(x)", 'python3 -c "print(6*7)"')).toBe("42");
  }, 120_000);
});
