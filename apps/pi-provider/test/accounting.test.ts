import type { ClaudeTurnReceipt } from "@bridgeworks/protocol";
import { describe, expect, test } from "vitest";
import { doctorReport } from "../src/doctor.js";
import type { AssistantMessage, UserMessage } from "../src/pi-types.js";
import type { QueryAction } from "../src/query-planner.js";
import { rateLimitState } from "../src/rate-limits.js";
import { COMPACTION_SUMMARY_PREFIX, type RequestCacheView, rebuildReason } from "../src/rebuild-reason.js";
import { AccountLimits, spendPolicyFromEnv } from "../src/spend-guard.js";
import { emptyUsage } from "../src/turn.js";
import { TurnReceipts } from "../src/turn-receipt.js";
import { pi1NonRetryable, piRetryable } from "./support/pi-retry.js";

const now = Date.parse("2026-12-01T12:00:00Z");
const inTwoHours = now / 1000 + 7_200;
const overage = rateLimitState({
  status: "rejected",
  rateLimitType: "five_hour",
  resetsAt: inTwoHours,
  overageStatus: "allowed",
  isUsingOverage: true,
});

describe("the spending guard", () => {
  test.each([
    [{}, "any"],
    [{ CLAUDE_BRIDGE_SPEND: "" }, "any"],
    [{ CLAUDE_BRIDGE_SPEND: "any" }, "any"],
    [{ CLAUDE_BRIDGE_SPEND: " Plan-Only " }, "plan-only"],
  ])("CLAUDE_BRIDGE_SPEND %j is %s", (env, policy) => {
    expect(spendPolicyFromEnv(env)).toEqual({ ok: true, policy });
  });

  test("a mistyped value is named and refuses extra usage (a money setting never fails open)", () => {
    expect(spendPolicyFromEnv({ CLAUDE_BRIDGE_SPEND: "plan_only" })).toEqual({
      ok: false,
      policy: "plan-only",
      error: expect.stringContaining('CLAUDE_BRIDGE_SPEND must be any or plan-only; got "plan_only"'),
    });
  });

  test("plan-only refuses once Claude Code says a request drew extra usage, until the window resets", () => {
    let clock = now;
    const limits = new AccountLimits("plan-only", () => clock);
    expect(limits.statusLine()).toBe("Claude Code: plan limits only");
    limits.note(rateLimitState({ status: "allowed_warning", rateLimitType: "five_hour", utilization: 0.9 }));
    expect(limits.refusal()).toBeUndefined();
    expect(limits.statusLine()).toBe("Claude Code: 90% of 5-hour limit used · plan only");

    limits.note(overage);
    const refusal = limits.refusal();
    expect(refusal?.message).toBe(
      "Claude Code: extra usage refused, plan quota exceeded (5-hour limit used up); it resets 14:00 UTC (in 2h 0m). " +
        "CLAUDE_BRIDGE_SPEND=plan-only keeps this provider from sending what would be billed as extra usage; nothing was sent.",
    );
    expect(refusal?.message).not.toMatch(piRetryable);
    expect(refusal?.message).toMatch(pi1NonRetryable);
    expect(limits.statusLine()).toBe(
      "Claude Code: 5-hour limit reached · resets 14:00 UTC (in 2h 0m) · extra usage refused (plan only)",
    );

    clock = now + 7_200_000;
    expect(limits.refusal()).toBeUndefined();
  });

  test("plan-only lets requests go again when Claude Code reports the plan allowing them", () => {
    const limits = new AccountLimits("plan-only", () => now);
    limits.note(overage);
    expect(limits.refusal()).toBeDefined();
    limits.note(rateLimitState({ status: "allowed", rateLimitType: "five_hour" }));
    expect(limits.refusal()).toBeUndefined();
  });

  test("any (the default) never refuses, and the status line says extra usage is being drawn", () => {
    const limits = new AccountLimits("any", () => now);
    limits.note(overage);
    expect(limits.refusal()).toBeUndefined();
    expect(limits.statusLine()).toBe(
      "Claude Code: 5-hour limit reached, drawing extra usage · resets 14:00 UTC (in 2h 0m)",
    );
  });
});

const user = (text: string, timestamp: number): UserMessage => ({ role: "user", content: text, timestamp });
const assistant = (timestamp: number): AssistantMessage => ({
  role: "assistant",
  content: [{ type: "text", text: "answer" }],
  api: "claude-code-agent-sdk",
  provider: "claude-code",
  model: "sonnet",
  usage: emptyUsage(),
  stopReason: "stop",
  timestamp,
});
const history = [user("one", 1), assistant(2), user("two", 3)];
const sonnet = { model: "sonnet", settings: '["sonnet","prompt"]' };
const continued: QueryAction = { kind: "continue", tellFrom: 2, midRound: false };
const fresh: QueryAction = { kind: "fresh", tellFrom: 0 };
const view = (overrides: Partial<RequestCacheView>): RequestCacheView => ({
  action: continued,
  messages: history,
  ...sonnet,
  previous: sonnet,
  lastBreak: undefined,
  ...overrides,
});

describe("why a request rebuilt the prompt cache", () => {
  test.each<[string, Partial<RequestCacheView>, string | undefined]>([
    ["the next turn of the same query", {}, undefined],
    ["a tool round", { action: { kind: "continue", tellFrom: 3, midRound: true } }, undefined],
    [
      "a resumed session, same settings",
      { action: { kind: "resume", sessionId: "s", tellFrom: 2 } },
      undefined,
    ],
    [
      "resumed at the last completed turn after an abort",
      { action: { kind: "resume-at", sessionId: "s", at: "u", tellFrom: 2 }, lastBreak: "abort" },
      undefined,
    ],
    [
      "the first request of a conversation",
      { messages: [user("one", 1)], previous: undefined, action: fresh },
      undefined,
    ],
    ["a restarted Pi resuming its session", { previous: undefined }, undefined],
    ["another model", { previous: { model: "opus", settings: '["opus","prompt"]' } }, "model_switch"],
    [
      "another system prompt",
      { previous: { model: "sonnet", settings: '["sonnet","other"]' } },
      "settings_change",
    ],
    [
      "Pi's compacted history told to a new session",
      {
        action: fresh,
        messages: [user(`${COMPACTION_SUMMARY_PREFIX}\n\n<summary>\nS`, 9), user("three", 10)],
      },
      "compaction",
    ],
    ["an abort before any turn completed", { action: fresh, lastBreak: "abort" }, "abort"],
    ["a failed first turn", { action: fresh, lastBreak: "failed_turn" }, "failed_turn"],
    ["a session Claude Code no longer has", { action: fresh, lastBreak: "lost_session" }, "lost_session"],
    ["another provider's history told to Claude", { action: fresh, previous: undefined }, "foreign_history"],
    [
      "a warm query's first request telling another provider's turns",
      { action: { kind: "continue", tellFrom: 0, midRound: false }, previous: undefined },
      "foreign_history",
    ],
  ])("%s", (_name, overrides, expected) => {
    expect(rebuildReason(view(overrides))).toBe(expected);
  });
});

describe("a run's receipt", () => {
  test("sums each model request's final usage and lists rebuilds, late and dropped results", () => {
    const receipts = new TurnReceipts();
    expect(receipts.take()).toBeUndefined();
    receipts.requested({ action: continued, messages: history, ...sonnet });
    receipts.requested({ action: continued, messages: history, model: "opus", settings: '["opus"]' });
    receipts.beginRequest({
      input_tokens: 10,
      cache_read_input_tokens: 900,
      cache_creation_input_tokens: 40,
    });
    receipts.updateUsage({ output_tokens: 5 });
    receipts.updateUsage({ output_tokens: 12 });
    receipts.beginRequest({ input_tokens: 3, cache_read_input_tokens: 950, output_tokens: 1 });
    const at = new Date(now).toISOString();
    receipts.noteLedger({
      type: "tool_result_delivery",
      at,
      scan: { mode: "incremental", from: 0, length: 1, messagesExamined: 1 },
      extractedIds: [],
      presentButNotExtractedIds: [],
      missingFromContextIds: [],
      duplicateIds: [],
      lateIds: ["toolu_late"],
      foreignIds: [],
      unknownIds: [],
      resolvedIds: [],
      queuedIds: [],
      malformedCount: 0,
    });
    receipts.noteLedger({
      type: "tool_call_ledger_transition",
      at,
      toolCallId: "toolu_gone",
      event: "deadline_expired",
      from: "forwarded",
      to: "failed",
      handlerWaiting: false,
      reason: "deadline_expired",
    });
    receipts.noteLedger({
      type: "tool_call_ledger_transition",
      at,
      toolCallId: "toolu_bad",
      event: "tool_use_refused",
      from: null,
      to: "failed",
      handlerWaiting: false,
      reason: "invalid_arguments",
    });
    expect(receipts.take()).toEqual({
      requests: 2,
      inputTokens: 13,
      outputTokens: 13,
      cacheReadTokens: 1850,
      cacheWriteTokens: 40,
      rebuilds: ["model_switch"],
      lateToolResults: ["toolu_late"],
      droppedToolResults: [{ id: "toolu_gone", reason: "deadline_expired" }],
    });
    expect(receipts.take()).toBeUndefined();
    // A model switched mid-run: the round goes on with the old model; the next turn is the switch.
    receipts.requested({
      action: { kind: "continue", tellFrom: 3, midRound: true },
      messages: history,
      ...sonnet,
    });
    receipts.requested({ action: continued, messages: history, ...sonnet });
    expect(receipts.take()?.rebuilds).toEqual(["model_switch"]);
    receipts.spendRefused();
    expect(receipts.take()).toMatchObject({ requests: 0, spendRefused: true });
  });
});

describe("/claude-code doctor", () => {
  const receipt = (overrides: Partial<ClaudeTurnReceipt>): ClaudeTurnReceipt => ({
    requests: 1,
    inputTokens: 10,
    outputTokens: 5,
    cacheReadTokens: 0,
    cacheWriteTokens: 0,
    rebuilds: [],
    lateToolResults: [],
    droppedToolResults: [],
    ...overrides,
  });

  test("shows the hit rate, rebuilds by reason, limits, the guard and the versions", () => {
    const report = doctorReport({
      facts: {
        spend: "plan-only",
        refusal: undefined,
        limits: [rateLimitState({ status: "allowed_warning", rateLimitType: "seven_day", utilization: 0.5 })],
        claudeCodeVersion: "2.1.332",
        keepWarm: { kind: "auto" },
      },
      receipts: [
        receipt({ cacheWriteTokens: 990 }),
        receipt({ cacheReadTokens: 990, rebuilds: ["model_switch"] }),
        receipt({
          cacheReadTokens: 980,
          rebuilds: ["model_switch", "compaction"],
          lateToolResults: ["t"],
          keepWarmRequests: 2,
        }),
      ],
      malformedReceipts: 0,
      versions: { agentSdk: "0.3.332", pi: "0.73.1" },
      nowMs: now,
    });
    expect(report.split("\n")).toEqual([
      "Claude Code provider doctor",
      expect.stringMatching(
        /^Versions: Claude Code 2\.1\.332, Agent SDK 0\.3\.332, Pi 0\.73\.1, provider \S+$/,
      ),
      "Spending: plan only (CLAUDE_BRIDGE_SPEND=plan-only); requests go ahead",
      "Limits: weekly limit: allowed_warning, 50% used",
      "This session: 3 runs, 3 model requests; cache hit rate 66% (read 1970, written 990, uncached 30 tokens)",
      "Cache rebuilds: model_switch 2, compaction 1",
      "Tool results: 1 late, 0 dropped",
      "Keep-warm: on (before Claude Code's cache lifetime ends), 2 side questions asked while tools ran",
    ]);
  });

  test("says so when nothing was asked yet, no limit was reported and the guard is off", () => {
    const report = doctorReport({
      facts: {
        spend: "any",
        refusal: undefined,
        limits: [],
        claudeCodeVersion: undefined,
        keepWarm: { kind: "off" },
      },
      receipts: [],
      malformedReceipts: 1,
      versions: { agentSdk: undefined, pi: undefined },
      nowMs: now,
    });
    expect(report.split("\n")).toEqual([
      "Claude Code provider doctor",
      expect.stringMatching(/^Versions: Claude Code unknown, Agent SDK unknown, Pi unknown, provider /),
      "Spending: any (CLAUDE_BRIDGE_SPEND unset: extra usage is not refused)",
      "Limits: none reported (Claude Code reports them with a Claude subscription sign-in)",
      "This session: 0 runs, 0 model requests; no model request yet",
      "Cache rebuilds: none",
      "Tool results: 0 late, 0 dropped",
      "Keep-warm: off, 0 side questions asked while tools ran",
      "(1 receipts unreadable)",
    ]);
  });
});
