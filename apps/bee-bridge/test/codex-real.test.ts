import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { doubledEnvironments } from "@bridgeworks/test-harness";
import { afterEach, describe, expect, test } from "vitest";
import { bundlePath, createSandbox, runBee } from "./helpers.js";
import { beeEnvironment, writeBeeMcpConfig } from "./real-claude.js";

// Codex at the board: `bee setup codex` registers the bridge in Codex's config.toml, and a real
// `codex exec` (0.171) waits, claims and completes an action a real `claude -p` (2.1.332) posted.

const doubled = doubledEnvironments();
const cleanups: Array<() => void> = [];
afterEach(async () => {
  await doubled.dispose();
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function parseJsonLines(text: string): Array<Record<string, unknown>> {
  return text
    .split("\n")
    .filter((line) => line.trim().startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe("bee setup codex", () => {
  test("adds [mcp_servers.bee] and keeps the rest of config.toml; a second run changes nothing", async () => {
    const sandbox = createSandbox();
    cleanups.push(() => sandbox.dispose());
    const codexHome = join(sandbox.root, "codex");
    const env = { ...sandbox.env, CODEX_HOME: codexHome };
    const first = await runBee(["setup", "codex"], env);
    expect([first.code, first.stdout], first.stderr).toEqual([
      0,
      `wrote ${join(codexHome, "config.toml")}\n`,
    ]);
    const existing =
      'model = "gpt-5.1-codex"\n\n[mcp_servers.bee]\ncommand = "old"\n\n[mcp_servers.bee.env]\nX = "1"\n\n[tui]\nx = 1\n';
    writeFileSync(join(codexHome, "config.toml"), existing);
    expect((await runBee(["setup", "codex"], env)).code).toBe(0);
    const written = readFileSync(join(codexHome, "config.toml"), "utf8");
    expect(written).toBe(
      [
        'model = "gpt-5.1-codex"',
        "",
        "[mcp_servers.bee]",
        `command = ${JSON.stringify(process.execPath)}`,
        `args = [${JSON.stringify(bundlePath)}, "bridge"]`,
        'env_vars = ["BEE_BOARD", "BEE_AGENT", "BEE_RUN_DIR", "BEE_LOG_LEVEL", "BEE_LOG_FILE", "BEE_BUSY_TIMEOUT_MS", "PGPASSWORD", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"]',
        'default_tools_approval_mode = "approve"',
        "tool_timeout_sec = 120",
        "",
        "[tui]",
        "x = 1",
        "",
      ].join("\n"),
    );
    const again = await runBee(["setup", "codex"], env);
    expect(again.stdout).toBe(`unchanged ${join(codexHome, "config.toml")}\n`);
  });
});

test("a real codex claims and completes an action a real claude posted, with an identity and a lease", async () => {
  // Claude posts, through its bridge, to the agent codex will be.
  const posting = await doubled.start({
    steps: [
      {
        match: { lastUserTextIncludes: "hand it to codex" },
        response: {
          events: [
            {
              type: "tool_use",
              id: "toolu_post",
              nameFrom: { equals: "mcp__bee__bee_post" },
              input: { to: "codex-worker", body: "build the docs" },
            },
          ],
        },
      },
      { match: { toolResultFor: "toolu_post" }, response: { events: [{ type: "text", text: "posted" }] } },
    ],
  });
  const board = join(posting.environment.root, "shared-board.db");
  const claudeBee = { ...beeEnvironment(posting.environment.root), BEE_BOARD: board, BEE_AGENT: "lead" };
  const claude = posting.environment.spawn("claude", [
    "-p",
    "hand it to codex",
    "--mcp-config",
    writeBeeMcpConfig(posting.environment.root, claudeBee),
    "--strict-mcp-config",
    "--allowedTools",
    "mcp__bee__bee_post",
    "--permission-mode",
    "dontAsk",
  ]);
  expect((await claude.exited).code, claude.stderr()).toBe(0);
  const cli = { PATH: process.env.PATH ?? "", HOME: posting.environment.home, BEE_BOARD: board };
  const [posted] = JSON.parse((await runBee(["list", "--json"], cli)).stdout).records as Array<{
    id: string;
    from: string;
    state: string;
  }>;
  expect(posted).toMatchObject({ from: expect.stringMatching(/^agent:lead#/), state: "open" });

  // Codex waits for it, claims it and completes it.
  const working = await doubled.start(
    {
      steps: [
        {
          match: { api: "openai", lastUserTextIncludes: "work the bee board" },
          response: {
            events: [
              {
                type: "tool_use",
                id: "call_wait",
                nameFrom: { endsWith: "bee_wait_action" },
                input: { timeoutSeconds: 10 },
              },
            ],
          },
        },
        {
          match: { toolResultFor: "call_wait" },
          response: {
            events: [
              { type: "tool_use", id: "call_claim", nameFrom: { endsWith: "bee_claim_next" }, input: {} },
            ],
          },
        },
        {
          match: { toolResultFor: "call_claim" },
          response: {
            events: [
              {
                type: "tool_use",
                id: "call_complete",
                nameFrom: { endsWith: "bee_complete" },
                input: { actionId: posted!.id, result: "docs built by codex" },
              },
            ],
          },
        },
        { match: { toolResultFor: "call_complete" }, response: { events: [{ type: "text", text: "done" }] } },
      ],
    },
    { model: "gpt-5.1-codex" },
  );
  const { environment } = working;
  const codexBee = { ...beeEnvironment(environment.root), BEE_BOARD: board, BEE_AGENT: "codex-worker" };
  Object.assign(environment.env, codexBee);
  const setup = environment.spawn(process.execPath, [bundlePath, "setup", "codex"]);
  expect((await setup.exited).code, setup.stderr()).toBe(0);
  const codex = environment.spawn("codex", ["exec", "--json", "--skip-git-repo-check", "work the bee board"]);
  expect((await codex.exited).code, codex.stderr()).toBe(0);

  const calls = parseJsonLines(codex.stdout())
    .filter(
      (line) => line.type === "item.completed" && (line.item as { type?: string }).type === "mcp_tool_call",
    )
    .map((line) => line.item as { server: string; tool: string; status: string });
  expect(calls.map((call) => [call.server, call.tool, call.status])).toEqual([
    ["bee", "bee_wait_action", "completed"],
    ["bee", "bee_claim_next", "completed"],
    ["bee", "bee_complete", "completed"],
  ]);
  const [done] = JSON.parse((await runBee(["list", "--json"], cli)).stdout).records as Array<
    Record<string, unknown>
  >;
  expect(done).toMatchObject({
    id: posted!.id,
    state: "done",
    claimedBy: expect.stringMatching(/^agent:codex-worker#[0-9a-f]{8}$/),
    fence: 1,
    result: "docs built by codex",
  });
  const agents = JSON.parse((await runBee(["agents", "--json"], cli)).stdout) as Array<
    Record<string, unknown>
  >;
  const worker = agents.find((agent) => agent.identity === done!.claimedBy);
  // The lease was live while codex worked: its bridge registered it with a lease and its process.
  expect(worker).toMatchObject({ name: "codex-worker", process: { pid: expect.any(Number) } });
  expect(["active", "departed"]).toContain(worker!.status);
}, 300_000);
