import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, test } from "vitest";
import { z } from "zod";
import * as inputs from "../src/tool-arguments.js";
import {
  eventually,
  type RunningBridge,
  runBee,
  startBridge,
  startFakeClaude,
  textOf,
  useBridgeTestScope,
} from "./helpers.js";

const scope = useBridgeTestScope();

async function bridge(agent = "alpha", extraEnv: Record<string, string> = {}): Promise<RunningBridge> {
  return startBridge({
    tracker: scope.tracker,
    env: { ...scope.sandbox.env, BEE_AGENT: agent, ...extraEnv },
  });
}

async function call(running: RunningBridge, name: string, args: Record<string, unknown> = {}) {
  return running.client.callTool({ name, arguments: args });
}

function structured<T>(value: unknown): T {
  const result = value as { structuredContent?: unknown; isError?: unknown };
  expect(result.isError, textOf(result)).toBeFalsy();
  expect(JSON.parse(textOf(result))).toEqual(result.structuredContent);
  return result.structuredContent as T;
}

interface Page {
  records: Array<{ id: string; body: string; state: string }>;
  cursor: string;
}

describe("tools/list and argument rules", () => {
  test("bee_wait_action shows its bounds, default and alwaysLoad; every tool is always loaded", async () => {
    const running = await bridge();
    const { tools } = await running.client.listTools();
    const wait = tools.find((tool) => tool.name === "bee_wait_action");
    expect(wait?.inputSchema.properties?.timeoutSeconds).toEqual({
      type: "integer",
      minimum: 1,
      maximum: 60,
      default: 45,
    });
    expect(wait?.outputSchema?.required).toEqual(["records", "cursor"]);
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      "bee_claim",
      "bee_claim_next",
      "bee_complete",
      "bee_decide",
      "bee_list",
      "bee_post",
      "bee_session_event",
      "bee_wait_action",
      "bee_wait_for",
      "bee_whoami",
    ]);
    for (const tool of tools) expect(tool._meta?.["anthropic/alwaysLoad"]).toBe(true);
  });

  test("every tool lists the JSON Schema of the zod schema that validates its arguments", async () => {
    const validators: Record<string, z.ZodType> = {
      bee_wait_action: inputs.WaitActionInput,
      bee_list: inputs.ListInput,
      bee_post: inputs.PostInput,
      bee_wait_for: inputs.WaitForInput,
      bee_claim: inputs.ClaimInput,
      bee_claim_next: inputs.ClaimNextInput,
      bee_complete: inputs.CompleteInput,
      bee_decide: inputs.DecideInput,
      bee_whoami: inputs.WhoamiInput,
      bee_session_event: inputs.SessionEventToolInput,
    };
    const running = await bridge();
    const { tools } = await running.client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(Object.keys(validators).sort());
    for (const tool of tools) {
      const { $schema: _dialect, ...validator } = z.toJSONSchema(validators[tool.name] as z.ZodType, {
        io: "input",
      });
      expect(tool.inputSchema, tool.name).toEqual(validator);
    }
  });

  test.each([
    [0, "timeoutSeconds: must be at least 1"],
    [61, "timeoutSeconds: must be at most 60"],
    [1.5, "timeoutSeconds: must be an integer, got the number 1.5"],
    ["30", 'timeoutSeconds: must be a number, got the string "30"'],
  ])("timeoutSeconds %j is refused as a tool error naming the argument", async (value, message) => {
    const running = await bridge();
    const result = await call(running, "bee_wait_action", { timeoutSeconds: value });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(message);
  });

  test("null counts as absent, and other arguments are refused by name", async () => {
    const running = await bridge();
    const nulls = await call(running, "bee_wait_action", { timeoutSeconds: 1, cursor: null });
    expect(structured<Page>(nulls).records).toEqual([]);
    const badCursor = await call(running, "bee_wait_action", { timeoutSeconds: 1, cursor: 5 });
    expect(textOf(badCursor)).toMatch(/^cursor: must be a string/);
    const unknown = await call(running, "bee_list", { since: null, sinse: "x" });
    expect(textOf(unknown)).toBe("sinse: is not an argument of this tool");
    const badPost = await call(running, "bee_post", { to: "a b", body: "x" });
    expect(textOf(badPost)).toBe("to: must be an agent name, * or human:<name>");
    const badClaimNext = await call(running, "bee_claim_next", { actionId: "act_0000000000000000" });
    expect([badClaimNext.isError, textOf(badClaimNext)]).toEqual([
      true,
      "actionId: is not an argument of this tool",
    ]);
  });
});

describe("waiting", () => {
  test("a wait with a progress token gets rising progress, then the board's resume cursor on timeout", async () => {
    const running = await bridge("alpha", { BEE_PROGRESS_INTERVAL_MS: "500" });
    const start = structured<Page>(await call(running, "bee_list"));
    const progress: Array<{ progress: number; total?: number | undefined }> = [];
    const result = await running.client.request(
      {
        method: "tools/call",
        params: { name: "bee_wait_action", arguments: { timeoutSeconds: 2, cursor: start.cursor } },
      },
      CallToolResultSchema,
      { onprogress: (params) => progress.push(params) },
    );
    const page = structured<Page>(result);
    expect(page.records).toEqual([]);
    expect(typeof page.cursor).toBe("string");
    expect(progress.length).toBeGreaterThanOrEqual(2);
    for (let index = 1; index < progress.length; index++) {
      expect(progress[index]!.progress).toBeGreaterThan(progress[index - 1]!.progress);
    }
    expect(progress[0]!.total).toBe(2);
  });

  test("a wait without a progress token gets no notifications", async () => {
    const running = await bridge("alpha", { BEE_PROGRESS_INTERVAL_MS: "200" });
    const result = await call(running, "bee_wait_action", { timeoutSeconds: 1 });
    expect(structured<Page>(result).records).toEqual([]);
    const progressLines = running.transport
      .rawStdout()
      .split("\n")
      .filter((line) => line.includes("notifications/progress"));
    expect(progressLines).toEqual([]);
  });

  test("an action posted during the wait ends it: by this bridge, by another bridge, by the bee CLI", async () => {
    const alpha = await bridge("alpha");
    const beta = await bridge("beta");
    const posters: Array<[string, (body: string) => Promise<unknown>]> = [
      ["this bridge", (body) => call(alpha, "bee_post", { to: "alpha", body })],
      ["another bridge", (body) => call(beta, "bee_post", { to: "alpha", body })],
      ["the CLI", (body) => runBee(["post", "--to", "alpha", body], scope.sandbox.env)],
    ];
    let cursor = structured<Page>(await call(alpha, "bee_wait_action", { timeoutSeconds: 1 })).cursor;
    for (const [who, post] of posters) {
      // The wait goes through the client's own queue, so the post can be sent while it is pending.
      const waiting = alpha.client.callTool(
        { name: "bee_wait_action", arguments: { timeoutSeconds: 30, cursor } },
        undefined,
        { timeout: 60_000 },
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      await post(`from ${who}`);
      const page = structured<Page>(await waiting);
      expect(page.records.map((record) => record.body)).toEqual([`from ${who}`]);
      cursor = page.cursor;
    }
  });
});

describe("cancellation and claims", () => {
  test("a cancelled wait stops at once and consumes nothing", async () => {
    const running = await bridge("alpha");
    const { cursor } = structured<Page>(await call(running, "bee_list"));
    const controller = new AbortController();
    const waiting = running.client.callTool(
      { name: "bee_wait_action", arguments: { timeoutSeconds: 30, cursor } },
      undefined,
      { signal: controller.signal },
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    controller.abort(new Error("user-cancel"));
    await expect(waiting).rejects.toThrow("user-cancel");
    // The bridge stopped the board wait: the cancel reaches it as notifications/cancelled.
    await eventually(() => running.process.stderr().includes('"tool call cancelled"'));

    await runBee(["post", "--to", "*", "still here"], scope.sandbox.env);
    const page = structured<Page>(await call(running, "bee_wait_action", { timeoutSeconds: 5, cursor }));
    expect(page.records.map((record) => record.body)).toEqual(["still here"]);
  });

  test("sixteen claimers (bridges and CLI processes) race for one action and exactly one wins", async () => {
    const posted = await runBee(["post", "--to", "*", "--json", "race"], scope.sandbox.env);
    const { id } = JSON.parse(posted.stdout) as { id: string };
    const bridges = await Promise.all(Array.from({ length: 8 }, (_, index) => bridge(`racer${index}`)));
    const outcomes = await Promise.all([
      ...bridges.map(async (running) => {
        const result = await call(running, "bee_claim", { actionId: id });
        return structured<{ outcome: string }>(result).outcome;
      }),
      ...Array.from({ length: 8 }, async (_, index) => {
        const result = await runBee(["claim", id, "--as", `cli${index}`, "--json"], scope.sandbox.env);
        expect([0, 3], result.stderr).toContain(result.code);
        return (JSON.parse(result.stdout) as { outcome: string }).outcome;
      }),
    ]);
    expect(outcomes.filter((outcome) => outcome === "claimed")).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome === "taken")).toHaveLength(15);
  });
});

describe("bee_claim_next", () => {
  interface ClaimNext {
    outcome: string;
    record?: { id: string; body: string; state: string; claimedBy: string };
  }

  test("claims the oldest action addressed to the agent or to everyone, then answers none", async () => {
    const alpha = await bridge("alpha");
    const me = structured<{ identity: string }>(await call(alpha, "bee_whoami")).identity;
    for (const [to, body] of [
      ["beta", "for beta"],
      ["*", "first"],
      ["alpha", "second"],
    ]) {
      await runBee(["post", "--to", to!, body!], scope.sandbox.env);
    }
    const claims = [
      structured<ClaimNext>(await call(alpha, "bee_claim_next")),
      structured<ClaimNext>(await call(alpha, "bee_claim_next", {})),
    ];
    expect(claims.map((claim) => [claim.outcome, claim.record?.body, claim.record?.claimedBy])).toEqual([
      ["claimed", "first", me],
      ["claimed", "second", me],
    ]);
    expect(structured<ClaimNext>(await call(alpha, "bee_claim_next"))).toEqual({ outcome: "none" });
    const open = structured<Page>(await call(alpha, "bee_list")).records.filter((r) => r.state === "open");
    expect(open.map((record) => record.body)).toEqual(["for beta"]);
  });

  test("four bridges claiming next until none claim every action exactly once", async () => {
    const ids: string[] = [];
    for (let index = 0; index < 24; index++) {
      const posted = await runBee(["post", "--to", "*", "--json", `job ${index}`], scope.sandbox.env);
      ids.push((JSON.parse(posted.stdout) as { id: string }).id);
    }
    const bridges = await Promise.all(Array.from({ length: 4 }, (_, index) => bridge(`worker${index}`)));
    const won = await Promise.all(
      bridges.map(async (running) => {
        const mine: string[] = [];
        for (;;) {
          const outcome = structured<ClaimNext>(await call(running, "bee_claim_next"));
          if (outcome.outcome === "none") return mine;
          mine.push(outcome.record!.id);
        }
      }),
    );
    expect(won.flat().sort()).toEqual([...ids].sort());
  });
});

describe("stdout is the protocol", () => {
  test("every byte on stdout is JSON-RPC during a full session with debug logging", async () => {
    const fakeClaude = startFakeClaude(scope.tracker);
    const running = await bridge("alpha", {
      BEE_LOG_LEVEL: "debug",
      BEE_PROGRESS_INTERVAL_MS: "200",
      CLAUDE_PID: String(fakeClaude.pid),
    });
    await running.client.listTools();
    await call(running, "bee_whoami");
    const posted = structured<{ id: string }>(await call(running, "bee_post", { to: "alpha", body: "work" }));
    await running.client.request(
      { method: "tools/call", params: { name: "bee_wait_action", arguments: { timeoutSeconds: 1 } } },
      CallToolResultSchema,
      { onprogress: () => {} },
    );
    await call(running, "bee_claim", { actionId: posted.id });
    await call(running, "bee_complete", { actionId: posted.id, result: "done" });
    await call(running, "bee_claim_next");
    await call(running, "bee_session_event", { session_id: "s-2", source: "clear" });
    await call(running, "bee_wait_action", { timeoutSeconds: 0 });
    await running.client.close();
    await running.process.exited;

    expect(running.process.stderr()).toContain('"level":"debug"');
    const raw = running.transport.rawStdout();
    expect(raw.endsWith("\n")).toBe(true);
    for (const line of raw.slice(0, -1).split("\n")) {
      const message = JSON.parse(line) as { jsonrpc?: string };
      expect(message.jsonrpc).toBe("2.0");
    }
  });
});

describe("an unavailable board", () => {
  test("gets a tool error saying to retry with the same cursor, and the bridge keeps serving", async () => {
    // The board's parent is a regular file, so the board cannot be opened.
    writeFileSync(join(scope.sandbox.root, "not-a-dir"), "");
    const running = await bridge("alpha", { BEE_BOARD: join(scope.sandbox.root, "not-a-dir", "board.db") });
    const result = await call(running, "bee_wait_action", { timeoutSeconds: 1 });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(/^board unavailable: .*; retry with the same cursor$/);
    expect((await running.client.listTools()).tools.length).toBe(10);
  });
});
