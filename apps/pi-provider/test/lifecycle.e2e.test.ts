import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { textReply } from "@bridgeworks/model-double";
import { afterEach, describe, expect, inject, test } from "vitest";
import {
  appDir,
  claudeProcessesOf,
  conversationOf,
  lastAssistant,
  messagesOf,
  modelRequests,
  type PiEvent,
  type PiProcess,
  piLines,
  textOf,
  toolResultBlock,
} from "./support/pi-driver.js";
import { compactionScript, Scenario } from "./support/scenario.js";

let scenario: Scenario | undefined;
afterEach(async () => {
  await scenario?.dispose();
  scenario = undefined;
});

const bash = { endsWith: "__bash" };

// A 2x2 red PNG.
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMDAAAANHQEDasKb6QAAAABJRU5ErkJggg==";

async function noClaudeLeft(pi: PiProcess): Promise<number[]> {
  const deadline = Date.now() + 10_000;
  let left = claudeProcessesOf(pi);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    left = claudeProcessesOf(pi);
  }
  return left;
}

/** Pi's auto-retry runs after the failed run's `agent_end`: wait for the retry's own end. */
async function retriedTurn(pi: PiProcess, message: string): Promise<PiEvent[]> {
  const from = pi.events().length;
  pi.prompt(message);
  const retryEnd = await pi.waitFor((event) => event.type === "auto_retry_end", 60_000, from);
  const index = pi.events().indexOf(retryEnd);
  const lastEnd = pi
    .events()
    .slice(index)
    .find((event) => event.type === "agent_end");
  if (!lastEnd) await pi.waitForAgentEnd(index);
  return pi.events().slice(from);
}

function handlersWaitingAfterAbort(scenario: Scenario): unknown[] {
  // Every handler that waited was answered: resolved, failed (aborted) or cancelled.
  const diag = scenario.diag();
  const waiting = new Set<string>();
  for (const record of diag) {
    if (record.type !== "tool_call_ledger_transition") continue;
    const id = String(record.toolCallId);
    if (record.handlerWaiting) waiting.add(id);
    else waiting.delete(id);
  }
  return [...waiting];
}

describe.each(piLines(inject("node24")))("$name: lifecycle", (line) => {
  test("abort while a tool runs: aborted error, no Claude Code left, no handler waiting, next prompt works", async () => {
    scenario = await Scenario.start({
      steps: [
        {
          match: { lastUserTextIncludes: "[slow]" },
          response: {
            events: [{ type: "tool_use", id: "toolu_slow", nameFrom: bash, input: { command: "sleep 30" } }],
          },
        },
        textReply("[after]", "AFTER ABORT"),
      ],
    });
    const pi = scenario.pi(line);
    const from = pi.events().length;
    pi.prompt("[slow] run it");
    await pi.waitFor((event) => event.type === "tool_execution_start", 60_000, from);
    expect(claudeProcessesOf(pi).length).toBeGreaterThan(0);
    pi.send({ type: "abort" });
    await pi.waitForAgentEnd(from);
    const run = pi.events().slice(from);
    expect(
      run.some((event) => (event.message as { stopReason?: string } | undefined)?.stopReason === "aborted"),
    ).toBe(true);
    expect(await noClaudeLeft(pi)).toEqual([]);
    expect(handlersWaitingAfterAbort(scenario)).toEqual([]);

    const next = await scenario.turn(pi, "[after] hello again");
    expect(textOf(lastAssistant(next))).toBe("AFTER ABORT");
    scenario.expectQuiescent();
  });

  test("abort while the model streams: aborted error, no Claude Code left, next prompt works", async () => {
    scenario = await Scenario.start({
      steps: [
        {
          match: { lastUserTextIncludes: "[stream]" },
          response: { events: [{ type: "text", text: "streaming part" }, { type: "stall" }] },
        },
        textReply("[after]", "AFTER STREAM ABORT"),
      ],
    });
    const pi = scenario.pi(line);
    const from = await pi.abortWhileStreaming("[stream] talk");
    expect(lastAssistant(pi.events().slice(from))?.stopReason).toBe("aborted");
    expect(await noClaudeLeft(pi)).toEqual([]);

    const next = await scenario.turn(pi, "[after] hello again");
    expect(textOf(lastAssistant(next))).toBe("AFTER STREAM ABORT");
    scenario.expectQuiescent();
  });

  test.each([
    { status: 429, message: "rate limited by the double" },
    { status: 529, message: "overloaded double" },
  ])("HTTP $status: Pi reports a retryable error and retries", async ({ status, message }) => {
    scenario = await Scenario.start({
      steps: [
        { response: { error: { status, message, retryAfter: 1 } } },
        { response: { events: [{ type: "text", text: `RECOVERED FROM ${status}` }] } },
      ],
    });
    const pi = scenario.pi(line);
    const events = await retriedTurn(pi, "hello");
    const retry = events.find((event) => event.type === "auto_retry_start");
    expect(retry).toBeDefined();
    expect(String(retry?.errorMessage)).toMatch(status === 429 ? /rate limit|429/i : /overloaded/i);
    expect(textOf(lastAssistant(events))).toBe(`RECOVERED FROM ${status}`);
    scenario.expectQuiescent();
  });

  test("a stream that opens and stays silent: a retryable idle error within the timeout", async () => {
    scenario = await Scenario.start({
      steps: [
        { response: { events: [{ type: "stall" }] } },
        { response: { events: [{ type: "text", text: "AFTER STALL" }] } },
      ],
    });
    const pi = scenario.pi(line, { env: { CLAUDE_BRIDGE_STREAM_IDLE_TIMEOUT: "3s" } });
    const started = Date.now();
    const events = await retriedTurn(pi, "hello");
    const retry = events.find((event) => event.type === "auto_retry_start");
    expect(String(retry?.errorMessage)).toMatch(/idle timeout after 3s/);
    const stall = scenario.diag().find((record) => record.type === "stream_idle_timeout");
    expect(stall?.timeoutMs).toBe(3000);
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(textOf(lastAssistant(events))).toBe("AFTER STALL");
    scenario.expectQuiescent();
  });

  test("a second prompt resumes the same Claude session: history grows by exactly the new turn", async () => {
    scenario = await Scenario.start({
      steps: [textReply("[one]", "FIRST ANSWER"), textReply("[two]", "SECOND ANSWER")],
    });
    const pi = scenario.pi(line);
    await scenario.turn(pi, "[one] first question");
    const second = await scenario.turn(pi, "[two] second question");
    expect(textOf(lastAssistant(second))).toBe("SECOND ANSWER");

    const [first, next] = modelRequests(scenario.double);
    const before = conversationOf(first?.body);
    const after = conversationOf(next?.body);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length)).toEqual([
      { role: "assistant", text: "FIRST ANSWER" },
      { role: "user", text: expect.stringContaining("[two] second question") },
    ]);
    expect(scenario.diag().filter((record) => record.type === "claude_query_started")).toHaveLength(1);
    scenario.expectQuiescent();
  });

  test("after an aborted turn the next prompt resumes the Claude session from the last completed turn", async () => {
    scenario = await Scenario.start({
      steps: [
        textReply("[one]", "FIRST ANSWER"),
        {
          match: { lastUserTextIncludes: "[stream]" },
          response: { events: [{ type: "text", text: "cut short" }, { type: "stall" }] },
        },
        textReply("[three]", "THIRD ANSWER"),
      ],
    });
    const pi = scenario.pi(line);
    await scenario.turn(pi, "[one] first question");
    await pi.abortWhileStreaming("[stream] talk");
    const third = await scenario.turn(pi, "[three] third question");
    expect(textOf(lastAssistant(third))).toBe("THIRD ANSWER");

    const requests = modelRequests(scenario.double);
    const last = requests.at(-1)!;
    const texts = messagesOf(last.body).map((message) =>
      typeof message.content === "string"
        ? message.content
        : message.content.map((b) => String(b.text ?? b.type)).join(""),
    );
    // Claude's own transcript up to the completed turn (never re-sent as text), then the user
    // messages Pi holds after it: the aborted prompt and the new one. The cut-short reply is gone.
    expect(texts.filter((text) => text.includes("[one] first question"))).toHaveLength(1);
    expect(texts.filter((text) => text === "FIRST ANSWER")).toHaveLength(1);
    expect(texts.some((text) => text.includes("cut short"))).toBe(false);
    expect(texts.at(-1)).toContain("[stream] talk");
    expect(texts.at(-1)).toContain("[three] third question");
    const starts = scenario.diag().filter((record) => record.type === "claude_query_started");
    expect(starts.at(-1)).toMatchObject({ resumed: true, rewound: true });
    scenario.expectQuiescent();
  });

  test("a Pi history another provider answered is told to a fresh Claude session as a transcript; the next prompt continues that session", async () => {
    scenario = await Scenario.start({
      steps: [
        textReply("[other]", "OTHER PROVIDER ANSWER"),
        textReply("[claude]", "CLAUDE FIRST ANSWER"),
        textReply("[again]", "CLAUDE SECOND ANSWER"),
      ],
    });
    // The first turn goes through Pi's own Anthropic client: models.json's `double` provider
    // (createIsolatedEnvironment writes it, pointed at the same double, model claude-sonnet-4-5).
    const pi = scenario.pi(line, { provider: "double", model: "claude-sonnet-4-5" });
    const other = await scenario.turn(pi, "[other] first question");
    expect(lastAssistant(other)).toMatchObject({ provider: "double", stopReason: "stop" });
    expect(textOf(lastAssistant(other))).toBe("OTHER PROVIDER ANSWER");

    const switched = await pi.call({ type: "set_model", provider: "claude-code", modelId: "sonnet" });
    expect(switched.success, JSON.stringify(switched)).toBe(true);
    const first = await scenario.turn(pi, "[claude] second question");
    expect(lastAssistant(first)).toMatchObject({ provider: "claude-code", stopReason: "stop" });
    expect(textOf(lastAssistant(first))).toBe("CLAUDE FIRST ANSWER");
    const second = await scenario.turn(pi, "[again] third question");
    expect(textOf(lastAssistant(second))).toBe("CLAUDE SECOND ANSWER");

    const requests = modelRequests(scenario.double);
    expect(requests).toHaveLength(3);
    const [fromPi, told, resumed] = requests;
    expect(fromPi!.headers["user-agent"]).not.toMatch(/^claude-cli\//);
    expect(told!.headers["user-agent"]).toMatch(/^claude-cli\//);
    // Claude's first request: a fresh conversation of one user message (besides Claude Code's own
    // system context) holding the earlier turns as a transcript, then the new prompt.
    const toldTurns = messagesOf(told!.body).filter((message) => message.role !== "system");
    expect(toldTurns.map((message) => message.role)).toEqual(["user"]);
    const blocks = toldTurns[0]!.content as Array<{ type: string; text?: string }>;
    expect(blocks.map((block) => block.type)).toEqual(["text", "text"]);
    expect(blocks[0]!.text).toMatch(
      /^<conversation_so_far>\n\[user\]\n\[other\] first question\n\[assistant\]\nOTHER PROVIDER ANSWER\n<\/conversation_so_far>$/,
    );
    expect(blocks[1]!.text).toBe("[claude] second question");
    // Selecting claude-code started one query ahead of the prompt, on no Claude session; the prompt
    // told it Pi's three messages (the request above).
    const starts = scenario.diag().filter((record) => record.type === "claude_query_started");
    expect(starts).toEqual([expect.objectContaining({ resumed: false, rewound: false, warm: true })]);

    // The next prompt continues that Claude session: history grows by exactly the new turn, and
    // the transcript is not told again.
    const before = conversationOf(told!.body);
    const after = conversationOf(resumed!.body);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length)).toEqual([
      { role: "assistant", text: "CLAUDE FIRST ANSWER" },
      { role: "user", text: "[again] third question" },
    ]);
    expect(JSON.stringify(messagesOf(resumed!.body)).split("OTHER PROVIDER ANSWER")).toHaveLength(2);
    scenario.expectQuiescent();
  });

  test("after Pi compacts (a split turn, two summaries), the compacted history is told to a fresh Claude session; the next prompt continues it", async () => {
    scenario = await Scenario.start(compactionScript());
    scenario.keepAlmostNothingAtCompaction();
    const pi = scenario.pi(line);
    await scenario.turn(pi, "[one] first question");
    await scenario.turn(pi, "[two] second question");
    const compacted = await pi.call({ type: "compact" }, 90_000);
    expect(compacted.success, JSON.stringify(compacted)).toBe(true);
    const third = await scenario.turn(pi, "[three] third question");
    expect(textOf(lastAssistant(third))).toBe("THREE ANSWER");
    const fourth = await scenario.turn(pi, "[four] fourth question");
    expect(textOf(lastAssistant(fourth))).toBe("FOUR ANSWER");

    const answered = (text: string) =>
      modelRequests(scenario!.double).filter((request) =>
        JSON.stringify(
          messagesOf(request.body)
            .filter((message) => message.role !== "system")
            .at(-1),
        ).includes(text),
      );
    const [told] = answered("[three] third question");
    const [next] = answered("[four] fourth question");
    // Claude's first request after the compaction: a fresh conversation of one user message holding
    // what Pi kept (the summary, then the kept end of the split turn) as a transcript; nothing Pi
    // compacted away.
    const toldTurns = messagesOf(told!.body).filter((message) => message.role !== "system");
    expect(toldTurns.map((message) => message.role)).toEqual(["user"]);
    const blocks = toldTurns[0]!.content as Array<{ type: string; text?: string }>;
    expect(blocks.map((block) => block.type)).toEqual(["text", "text"]);
    expect(blocks[0]!.text).toMatch(
      /^<conversation_so_far>\n\[user\]\n[\s\S]*HISTORY SUMMARY[\s\S]*TURN PREFIX SUMMARY[\s\S]*\n\[assistant\]\nTWO ANSWER\n<\/conversation_so_far>$/,
    );
    for (const gone of ["[one] first question", "ONE ANSWER", "[two] second question"])
      expect(blocks[0]!.text).not.toContain(gone);
    expect(blocks[1]!.text).toBe("[three] third question");
    const starts = scenario.diag().filter((record) => record.type === "claude_query_started");
    const conversation = starts[0]!.sessionId;
    // Each summary had a Claude Code of its own; the conversation's query started twice: ahead of
    // [one], and fresh after the compaction, telling Pi's three messages.
    expect(starts.filter((record) => record.sessionId !== conversation)).toHaveLength(2);
    expect(starts.filter((record) => record.sessionId === conversation)).toEqual([
      expect.objectContaining({ resumed: false, replayedMessages: 0, warm: true }),
      expect.objectContaining({ resumed: false, rewound: false, replayedMessages: 3 }),
    ]);

    // The next prompt continues that Claude session: history grows by exactly the new turn.
    const before = conversationOf(told!.body);
    const after = conversationOf(next!.body);
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length)).toEqual([
      { role: "assistant", text: "THREE ANSWER" },
      { role: "user", text: "[four] fourth question" },
    ]);
    scenario.expectQuiescent();
  });

  test("images in the prompt and in a tool result reach the double as image blocks", async () => {
    scenario = await Scenario.start({
      steps: [
        {
          match: { lastUserTextIncludes: "[image]" },
          response: {
            events: [
              {
                type: "tool_use",
                id: "toolu_img",
                nameFrom: { endsWith: "__read" },
                input: { path: "red.png" },
              },
            ],
          },
        },
        { match: { toolResultFor: "toolu_img" }, response: { events: [{ type: "text", text: "saw it" }] } },
      ],
    });
    writeFileSync(join(scenario.environment.workspace, "red.png"), Buffer.from(PNG, "base64"));
    const pi = scenario.pi(line);
    await scenario.turn(pi, "[image] look at this", [{ type: "image", data: PNG, mimeType: "image/png" }]);

    const [first] = modelRequests(scenario.double);
    const promptImages = messagesOf(first?.body)
      .filter((message) => message.role === "user")
      .flatMap((message) => (Array.isArray(message.content) ? message.content : []))
      .filter((block) => block.type === "image");
    expect(promptImages).toHaveLength(1);
    expect(promptImages[0]).toMatchObject({ source: { type: "base64", media_type: "image/png" } });

    const followUp = scenario.double.requests.find((request) => toolResultBlock(request.body, "toolu_img"));
    const resultContent = toolResultBlock(followUp?.body, "toolu_img")?.content as Array<{ type: string }>;
    expect(resultContent.some((block) => block.type === "image")).toBe(true);
    scenario.expectQuiescent();
  });

  test("thinking deltas map to thinking events; usage on the final message equals the double's", async () => {
    const usage = {
      input_tokens: 1234,
      output_tokens: 56,
      cache_read_input_tokens: 789,
      cache_creation_input_tokens: 10,
    };
    scenario = await Scenario.start({
      steps: [
        {
          response: {
            events: [
              { type: "thinking", thinking: "pondering deeply", chunks: 3 },
              { type: "text", text: "THOUGHT THROUGH" },
            ],
            usage,
          },
        },
      ],
    });
    const pi = scenario.pi(line);
    const events = await scenario.turn(pi, "think");
    const kinds = events
      .filter((event) => event.type === "message_update")
      .map((event) => (event.assistantMessageEvent as { type: string }).type);
    expect(kinds).toContain("thinking_start");
    expect(kinds.filter((kind) => kind === "thinking_delta").length).toBeGreaterThanOrEqual(2);
    expect(kinds).toContain("thinking_end");
    const final = lastAssistant(events) as {
      content: Array<{ type: string; thinking?: string }>;
      usage: Record<string, number>;
    };
    expect(final.content.find((part) => part.type === "thinking")?.thinking).toBe("pondering deeply");
    expect(final.usage).toMatchObject({
      input: 1234,
      output: 56,
      cacheRead: 789,
      cacheWrite: 10,
      totalTokens: 2089,
    });
    expect((final.usage.cost as unknown as { total: number }).total).toBeGreaterThan(0);
    scenario.expectQuiescent();
  });

  test("CLAUDE_BRIDGE_CLAUDE_PATH picks the Claude Code executable; the environment reaches it", async () => {
    scenario = await Scenario.start({
      steps: [{ response: { events: [{ type: "text", text: "VIA WRAPPER" }] } }],
    });
    const marker = join(scenario.environment.root, "wrapper-ran");
    const wrapper = join(scenario.environment.root, "claude-wrapper.sh");
    writeFileSync(
      wrapper,
      `#!/bin/sh\nprintf '%s' "$BRIDGE_MARKER_VALUE" > '${marker}'\nexec claude "$@"\n`,
      { mode: 0o755 },
    );
    const pi = scenario.pi(line, {
      env: { CLAUDE_BRIDGE_CLAUDE_PATH: wrapper, BRIDGE_MARKER_VALUE: "from-pi-env" },
    });
    const events = await scenario.turn(pi, "hello");
    expect(textOf(lastAssistant(events))).toBe("VIA WRAPPER");
    expect(readFileSync(marker, "utf8")).toBe("from-pi-env");
    scenario.expectQuiescent();
  });

  test("pi install <path> loads the package: the provider's models are listed", async () => {
    scenario = await Scenario.start({ steps: [] });
    const env = { ...scenario.environment.env, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1" };
    const run = (args: string[]) => {
      const result = spawnSync(line.node, [line.cli, ...args], {
        env,
        cwd: scenario!.environment.workspace,
        encoding: "utf8",
      });
      expect(result.status, result.stderr).toBe(0);
      // Pi 0.73 prints the model table on stderr, 1.x on stdout.
      return result.stdout + result.stderr;
    };
    run(["install", appDir]);
    const listed = run(["--list-models", "claude-code"]);
    for (const model of ["sonnet", "opus", "haiku"])
      expect(listed).toMatch(new RegExp(`claude-code\\s+${model}\\b`));
  });
});
