import type { Options, Query, SDKMessage, SDKUserMessage } from "@anthropic-ai/claude-agent-sdk";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { describe, expect, test } from "vitest";
import type { PiModel, PiStreamOptions, UserMessage } from "../src/pi-types.js";
import { createClaudeCodeProvider } from "../src/provider.js";

interface FakeRun {
  options: Options;
  prompts: SDKUserMessage[];
  closed: boolean;
}

/** A Claude Code stand-in: answers every user message (once `gate` opens) with one text reply and a result. */
function fakeClaudeCode(runs: FakeRun[], gate: () => Promise<void> = async () => {}, startupMs = 0) {
  return ({
    prompt,
    options,
  }: {
    prompt: AsyncIterable<SDKUserMessage> | string;
    options?: Options;
  }): Query => {
    const run: FakeRun = { options: options ?? {}, prompts: [], closed: false };
    runs.push(run);
    const sessionId = options?.resume ?? `session-${runs.length}`;
    // Claude Code says nothing until it has started.
    const started = new Promise<void>((resolve) => setTimeout(resolve, startupMs));
    async function* messages(): AsyncGenerator<SDKMessage, void> {
      await started;
      yield { type: "system", subtype: "init", session_id: sessionId } as unknown as SDKMessage;
      for await (const user of prompt as AsyncIterable<SDKUserMessage>) {
        if (run.closed) return;
        run.prompts.push(user);
        await gate();
        const event = (e: unknown) =>
          ({ type: "stream_event", parent_tool_use_id: null, event: e }) as unknown as SDKMessage;
        yield event({ type: "message_start", message: { usage: { input_tokens: 10, output_tokens: 0 } } });
        yield event({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
        yield event({
          type: "content_block_delta",
          index: 0,
          delta: { type: "text_delta", text: `reply ${run.prompts.length}` },
        });
        yield event({ type: "content_block_stop", index: 0 });
        yield event({
          type: "message_delta",
          delta: { stop_reason: "end_turn" },
          usage: { output_tokens: 3 },
        });
        yield event({ type: "message_stop" });
        yield {
          type: "assistant",
          parent_tool_use_id: null,
          uuid: `uuid-${runs.length}-${run.prompts.length}`,
          message: { content: [] },
        } as unknown as SDKMessage;
        yield { type: "result", subtype: "success", is_error: false, result: "" } as unknown as SDKMessage;
      }
    }
    const generator = messages();
    return Object.assign(generator, {
      initializationResult: () => started,
      interrupt: async () => undefined,
      close: () => {
        run.closed = true;
      },
    }) as unknown as Query;
  };
}

const model: PiModel = {
  id: "sonnet",
  api: "claude-code-agent-sdk",
  provider: "claude-code",
  cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
};
const user = (text: string, timestamp: number): UserMessage => ({ role: "user", content: text, timestamp });

function setup(gate?: () => Promise<void>) {
  const runs: FakeRun[] = [];
  const provider = createClaudeCodeProvider({
    env: { CLAUDE_BRIDGE_STREAM_IDLE_TIMEOUT: "0" },
    cwd: "/",
    diag: () => {},
    runQuery: fakeClaudeCode(runs, gate),
  });
  const ask = (
    messages: UserMessage[] | Parameters<typeof provider.registration.streamSimple>[1]["messages"],
    options: PiStreamOptions,
  ) => provider.registration.streamSimple(model, { systemPrompt: "sys", messages }, options).result();
  return { runs, provider, ask };
}

describe("one Claude Code query per Pi session", () => {
  test("a second prompt goes to the same query; usage and cost come from the stream", async () => {
    const { runs, provider, ask } = setup();
    const first = await ask([user("one", 1)], { sessionId: "s" });
    expect(first.content).toEqual([{ type: "text", text: "reply 1" }]);
    expect(first.usage).toMatchObject({ input: 10, output: 3, totalTokens: 13 });
    expect(first.usage.cost.total).toBeCloseTo((10 * 3 + 3 * 15) / 1e6);
    await ask([user("one", 1), first, user("two", 3)], { sessionId: "s" });
    expect(runs).toHaveLength(1);
    expect(runs[0]!.prompts.map((prompt) => prompt.message.content)).toEqual([
      [{ type: "text", text: "one" }],
      [{ type: "text", text: "two" }],
    ]);
    expect(runs[0]!.options).toMatchObject({
      permissionMode: "dontAsk",
      allowedTools: ["mcp__pi__*"],
      tools: [],
    });
    await provider.dispose();
    expect(runs[0]!.closed).toBe(true);
  });

  test("a changed system prompt restarts Claude Code resuming the same Claude session", async () => {
    const { runs, provider } = setup();
    const first = await provider.registration
      .streamSimple(model, { systemPrompt: "a", messages: [user("one", 1)] }, { sessionId: "s" })
      .result();
    await provider.registration
      .streamSimple(
        model,
        { systemPrompt: "b", messages: [user("one", 1), first, user("two", 3)] },
        { sessionId: "s" },
      )
      .result();
    expect(runs).toHaveLength(2);
    expect(runs[0]!.closed).toBe(true);
    expect(runs[1]!.options.resume).toBe("session-1");
    expect(runs[1]!.prompts.map((prompt) => prompt.message.content)).toEqual([
      [{ type: "text", text: "two" }],
    ]);
    await provider.dispose();
  });

  test("Pi's one-shot requests (cacheRetention none) do not leave Claude Code running", async () => {
    const { runs, provider, ask } = setup();
    await ask([user("summarize", 1)], { sessionId: "oneshot", cacheRetention: "none" });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(runs[0]!.closed).toBe(true);
    await provider.dispose();
  });

  test("two tool-less requests without a session id at once (Pi 0.73's split-turn compaction): one Claude Code each, both answered and closed", async () => {
    const { runs, provider, ask } = setup();
    const [history, prefix] = await Promise.all([
      ask([user("summarize the history", 1)], {}),
      ask([user("summarize the turn prefix", 2)], {}),
    ]);
    expect([history.stopReason, prefix.stopReason]).toEqual(["stop", "stop"]);
    expect(runs.map((run) => run.prompts.map((prompt) => prompt.message.content))).toEqual([
      [[{ type: "text", text: "summarize the history" }]],
      [[{ type: "text", text: "summarize the turn prefix" }]],
    ]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(runs.map((run) => run.closed)).toEqual([true, true]);
    await provider.dispose();
  });

  test("a one-shot request carrying a live conversation's session id leaves that conversation's query alone", async () => {
    const { runs, provider, ask } = setup();
    const first = await ask([user("one", 1)], { sessionId: "s" });
    await ask([user("summarize", 2)], { sessionId: "s", cacheRetention: "none" });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(runs.map((run) => run.closed)).toEqual([false, true]);
    await ask([user("one", 1), first, user("two", 3)], { sessionId: "s" });
    expect(runs).toHaveLength(2);
    expect(runs[0]!.prompts.map((prompt) => prompt.message.content)).toEqual([
      [{ type: "text", text: "one" }],
      [{ type: "text", text: "two" }],
    ]);
    await provider.dispose();
  });
});

describe("a query started ahead of the first prompt", () => {
  const inputs = { model, systemPrompt: "sys", tools: [], reasoning: undefined };

  test("prepare starts Claude Code telling it nothing; the first prompt goes to that query", async () => {
    const { runs, provider, ask } = setup();
    await provider.prepare("s", inputs);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.prompts).toEqual([]);
    await provider.prepare("s", inputs);
    expect(runs).toHaveLength(1);
    const first = await ask([user("one", 1)], { sessionId: "s" });
    expect(first.content).toEqual([{ type: "text", text: "reply 1" }]);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.prompts.map((prompt) => prompt.message.content)).toEqual([
      [{ type: "text", text: "one" }],
    ]);
    await provider.dispose();
    expect(runs[0]!.closed).toBe(true);
  });

  test("a first request with other settings replaces the prepared query", async () => {
    const { runs, provider } = setup();
    await provider.prepare("s", inputs);
    await provider.registration
      .streamSimple(model, { systemPrompt: "another", messages: [user("one", 1)] }, { sessionId: "s" })
      .result();
    expect(runs.map((run) => [run.closed, run.prompts.length])).toEqual([
      [true, 0],
      [false, 1],
    ]);
    await provider.dispose();
  });

  test("CLAUDE_BRIDGE_WARM_START=0 starts Claude Code at the first prompt only; a bad value is named", async () => {
    const runs: FakeRun[] = [];
    const warnings: string[] = [];
    const provider = createClaudeCodeProvider({
      env: { CLAUDE_BRIDGE_STREAM_IDLE_TIMEOUT: "0", CLAUDE_BRIDGE_WARM_START: "0" },
      cwd: "/",
      diag: () => {},
      runQuery: fakeClaudeCode(runs),
    });
    await provider.prepare("s", inputs);
    expect(runs).toEqual([]);
    await provider.dispose();
    createClaudeCodeProvider({
      env: { CLAUDE_BRIDGE_WARM_START: "later" },
      cwd: "/",
      diag: () => {},
      warn: (line) => warnings.push(line),
    });
    expect(warnings).toEqual([
      expect.stringContaining('CLAUDE_BRIDGE_WARM_START must be 0, off, false, 1, on or true; got "later"'),
    ]);
  });

  test("a prompt sent while the query started for a new model still replaces the old one goes to the new query", async () => {
    const { runs, provider, ask } = setup();
    const first = await ask([user("one", 1)], { sessionId: "s" });
    const opus: PiModel = { ...model, id: "opus" };
    const switching = provider.prepare("s", { ...inputs, model: opus });
    const second = await provider.registration
      .streamSimple(
        opus,
        { systemPrompt: "sys", messages: [user("one", 1), first, user("two", 3)] },
        { sessionId: "s" },
      )
      .result();
    await switching;
    expect(second.content).toEqual([{ type: "text", text: "reply 1" }]);
    expect(runs.map((run) => [run.options.model, run.closed, run.prompts.length])).toEqual([
      ["sonnet", true, 1],
      ["opus", false, 1],
    ]);
    await provider.dispose();
  });

  test("Pi leaving claude-code during a run: the run is answered, then Claude Code ends", async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const { runs, provider, ask } = setup(() => gate);
    const answer = ask([user("one", 1)], { sessionId: "s" });
    await new Promise((resolve) => setTimeout(resolve, 10));
    await provider.suspend("s");
    expect(runs[0]!.closed).toBe(false);
    open();
    expect((await answer).content).toEqual([{ type: "text", text: "reply 1" }]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(runs[0]!.closed).toBe(true);
    await provider.dispose();
  });

  test("suspend ends the query; prepare resumes the same Claude session without telling it anything again", async () => {
    const { runs, provider, ask } = setup();
    const first = await ask([user("one", 1)], { sessionId: "s" });
    await provider.suspend("s");
    expect(runs[0]!.closed).toBe(true);
    await provider.prepare("s", inputs);
    expect(runs).toHaveLength(2);
    expect(runs[1]!.options.resume).toBe("session-1");
    await ask([user("one", 1), first, user("two", 3)], { sessionId: "s" });
    expect(runs).toHaveLength(2);
    expect(runs[1]!.prompts.map((prompt) => prompt.message.content)).toEqual([
      [{ type: "text", text: "two" }],
    ]);
    expect(provider.record("s")).toMatchObject({ claudeSessionId: "session-1", checkpoint: { length: 4 } });
    await provider.dispose();
  });
});

describe("a query started by the session Pi replaces (/new), for the next one", () => {
  const inputs = { model, systemPrompt: "sys", tools: [], reasoning: undefined };
  /** Two providers, as Pi's two extension instances of the old and the new session, sharing Claude Code. */
  function twoSessions() {
    const runs: FakeRun[] = [];
    const make = () =>
      createClaudeCodeProvider({
        env: { CLAUDE_BRIDGE_STREAM_IDLE_TIMEOUT: "0" },
        cwd: "/",
        diag: () => {},
        runQuery: fakeClaudeCode(runs),
      });
    return { runs, old: make(), next: make() };
  }

  test("the next session with the same settings adopts it: no second Claude Code, and its first prompt goes there", async () => {
    const { runs, old, next } = twoSessions();
    old.prestartSuccessor(inputs);
    expect(runs).toHaveLength(1);
    await next.prepare("s2", inputs);
    expect(runs).toHaveLength(1);
    const answer = await next.registration
      .streamSimple(model, { systemPrompt: "sys", messages: [user("one", 1)] }, { sessionId: "s2" })
      .result();
    expect(answer.content).toEqual([{ type: "text", text: "reply 1" }]);
    expect(runs.map((run) => [run.closed, run.prompts.length])).toEqual([[false, 1]]);
    await next.dispose();
    expect(runs[0]!.closed).toBe(true);
  });

  test("a next session with other settings ends it and starts its own", async () => {
    const { runs, old, next } = twoSessions();
    old.prestartSuccessor(inputs);
    await next.prepare("s2", { ...inputs, systemPrompt: "another" });
    expect(runs.map((run) => run.closed)).toEqual([true, false]);
    await next.dispose();
  });

  test("with CLAUDE_BRIDGE_WARM_START=0 nothing is started for the next session", async () => {
    const runs: FakeRun[] = [];
    const provider = createClaudeCodeProvider({
      env: { CLAUDE_BRIDGE_STREAM_IDLE_TIMEOUT: "0", CLAUDE_BRIDGE_WARM_START: "0" },
      cwd: "/",
      diag: () => {},
      runQuery: fakeClaudeCode(runs),
    });
    provider.prestartSuccessor(inputs);
    expect(runs).toEqual([]);
  });
});

describe("the idle watchdog and a Claude Code that is still starting", () => {
  test("a first prompt to a Claude Code slower to start than the idle timeout is answered, not failed as a stall", async () => {
    const runs: FakeRun[] = [];
    const records: Array<{ type: string }> = [];
    const provider = createClaudeCodeProvider({
      env: { CLAUDE_BRIDGE_STREAM_IDLE_TIMEOUT: "200ms" },
      cwd: "/",
      diag: (record) => records.push(record),
      runQuery: fakeClaudeCode(runs, undefined, 900),
    });
    const answer = await provider.registration
      .streamSimple(model, { systemPrompt: "sys", messages: [user("one", 1)] }, { sessionId: "s" })
      .result();
    expect(answer.stopReason).toBe("stop");
    expect(answer.content).toEqual([{ type: "text", text: "reply 1" }]);
    expect(records.filter((record) => record.type === "stream_idle_timeout")).toEqual([]);
    await provider.dispose();
  });
});

describe("steering with tool results", () => {
  test("a user message Pi sends with tool results is written to Claude Code before the results are answered", async () => {
    // Claude Code attaches a user message it holds when a tool result arrives to the request that
    // carries the result; one arriving later becomes a turn of its own, which no Pi stream is open for.
    // The Agent SDK writes a streamed user message within microtasks; this stand-in takes many.
    const order: string[] = [];
    const event = (e: unknown) =>
      ({ type: "stream_event", parent_tool_use_id: null, event: e }) as unknown as SDKMessage;
    const runQuery = ({
      prompt,
      options,
    }: {
      prompt: AsyncIterable<SDKUserMessage> | string;
      options?: Options;
    }): Query => {
      const server = (options!.mcpServers!.pi as unknown as { instance: Server }).instance;
      async function* messages(): AsyncGenerator<SDKMessage, void> {
        yield { type: "system", subtype: "init", session_id: "steer" } as unknown as SDKMessage;
        const input = (prompt as AsyncIterable<SDKUserMessage>)[Symbol.asyncIterator]();
        await input.next();
        void (async () => {
          for (;;) {
            const next = await input.next();
            if (next.done) return;
            for (let hop = 0; hop < 100; hop++) await Promise.resolve();
            order.push(`user: ${JSON.stringify(next.value.message.content)}`);
          }
        })();
        const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
        await server.connect(serverSide);
        const client = new Client({ name: "claude-code-stand-in", version: "1.0.0" });
        await client.connect(clientSide);
        yield event({ type: "message_start", message: { usage: { input_tokens: 1, output_tokens: 0 } } });
        yield event({
          type: "content_block_start",
          index: 0,
          content_block: { type: "tool_use", id: "toolu_1", name: "mcp__pi__bash", input: {} },
        });
        yield event({ type: "content_block_stop", index: 0 });
        yield event({
          type: "message_delta",
          delta: { stop_reason: "tool_use" },
          usage: { output_tokens: 1 },
        });
        yield event({ type: "message_stop" });
        const answer = await client.callTool({
          name: "bash",
          arguments: {},
          _meta: { "claudecode/toolUseId": "toolu_1" },
        });
        order.push(`result: ${JSON.stringify(answer.content)}`);
        yield event({ type: "message_start", message: { usage: { input_tokens: 1, output_tokens: 0 } } });
        yield event({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
        yield event({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "done" } });
        yield event({ type: "content_block_stop", index: 0 });
        yield event({
          type: "message_delta",
          delta: { stop_reason: "end_turn" },
          usage: { output_tokens: 1 },
        });
        yield event({ type: "message_stop" });
        yield { type: "result", subtype: "success", is_error: false, result: "" } as unknown as SDKMessage;
        await client.close();
      }
      return Object.assign(messages(), {
        interrupt: async () => undefined,
        close: () => {},
      }) as unknown as Query;
    };
    const provider = createClaudeCodeProvider({
      env: { CLAUDE_BRIDGE_STREAM_IDLE_TIMEOUT: "0" },
      cwd: "/",
      diag: () => {},
      runQuery,
    });
    const tools = [{ name: "bash", description: "run", parameters: { type: "object", properties: {} } }];
    const ask = (messages: Parameters<typeof provider.registration.streamSimple>[1]["messages"]) =>
      provider.registration.streamSimple(model, { systemPrompt: "sys", messages, tools }, { sessionId: "s" });

    const round = await ask([user("run it", 1)]).result();
    expect(round.stopReason).toBe("toolUse");
    const result = {
      role: "toolResult" as const,
      toolCallId: "toolu_1",
      toolName: "bash",
      content: [{ type: "text" as const, text: "TOOL OUTPUT" }],
      isError: false,
      timestamp: 3,
    };
    const final = await ask([user("run it", 1), round, result, user("STEER", 4)]).result();
    expect(final.content).toEqual([{ type: "text", text: "done" }]);
    expect(order).toEqual([
      `user: ${JSON.stringify([{ type: "text", text: "STEER" }])}`,
      `result: ${JSON.stringify([{ type: "text", text: "TOOL OUTPUT" }])}`,
    ]);
    await provider.dispose();
  });
});
