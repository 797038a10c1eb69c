import { describe, expect, test } from "vitest";
import { resolveClaudeExecutable } from "../src/claude-executable.js";
import { claudeEnvironment } from "../src/claude-query.js";
import { renderUnseen, toMcpToolResult } from "../src/content.js";
import { diagLogPath } from "../src/diag-log.js";
import {
  apiErrorMessage,
  processEndedMessage,
  sessionLostMessage,
  usageLimitMessage,
} from "../src/errors.js";
import { AssistantEventStream } from "../src/event-stream.js";
import claudeCodeExtension from "../src/index.js";
import {
  normalizeContext,
  type PiExtensionHost,
  type ProviderRegistration,
  registerOnce,
} from "../src/pi-adapter.js";
import type { AssistantMessageEvent, PiContext, PiModel } from "../src/pi-types.js";
import { createClaudeCodeProvider } from "../src/provider.js";
import { isUsageLimitText, rateLimitState, rateLimitStatus } from "../src/rate-limits.js";
import { emptyUsage } from "../src/turn.js";
import { pi1NonRetryable, piRetryable } from "./support/pi-retry.js";

const tool = { name: "bash", description: "run", parameters: { type: "object", properties: {} } };

describe("pi-adapter: one context shape for both Pi lines", () => {
  test("Pi 0.73 passes systemPrompt and tools beside the messages", () => {
    const context: PiContext = {
      systemPrompt: "be brief",
      tools: [tool],
      messages: [{ role: "user", content: "hi", timestamp: 1 }],
    };
    expect(normalizeContext(context)).toEqual({
      systemPrompt: "be brief",
      tools: [tool],
      messages: context.messages,
    });
  });

  test("Pi 1.x carries them in system messages: sections replace by name, tools are added and removed", () => {
    const read = { ...tool, name: "read" };
    const context: PiContext = {
      messages: [
        {
          role: "system",
          content: "base",
          sections: { a: "A1", b: "B" },
          toolsAdded: [tool, read],
          timestamp: 1,
        },
        { role: "user", content: "hi", timestamp: 2 },
        {
          role: "system",
          content: "",
          sections: { a: "A2", b: null },
          toolsRemoved: [{ name: "bash" }],
          timestamp: 3,
        },
      ],
    };
    const normalized = normalizeContext(context);
    expect(normalized.systemPrompt).toBe("base\n\nA2");
    expect(normalized.tools).toEqual([read]);
    expect(normalized.messages).toEqual([{ role: "user", content: "hi", timestamp: 2 }]);
  });

  test("a host gets the provider once, however often the package is loaded", () => {
    const registered: string[] = [];
    const host: PiExtensionHost = { registerProvider: (name) => registered.push(name) };
    const other: PiExtensionHost = { registerProvider: (name) => registered.push(`other:${name}`) };
    const config = () => ({}) as ProviderRegistration;
    expect(registerOnce(host, "claude-code", config)).toBe(true);
    expect(registerOnce(host, "claude-code", config)).toBe(false);
    expect(registerOnce(other, "claude-code", config)).toBe(true);
    expect(registered).toEqual(["claude-code", "other:claude-code"]);
  });

  test("the extension registers claude-code with sonnet, opus and haiku", () => {
    const calls: Array<[string, ProviderRegistration]> = [];
    claudeCodeExtension({ registerProvider: (name, config) => calls.push([name, config]) });
    expect(calls).toHaveLength(1);
    const [name, config] = calls[0]!;
    expect(name).toBe("claude-code");
    expect(config.models.map((model) => model.id)).toEqual(["sonnet", "opus", "haiku"]);
    expect(config.api).toBe("claude-code-agent-sdk");
    expect(typeof config.streamSimple).toBe("function");
  });
});

describe("event stream", () => {
  test("ends at the terminal event; result() is the terminal message; later pushes are ignored", async () => {
    const stream = new AssistantEventStream();
    const message = {
      role: "assistant" as const,
      content: [],
      api: "x",
      provider: "y",
      model: "z",
      usage: emptyUsage(),
      stopReason: "stop" as const,
      timestamp: 0,
    };
    stream.push({ type: "start", partial: message });
    stream.push({ type: "done", reason: "stop", message });
    stream.push({ type: "start", partial: message });
    const seen: AssistantMessageEvent["type"][] = [];
    for await (const event of stream) seen.push(event.type);
    expect(seen).toEqual(["start", "done"]);
    await expect(stream.result()).resolves.toBe(message);
  });
});

describe("content", () => {
  const image = { type: "image" as const, data: "AAAA", mimeType: "image/png" };

  test("unseen user messages go as their own blocks, images as image blocks", () => {
    expect(
      renderUnseen([{ role: "user", content: [{ type: "text", text: "look" }, image], timestamp: 1 }]),
    ).toEqual([
      { type: "text", text: "look" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
    ]);
  });

  test("a history Claude never saw becomes a transcript, then the latest prompt's own blocks", () => {
    const blocks = renderUnseen([
      { role: "user", content: "first", timestamp: 1 },
      {
        role: "assistant",
        content: [{ type: "toolCall", id: "t1", name: "bash", arguments: { command: "ls" } }],
        api: "a",
        provider: "p",
        model: "m",
        usage: emptyUsage(),
        stopReason: "toolUse",
        timestamp: 2,
      },
      {
        role: "toolResult",
        toolCallId: "t1",
        toolName: "bash",
        content: [{ type: "text", text: "out" }],
        isError: false,
        timestamp: 3,
      },
      { role: "user", content: [image], timestamp: 4 },
    ]);
    expect(blocks[0]?.type).toBe("text");
    expect((blocks[0] as { text: string }).text).toMatch(
      /\[user\]\nfirst[\s\S]*called tool bash[\s\S]*\[tool result bash\]\nout/,
    );
    expect(blocks[1]).toMatchObject({ type: "image" });
  });

  test("failed and aborted replies are not told again", () => {
    const blocks = renderUnseen([
      {
        role: "assistant",
        content: [{ type: "text", text: "partial" }],
        api: "a",
        provider: "p",
        model: "m",
        usage: emptyUsage(),
        stopReason: "aborted",
        timestamp: 1,
      },
      { role: "user", content: "again", timestamp: 2 },
    ]);
    expect(blocks).toEqual([{ type: "text", text: "again" }]);
  });

  test("a Pi tool result becomes the MCP answer: text, images, isError", () => {
    expect(
      toMcpToolResult({
        role: "toolResult",
        toolCallId: "t",
        toolName: "read",
        content: [{ type: "text", text: "x" }, image],
        isError: true,
        timestamp: 1,
      }),
    ).toEqual({
      content: [
        { type: "text", text: "x" },
        { type: "image", data: "AAAA", mimeType: "image/png" },
      ],
      isError: true,
    });
  });
});

describe("errors are worded for Pi's auto-retry", () => {
  test.each([
    ["rate_limit", "API Error: Request rejected (429)"],
    ["overloaded", "busy"],
    ["server_error", "API Error: 529 overloaded"],
    ["server_error", "API Error: 500"],
  ] as const)("%s is retryable", (code, detail) => {
    expect(apiErrorMessage(code, detail)).toMatch(piRetryable);
  });

  test("authentication and invalid requests are not retried", () => {
    expect(apiErrorMessage("authentication_failed", "invalid x-api-key")).not.toMatch(piRetryable);
    expect(apiErrorMessage("invalid_request", "bad field")).not.toMatch(piRetryable);
  });

  test("a Claude Code process that ended is retryable", () => {
    expect(processEndedMessage("exit code 1")).toMatch(piRetryable);
  });

  test("a Claude session Claude Code no longer has is retryable (the retry starts a new one)", () => {
    const message = sessionLostMessage("No conversation found with session ID: 3f0c1d2e");
    expect(message).toMatch(piRetryable);
    expect(message).not.toMatch(pi1NonRetryable);
  });

  test("a subscription usage limit is not retried by either Pi line, and says which limit and when it resets", () => {
    const now = Date.parse("2026-12-01T12:00:00Z");
    const limit = rateLimitState({
      status: "rejected",
      rateLimitType: "five_hour",
      resetsAt: now / 1000 + 7_260,
    });
    const text = "You've hit your 5-hour limit · resets 2:01pm (UTC)";
    const message = usageLimitMessage(text, limit, now);
    expect(message).toBe(
      `Claude Code: usage quota exceeded (5-hour limit); it resets 14:01 UTC (in 2h 1m). ${text}`,
    );
    expect(message).not.toMatch(piRetryable);
    expect(message).toMatch(pi1NonRetryable);
    expect(isUsageLimitText(text)).toBe(true);
    expect(isUsageLimitText("API Error: Request rejected (429)")).toBe(false);
  });
});

describe("rate limits in Pi's status line", () => {
  const now = Date.parse("2026-12-01T12:00:00Z");
  test.each([
    [{ status: "allowed" }, undefined],
    [
      {
        status: "allowed_warning",
        rateLimitType: "five_hour",
        utilization: 0.91,
        resetsAt: now / 1000 + 3_540,
      },
      "Claude Code: 91% of 5-hour limit used · resets 12:59 UTC (in 59m)",
    ],
    [
      // Percent instead of a fraction, milliseconds instead of seconds, another day.
      {
        status: "allowed_warning",
        rateLimitType: "seven_day",
        utilization: 85,
        resetsAt: now + 3 * 86_400_000,
      },
      "Claude Code: 85% of weekly limit used · resets 2026-12-04 12:00 UTC (in 3d 0h)",
    ],
    [{ status: "rejected", rateLimitType: "seven_day_opus" }, "Claude Code: weekly Opus limit reached"],
    [{ status: "allowed_warning" }, "Claude Code: usage limit nearly used"],
  ])("%j -> %s", (info, expected) => {
    expect(rateLimitStatus(rateLimitState(info), now)).toBe(expected);
  });
});

describe("configuration", () => {
  test("CLAUDE_BRIDGE_CLAUDE_PATH wins; otherwise the Agent SDK resolves its own binary", () => {
    expect(resolveClaudeExecutable({ CLAUDE_BRIDGE_CLAUDE_PATH: "/opt/claude" })).toBe("/opt/claude");
    expect(resolveClaudeExecutable({})).toBeUndefined();
  });

  test("the diagnostics log: CLAUDE_BRIDGE_DIAG_LOG, else the Pi agent dir, else ~/.pi/agent", () => {
    expect(diagLogPath({ CLAUDE_BRIDGE_DIAG_LOG: "/x/d.log" })).toBe("/x/d.log");
    expect(diagLogPath({ PI_CODING_AGENT_DIR: "/agent" })).toBe("/agent/claude-bridge-diag.log");
    expect(diagLogPath({ HOME: "/home/u" })).toBe("/home/u/.pi/agent/claude-bridge-diag.log");
  });

  test("a bad CLAUDE_BRIDGE_STREAM_IDLE_TIMEOUT fails the request with a message naming it", async () => {
    const provider = createClaudeCodeProvider({
      env: { CLAUDE_BRIDGE_STREAM_IDLE_TIMEOUT: "soon" },
      cwd: "/",
      diag: () => {},
      runQuery: () => {
        throw new Error("must not start Claude Code");
      },
    });
    const model: PiModel = {
      id: "sonnet",
      api: "claude-code-agent-sdk",
      provider: "claude-code",
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    };
    const stream = provider.registration.streamSimple(model, {
      messages: [{ role: "user", content: "hi", timestamp: 1 }],
    });
    const result = await stream.result();
    expect(result.stopReason).toBe("error");
    expect(result.errorMessage).toMatch(/CLAUDE_BRIDGE_STREAM_IDLE_TIMEOUT="soon"/);
    await provider.dispose();
  });
});

describe("claudeEnvironment: what Claude Code runs with", () => {
  test("Claude Code's git status (never sent: Pi's system prompt replaces Claude Code's) is off unless the user set it", () => {
    expect(claudeEnvironment({ PATH: "/bin" }, undefined)).toMatchObject({
      PATH: "/bin",
      CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS: "1",
      CLAUDE_CODE_MAX_RETRIES: "0",
    });
    expect(
      claudeEnvironment({ CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS: "0" }, undefined)
        .CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS,
    ).toBe("0");
  });
});
