import type { HookInput, Options, Query, SDKMessage, SDKUserMessage } from "@anthropic-ai/claude-agent-sdk";
import { waitUntil } from "@bridgeworks/test-harness";
import { describe, expect, test } from "vitest";
import { ClaudeQuery } from "../src/claude-query.js";
import { WARM_UP_PROMPT } from "../src/warm-up.js";

interface Behaviour {
  /** What `initialize` answers for `hooks_applied` (2.1.332: true when the request carried hooks). */
  readonly hooksApplied: boolean | undefined;
  /** A Claude Code that never runs UserPromptSubmit hooks (the fail-safe's case). */
  readonly ignoresHooks?: boolean;
}

interface FakeRun {
  readonly options: Options;
  readonly prompts: string[];
  readonly blocked: string[];
  closed: boolean;
}

const textOf = (user: SDKUserMessage): string => {
  const content = user.message.content;
  return typeof content === "string"
    ? content
    : content.map((block) => ("text" in block ? block.text : "")).join("");
};

/**
 * Claude Code's side of a warm-up, as 2.1.332 behaves through the Agent SDK 0.3.332 (observed with
 * the real binary, docs/first-token.md): initialize answers `hooks_applied: true` when
 * hooks were registered; each prompt runs the UserPromptSubmit hooks first; a blocked prompt yields
 * `system/init`, `system/informational` (`prompt_submit_outcome.kind: "blocked_by_hook"`) and a
 * `result` with no model request; any other prompt is answered.
 */
function fakeClaudeCode(runs: FakeRun[], behaviour: Behaviour) {
  return ({ prompt, options }: { prompt: AsyncIterable<SDKUserMessage> | string; options?: Options }) => {
    const run: FakeRun = { options: options ?? {}, prompts: [], blocked: [], closed: false };
    runs.push(run);
    const hooks = options?.hooks?.UserPromptSubmit?.flatMap((matcher) => matcher.hooks) ?? [];
    const init = { type: "system", subtype: "init", session_id: "s-1" } as unknown as SDKMessage;
    async function* messages(): AsyncGenerator<SDKMessage, void> {
      for await (const user of prompt as AsyncIterable<SDKUserMessage>) {
        if (run.closed) return;
        const text = textOf(user);
        let blocked = false;
        for (const hook of behaviour.ignoresHooks ? [] : hooks) {
          const input = { hook_event_name: "UserPromptSubmit", prompt: text } as unknown as HookInput;
          const output = await hook(input, undefined, { signal: new AbortController().signal });
          if ("decision" in output && output.decision === "block") blocked = true;
        }
        yield init;
        if (blocked) {
          run.blocked.push(text);
          yield {
            type: "system",
            subtype: "informational",
            prompt_submit_outcome: { kind: "blocked_by_hook", prompt_kept: false },
          } as unknown as SDKMessage;
        } else {
          run.prompts.push(text);
          yield { type: "assistant", uuid: `a-${run.prompts.length}`, message: { content: [] } } as never;
        }
        yield { type: "result", subtype: "success", is_error: false, result: "" } as unknown as SDKMessage;
      }
    }
    return Object.assign(messages(), {
      initializationResult: async () => ({
        commands: [],
        ...(behaviour.hooksApplied === undefined ? {} : { hooks_applied: behaviour.hooksApplied }),
      }),
      interrupt: async () => undefined,
      close: () => {
        run.closed = true;
      },
    }) as unknown as Query;
  };
}

function start(behaviour: Behaviour, warmUp = true) {
  const runs: FakeRun[] = [];
  const seen: SDKMessage[] = [];
  const ended: string[] = [];
  const query = new ClaudeQuery(
    {
      runQuery: fakeClaudeCode(runs, behaviour) as never,
      env: {},
      cwd: "/",
      claudeExecutable: undefined,
      model: "sonnet",
      systemPrompt: "sys",
      reasoning: undefined,
      resume: undefined,
      tools: [],
      issued: new Set(),
      warmUp,
    },
    {
      onToolCall: async () => ({ content: [] }),
      onMessage: (message) => seen.push(message),
      onEnded: (detail) => ended.push(detail),
    },
  );
  return { query, run: () => runs[0]!, seen, ended };
}

const prompt = (text: string) => [{ type: "text" as const, text }];

describe("the warm-up of a query started ahead of its first prompt", () => {
  test("sent once Claude Code registered its hook, blocked there, and invisible to Pi; Pi's first prompt goes on", async () => {
    const { query, run, seen, ended } = start({ hooksApplied: true });
    await expect(query.warmedUp).resolves.toMatchObject({ outcome: "blocked", ms: expect.any(Number) });
    expect(run().blocked).toEqual([WARM_UP_PROMPT]);
    expect(seen).toEqual([]);

    // A prompt of Pi's with the warm-up's very text is not blocked: the hook blocks once.
    query.push(prompt(WARM_UP_PROMPT));
    await waitUntil(() => seen.some((message) => message.type === "result"), 5_000, "the answer");
    expect(run().prompts).toEqual([WARM_UP_PROMPT]);
    expect(seen.map((message) => message.type)).toEqual(["system", "assistant", "result"]);
    expect(ended).toEqual([]);
    expect(run().options.hooks?.UserPromptSubmit).toHaveLength(1);
    await query.close();
  });

  test("not sent when Claude Code did not register the hook (nothing could block it)", async () => {
    for (const hooksApplied of [false, undefined]) {
      const { query, run } = start({ hooksApplied });
      await expect(query.warmedUp).resolves.toEqual({
        outcome: "skipped",
        reason: "Claude Code did not register the hook that blocks it",
      });
      expect(run().blocked).toEqual([]);
      expect(run().prompts).toEqual([]);
      await query.close();
    }
  });

  test("not sent after a prompt of Pi's, which is never blocked", async () => {
    const { query, run, seen } = start({ hooksApplied: true });
    query.push(prompt(WARM_UP_PROMPT));
    await expect(query.warmedUp).resolves.toEqual({ outcome: "skipped", reason: "a prompt came first" });
    await waitUntil(() => seen.some((message) => message.type === "result"), 5_000, "the answer");
    expect(run().prompts).toEqual([WARM_UP_PROMPT]);
    expect(run().blocked).toEqual([]);
    await query.close();
  });

  test("a Claude Code that answers the warm-up anyway: the query ends, and Pi sees nothing of it", async () => {
    const { query, run, seen, ended } = start({ hooksApplied: true, ignoresHooks: true });
    await expect(query.warmedUp).resolves.toEqual({ outcome: "answered" });
    await waitUntil(() => ended.length > 0, 5_000, "the query's end");
    expect(ended).toEqual([expect.stringContaining("Claude Code sent the warm-up prompt to the model")]);
    expect(run().prompts).toEqual([WARM_UP_PROMPT]);
    expect(seen).toEqual([]);
    expect(query.isClosing).toBe(true);
  });

  test("a query started for a prompt has no warm-up and no hook", async () => {
    const { query, run } = start({ hooksApplied: true }, false);
    expect(query.warmedUp).toBeUndefined();
    expect(run().options.hooks).toBeUndefined();
    await query.close();
  });

  test("its prompt is shorter than Claude Code's session-title threshold (10 characters in 2.1.332)", () => {
    expect(WARM_UP_PROMPT.trim().length).toBeLessThan(10);
  });
});
