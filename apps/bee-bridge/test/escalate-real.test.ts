import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { toolResultText } from "@bridgeworks/model-double";
import { doubledEnvironments, ProcessTracker } from "@bridgeworks/test-harness";
import { afterEach, expect, test } from "vitest";
import { bundlePath, createSandbox, eventually, runBee, startBridge, textOf } from "./helpers.js";
import { dropSchema, freshBoardUrl, postgresServerUrl } from "./postgres-cluster.js";
import { beeEnvironment } from "./real-claude.js";

// bee setup claude --escalate, then the real `claude -p` (permission mode default) on a PostgreSQL
// board: the worker's Bash(rm -rf build) prompt becomes an approval that a person decides from
// another process. Measured with 2.1.332: -p runs PermissionRequest hooks (no matcher: every tool), and
// takes {decision: {behavior: "allow"}} to run the call, {behavior: "deny", message} to refuse it
// with the message as the tool's error result.

const doubled = doubledEnvironments();
const tracker = new ProcessTracker();
const cleanups: Array<() => void | Promise<void>> = [];
afterEach(async () => {
  await tracker.endAll();
  await doubled.dispose();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const removeBuild = {
  steps: [
    {
      match: { lastUserTextIncludes: "remove build" },
      response: {
        events: [
          {
            type: "tool_use" as const,
            id: "toolu_rm",
            name: "Bash",
            input: { command: "rm -rf build", description: "remove build" },
          },
        ],
      },
    },
    {
      match: { toolResultFor: "toolu_rm" },
      repeat: true,
      response: { events: [{ type: "text" as const, text: "removed" }] },
    },
  ],
};

interface Listed {
  records: Array<{ id: string; kind: string; state: string; from: string }>;
}

test("a worker's Bash(rm -rf build) waits on the board until bee approve from another process runs it, once", async () => {
  const { double, environment } = await doubled.start(removeBuild);
  const { url, schema } = freshBoardUrl();
  cleanups.push(() => dropSchema(postgresServerUrl(), schema));
  const beeEnv = { ...beeEnvironment(environment.root), BEE_BOARD: url, BEE_AGENT: "worker" };
  Object.assign(environment.env, beeEnv);
  const cli = { PATH: process.env.PATH ?? "", HOME: environment.home, BEE_BOARD: url };

  const setup = environment.spawn(process.execPath, [
    bundlePath,
    "setup",
    "claude",
    "--escalate",
    "--escalate-to",
    "human:iain",
    "--escalate-timeout",
    "120",
  ]);
  expect((await setup.exited).code, setup.stderr()).toBe(0);
  const settings = JSON.parse(readFileSync(join(environment.claudeConfigDir, "settings.json"), "utf8"));
  expect(settings.hooks.PermissionRequest).toEqual([
    {
      hooks: [
        {
          type: "command",
          command: `${process.execPath} ${bundlePath} hook permission-request --to human:iain --timeout 120`,
          timeout: 150,
          statusMessage: "Asking human:iain on the bee board",
        },
      ],
    },
  ]);

  mkdirSync(join(environment.workspace, "build"));
  writeFileSync(join(environment.workspace, "build", "output.o"), "x");
  const claude = environment.spawn("claude", [
    "-p",
    "remove build",
    "--output-format",
    "stream-json",
    "--verbose",
  ]);
  const describeState = () => `claude stderr:\n${claude.stderr()}\nclaude stdout:\n${claude.stdout()}`;

  const id = await eventually(async () => {
    const listed = JSON.parse((await runBee(["list", "--json"], cli)).stdout) as Listed;
    return listed.records.find((record) => record.kind === "approval" && record.state === "open")?.id;
  }, 90_000).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}\n${describeState()}`);
  });
  expect(existsSync(join(environment.workspace, "build"))).toBe(true);

  // An agent the policy does not name is refused, and the worker stays blocked.
  const strangerBox = createSandbox();
  cleanups.push(() => strangerBox.dispose());
  const stranger = await startBridge({
    tracker,
    env: { ...strangerBox.env, BEE_BOARD: url, BEE_AGENT: "stranger" },
  });
  const refused = await stranger.client.callTool({
    name: "bee_decide",
    arguments: { actionId: id, decision: "allow" },
  });
  expect(refused.isError).toBe(true);
  expect(textOf(refused)).toMatch(
    new RegExp(`^not_permitted: agent:stranger#[0-9a-f]{8} may not decide approval ${id}`),
  );

  // The worker's own bridge goes away meanwhile: the request and its decision live on the board and in the hook.
  const bridgeStarted = readFileSync(beeEnv.BEE_LOG_FILE, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { message: string; pid?: number })
    .find((entry) => entry.message === "bridge started");
  expect(bridgeStarted?.pid).toEqual(expect.any(Number));
  process.kill(bridgeStarted!.pid!, "SIGKILL");
  expect(existsSync(join(environment.workspace, "build"))).toBe(true);

  const approved = await runBee(["approve", id, "--by", "human:iain", "--reason", "generated"], cli);
  expect([approved.code, approved.stdout], approved.stderr).toEqual([0, `allowed ${id} as human:iain\n`]);
  expect((await claude.exited).code, describeState()).toBe(0);
  expect(existsSync(join(environment.workspace, "build"))).toBe(false);

  // The call ran exactly once, with the board's approval as its permission.
  const results = double.requests.filter(
    (request) => toolResultText("anthropic", request.body, "toolu_rm") !== undefined,
  );
  expect(results.length).toBeGreaterThan(0);
  const resultMessages = claude
    .stdout()
    .split("\n")
    .filter(Boolean)
    .map(
      (line) =>
        JSON.parse(line) as { type: string; tool_result_meta?: Array<{ permission_decision?: unknown }> },
    )
    .filter((message) => message.type === "user" && message.tool_result_meta !== undefined);
  expect(resultMessages.map((message) => message.tool_result_meta?.[0]?.permission_decision)).toEqual([
    { decision: "accept", source: "hook", reason_type: "hook" },
  ]);

  for (const again of [
    ["approve", id, "--by", "human:iain"],
    ["deny", id, "--by", "human:iain"],
  ]) {
    const late = await runBee(again, cli);
    expect(late.code).toBe(1);
    expect(late.stdout).toMatch(new RegExp(`^already_decided: ${id} was allowed by human:iain at `));
  }
}, 300_000);
