import { afterEach, expect, test } from "vitest";
import { runBee } from "./helpers.js";
import {
  commandHook,
  escapeDuringWait,
  type InteractiveClaude,
  mcpToolHook,
  type SessionStartHook,
  sessionEventTool,
  startInteractiveClaude,
  waitOnPromptSteps,
} from "./interactive-claude.mjs";

// Interactive claude under tmux (its own -L socket), set up by interactive-claude.mjs, which the bench shares.

let session: InteractiveClaude | undefined;

afterEach(async () => {
  // Ends the tmux server, claude and the bridge by pid, then removes the environment.
  await session?.close();
  session = undefined;
});

function userText(body: unknown): string {
  const messages = (body as { messages?: Array<{ role: string; content: unknown }> }).messages ?? [];
  return JSON.stringify(messages);
}

test.each<[string, SessionStartHook, string[]]>([
  ["the mcp_tool hook", mcpToolHook, ["clear"]],
  ["only the command-hook fallback", commandHook, []],
])(
  "interactive claude: /clear retires the identity through %s; the bridge lives on",
  async (_path, hook, sessionEvents) => {
    session = await startInteractiveClaude({
      steps: [{ repeat: true, response: { events: [{ type: "text", text: "ok" }] } }],
      hook,
    });
    const { beeEnv, double } = session;
    const started = await session.waitForLog((entry) => entry.message === "identity registered", 60_000);
    const startLine = session.log().find((entry) => entry.message === "bridge started");
    const bridgePid = startLine?.pid;
    expect(typeof bridgePid).toBe("number");
    expect(typeof startLine?.claudePid).toBe("number");
    await new Promise((resolve) => setTimeout(resolve, 2000));
    await session.type("hello there");
    await double.waitForRequest((request) => userText(request.body).includes("hello there"), {
      timeoutMs: 30_000,
    });
    await new Promise((resolve) => setTimeout(resolve, 1500));

    await session.type("/clear");
    const retired = await session.waitForLog((entry) => entry.message === "identity retired", 30_000);
    expect(retired.retired).toBe(started.identity);
    const events = session.log().filter((entry) => entry.message === "session event");
    expect(events.map((entry) => entry.source)).toEqual(sessionEvents);

    const agents = JSON.parse(
      (await runBee(["agents", "--json"], { PATH: process.env.PATH ?? "", ...beeEnv })).stdout,
    ) as Array<{
      identity: string;
      status: string;
    }>;
    expect(agents.map((agent) => [agent.identity, agent.status])).toEqual([
      [started.identity, "retired"],
      [retired.current, "active"],
    ]);

    await new Promise((resolve) => setTimeout(resolve, 1500));
    await session.type("after the clear");
    const next = await double.waitForRequest(
      (request) => userText(request.body).includes("after the clear"),
      {
        timeoutMs: 30_000,
      },
    );
    expect(userText(next.body)).toContain(`bee identity: ${String(retired.current)}`);
    for (const request of double.requests.filter((entry) => entry.api === "anthropic")) {
      const names = ((request.body as { tools?: Array<{ name: string }> }).tools ?? []).map(
        (tool) => tool.name,
      );
      expect(names).not.toContain(sessionEventTool);
    }
    const starts = session.log().filter((entry) => entry.message === "bridge started");
    expect(starts.map((entry) => entry.pid)).toEqual([bridgePid]);
  },
);

test("interactive claude: Esc during a wait cancels it in the bridge", async () => {
  session = await startInteractiveClaude({ steps: waitOnPromptSteps("wait now") });
  await session.waitForLog((entry) => entry.message === "bridge started", 60_000);
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const { call, cancelled, pressedAt, cancelledAt } = await escapeDuringWait(session, "wait now");
  expect(call.toolUseId).toMatch(/^toolu_/);
  expect(cancelled.tool).toBe("bee_wait_action");
  // Bounded generously here (the wait itself would have run for 60 s); `pnpm bench` measures the latency.
  expect(cancelledAt - pressedAt).toBeLessThan(5000);
});
