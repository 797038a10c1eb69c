import { afterEach, describe, expect, inject, test } from "vitest";
import {
  lastAssistant,
  modelRequests,
  type PiEvent,
  type PiProcess,
  piLines,
  textOf,
  toolExecutions,
} from "./support/pi-driver.js";
import { Scenario } from "./support/scenario.js";

let scenario: Scenario | undefined;
afterEach(async () => {
  await scenario?.dispose();
  scenario = undefined;
});

/**
 * Claude Code reads its subscription limits from these response headers (claude 2.1.332: the
 * `anthropic-ratelimit-unified-*` family) and reports them as `rate_limit_event`s only when it runs on
 * a subscription (OAuth) token, never on an API key.
 */
function unifiedHeaders(status: "allowed_warning" | "rejected", resetsAt: number): Record<string, string> {
  return {
    "anthropic-ratelimit-unified-status": status,
    "anthropic-ratelimit-unified-reset": String(resetsAt),
    "anthropic-ratelimit-unified-representative-claim": "five_hour",
    "anthropic-ratelimit-unified-5h-utilization": status === "rejected" ? "1" : "0.91",
    "anthropic-ratelimit-unified-5h-reset": String(resetsAt),
    "anthropic-ratelimit-unified-7d-utilization": "0.4",
    "anthropic-ratelimit-unified-7d-reset": String(resetsAt + 3 * 86_400),
  };
}

/**
 * The plan's 5-hour window is used up and the request was let through on extra usage: Claude Code
 * 2.1.332 reports `rate_limit_event` `{status: "rejected", overageStatus: "allowed", isUsingOverage:
 * true}` for these headers (bench/spend-probe.mjs; its `isUsingOverage` is `status === "rejected" &&
 * (overageStatus === "allowed" || overageStatus === "allowed_warning")` in the binary's header reader).
 */
function overageHeaders(resetsAt: number): Record<string, string> {
  return {
    "anthropic-ratelimit-unified-status": "rejected",
    "anthropic-ratelimit-unified-reset": String(resetsAt),
    "anthropic-ratelimit-unified-representative-claim": "five_hour",
    "anthropic-ratelimit-unified-5h-utilization": "1",
    "anthropic-ratelimit-unified-5h-reset": String(resetsAt),
    "anthropic-ratelimit-unified-overage-status": "allowed",
    "anthropic-ratelimit-unified-overage-reset": String(resetsAt + 20 * 86_400),
  };
}

/** `resets HH:MM UTC (in 2h 0m)`, with the day when it is not today (UTC): the test runs at any hour. */
function resetPattern(resetsAt: number): string {
  const at = new Date(resetsAt * 1000).toISOString();
  const day = at.slice(0, 10) === new Date().toISOString().slice(0, 10) ? "" : `${at.slice(0, 10)} `;
  return `resets ${day}${at.slice(11, 16)} UTC \\(in (2h 0m|1h 59m)\\)`;
}

/** A prompt answered by one Bash call whose answer carries `headers`, then by `answer`. */
function overageScript(resetsAt: number) {
  return {
    steps: [
      {
        match: { lastUserTextIncludes: "[overage]" },
        response: {
          events: [
            {
              type: "tool_use" as const,
              id: "toolu_overage",
              nameFrom: { endsWith: "__bash" },
              input: { command: "printf RAN" },
            },
          ],
          headers: overageHeaders(resetsAt),
        },
      },
      {
        match: { toolResultFor: "toolu_overage" },
        response: { events: [{ type: "text" as const, text: "PAID ANSWER" }] },
      },
      {
        match: { lastUserTextIncludes: "[again]" },
        response: { events: [{ type: "text" as const, text: "AGAIN" }] },
      },
    ],
  };
}

function oauthPi(current: Scenario, line: ReturnType<typeof piLines>[number], spend?: string): PiProcess {
  return current.pi(line, {
    env: {
      CLAUDE_CODE_OAUTH_TOKEN: "sk-ant-oat01-double",
      ANTHROPIC_API_KEY: "",
      ...(spend ? { CLAUDE_BRIDGE_SPEND: spend } : {}),
    },
  });
}

function statusLines(events: readonly PiEvent[]): unknown[] {
  return events
    .filter((event) => event.type === "extension_ui_request" && event.method === "setStatus")
    .map((event) => [event.statusKey, event.statusText]);
}

describe.each(piLines(inject("node24")))("$name: usage and limits in Pi", (line) => {
  test("a rate-limit warning shows in Pi's status line; a reached usage limit is an error Pi does not retry, saying when it resets", async () => {
    const resetsAt = Math.floor(Date.now() / 1000) + 2 * 3600;
    scenario = await Scenario.start({
      steps: [
        {
          match: { lastUserTextIncludes: "[warn]" },
          response: {
            events: [{ type: "text", text: "WARNED" }],
            headers: unifiedHeaders("allowed_warning", resetsAt),
          },
        },
        {
          match: { lastUserTextIncludes: "[limit]" },
          response: {
            error: { status: 429, message: "usage limit" },
            headers: unifiedHeaders("rejected", resetsAt),
          },
        },
      ],
    });
    const pi = scenario.pi(line, {
      env: { CLAUDE_CODE_OAUTH_TOKEN: "sk-ant-oat01-double", ANTHROPIC_API_KEY: "" },
    });
    const warned = await scenario.turn(pi, "[warn] go");
    expect(textOf(lastAssistant(warned))).toBe("WARNED");
    expect(statusLines(pi.events())).toEqual([
      [
        "claude-code",
        expect.stringMatching(
          new RegExp(`^Claude Code: 91% of 5-hour limit used · ${resetPattern(resetsAt)}$`),
        ),
      ],
    ]);
    expect(scenario.diag().filter((record) => record.type === "claude_rate_limit")).toEqual([
      expect.objectContaining({
        status: "allowed_warning",
        rateLimitType: "five_hour",
        utilization: 0.91,
        resetsAt: new Date(resetsAt * 1000).toISOString(),
      }),
    ]);

    const from = pi.events().length;
    const limited = await scenario.turn(pi, "[limit] again");
    const failed = lastAssistant(limited) as { stopReason: string; errorMessage: string };
    expect(failed.stopReason).toBe("error");
    expect(failed.errorMessage).toMatch(/^Claude Code: usage quota exceeded \(5-hour limit\); it resets /);
    expect(failed.errorMessage).toContain("You've hit your 5-hour limit");
    expect(limited.some((event) => event.type === "auto_retry_start")).toBe(false);
    expect(statusLines(pi.events().slice(from))).toEqual([
      [
        "claude-code",
        expect.stringMatching(new RegExp(`^Claude Code: 5-hour limit reached · ${resetPattern(resetsAt)}$`)),
      ],
    ]);
    scenario.expectQuiescent();
  });

  test("CLAUDE_BRIDGE_SPEND=plan-only: once Claude Code says a request drew extra usage, nothing more is sent, and Pi shows an error it does not retry naming the window and its reset", async () => {
    const resetsAt = Math.floor(Date.now() / 1000) + 2 * 3600;
    scenario = await Scenario.start(overageScript(resetsAt));
    const pi = oauthPi(scenario, line, "plan-only");
    await pi.waitFor(
      (event) =>
        event.type === "extension_ui_request" && event.statusText === "Claude Code: plan limits only",
      60_000,
    );

    const run = await scenario.turn(pi, "[overage] go");
    // The answer that brought the news was already paid for: Pi gets its tool call and runs it.
    expect(toolExecutions(run)).toHaveLength(1);
    const refusal = new RegExp(
      `^Claude Code: extra usage refused, plan quota exceeded \\(5-hour limit used up\\); it ${resetPattern(resetsAt)}\\. CLAUDE_BRIDGE_SPEND=plan-only`,
    );
    const failed = lastAssistant(run) as { stopReason: string; errorMessage: string };
    expect(failed.stopReason).toBe("error");
    expect(failed.errorMessage).toMatch(refusal);
    expect(run.some((event) => event.type === "auto_retry_start")).toBe(false);

    const again = await scenario.turn(pi, "[again] go");
    expect((lastAssistant(again) as { errorMessage: string }).errorMessage).toMatch(refusal);
    expect(again.some((event) => event.type === "auto_retry_start")).toBe(false);
    // The tool's result and the next prompt never reached the model.
    expect(modelRequests(scenario.double).map((request) => request.response.stepIndex)).toEqual([0]);
    expect(statusLines(pi.events()).at(-1)).toEqual([
      "claude-code",
      expect.stringMatching(
        new RegExp(
          `^Claude Code: 5-hour limit reached · ${resetPattern(resetsAt)} · extra usage refused \\(plan only\\)$`,
        ),
      ),
    ]);
    expect(scenario.diag().filter((record) => record.type === "claude_spend_refused")).toEqual([
      expect.objectContaining({
        rateLimitType: "five_hour",
        resetsAt: new Date(resetsAt * 1000).toISOString(),
      }),
      expect.objectContaining({ rateLimitType: "five_hour" }),
    ]);
    expect(scenario.diag().filter((record) => record.type === "claude_rate_limit")).toEqual([
      expect.objectContaining({ status: "rejected", overageStatus: "allowed", usingOverage: true }),
    ]);
    const doctor = (await pi.doctor()).split("\n");
    expect(doctor).toContain(
      `Versions: Claude Code 2.1.332, Agent SDK 0.3.332, Pi ${line.name.slice(3)}, provider 0.0.0`,
    );
    expect(doctor).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /^Spending: plan only \(CLAUDE_BRIDGE_SPEND=plan-only\); refusing requests now: Claude Code: extra usage refused/,
        ),
        expect.stringMatching(
          new RegExp(`^Limits: 5-hour limit: rejected, ${resetPattern(resetsAt)}, drawing extra usage$`),
        ),
        expect.stringMatching(
          /^This session: 2 runs, 1 model requests; cache hit rate 0% \(read 0, written 0, uncached \d+ tokens\)$/,
        ),
        // The Bash call whose result was refused: its handler ended without it.
        "Tool results: 0 late, 1 dropped",
      ]),
    );
    scenario.expectQuiescent();
  });

  test("without CLAUDE_BRIDGE_SPEND, extra usage is spent as before: the tool's result and the next prompt go to the model", async () => {
    const resetsAt = Math.floor(Date.now() / 1000) + 2 * 3600;
    scenario = await Scenario.start(overageScript(resetsAt));
    const pi = oauthPi(scenario, line);
    const run = await scenario.turn(pi, "[overage] go");
    expect(textOf(lastAssistant(run))).toBe("PAID ANSWER");
    expect(textOf(lastAssistant(await scenario.turn(pi, "[again] go")))).toBe("AGAIN");
    expect(modelRequests(scenario.double).map((request) => request.response.stepIndex)).toEqual([0, 1, 2]);
    // Shown from the answer that drew extra usage; cleared by the next answers, whose headers say nothing.
    expect(statusLines(pi.events())[0]).toEqual([
      "claude-code",
      expect.stringMatching(
        new RegExp(`^Claude Code: 5-hour limit reached, drawing extra usage · ${resetPattern(resetsAt)}$`),
      ),
    ]);
    scenario.expectQuiescent();
  });
});
