import { afterEach, describe, expect, inject, test } from "vitest";
import { lastAssistant, type PiEvent, piLines, textOf } from "./support/pi-driver.js";
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
    // The reset's own time, with its day when that is not today (UTC): the test runs at any hour.
    const at = new Date(resetsAt * 1000).toISOString();
    const day = at.slice(0, 10) === new Date().toISOString().slice(0, 10) ? "" : `${at.slice(0, 10)} `;
    const reset = new RegExp(`resets ${day}${at.slice(11, 16)} UTC \\(in (2h 0m|1h 59m)\\)`);
    expect(statusLines(pi.events())).toEqual([
      [
        "claude-code",
        expect.stringMatching(new RegExp(`^Claude Code: 91% of 5-hour limit used · ${reset.source}$`)),
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
        expect.stringMatching(new RegExp(`^Claude Code: 5-hour limit reached · ${reset.source}$`)),
      ],
    ]);
    scenario.expectQuiescent();
  });
});
