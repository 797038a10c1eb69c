import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { toolResultText } from "@bridgeworks/model-double";
import { doubledEnvironments } from "@bridgeworks/test-harness";
import { afterEach, expect, test } from "vitest";
import { eventually, runBee } from "./helpers.js";
import {
  beeEnvironment,
  toolNames,
  waitThenAnswerScript,
  waitTool,
  writeBeeMcpConfig,
} from "./real-claude.js";

const doubled = doubledEnvironments();
afterEach(() => doubled.dispose());

test("claude -p: the wait tool is loaded up front, carries progress and tool-use ids, and a posted action reaches the model", async () => {
  const { double, environment } = await doubled.start(waitThenAnswerScript);
  const beeEnv = beeEnvironment(environment.root);
  const mcpConfig = writeBeeMcpConfig(environment.root, beeEnv);
  const debugFile = join(environment.root, "claude-debug.log");
  const claude = environment.spawn("claude", [
    "-p",
    "wait for bee actions",
    "--mcp-config",
    mcpConfig,
    "--strict-mcp-config",
    "--allowedTools",
    waitTool,
    "--permission-mode",
    "dontAsk",
    "--output-format",
    "stream-json",
    "--verbose",
    "--debug-file",
    debugFile,
  ]);

  const first = await double.waitForRequest(
    (request) => request.api === "anthropic" && toolNames(request.body).includes(waitTool),
    {
      timeoutMs: 60_000,
    },
  );
  expect(double.requests.filter((request) => request.api === "anthropic")[0]).toBe(first);

  // The bridge found claude as its ancestor and wrote a run file for it.
  await eventually(
    () => readdirSync(beeEnv.BEE_RUN_DIR).find((name) => name === `${claude.pid}.json`),
    20_000,
  );
  // The call is pending in the bridge: post while it waits.
  await eventually(
    () =>
      existsSync(beeEnv.BEE_LOG_FILE) && readFileSync(beeEnv.BEE_LOG_FILE, "utf8").includes('"tools/call"'),
    20_000,
  );
  const posted = await runBee(["post", "--to", "alpha", "--json", "please review"], {
    PATH: process.env.PATH ?? "",
    ...beeEnv,
  });
  expect(posted.code, posted.stderr).toBe(0);
  const action = JSON.parse(posted.stdout) as { id: string };

  const followUp = await double.waitForRequest(
    (request) => toolResultText("anthropic", request.body, "toolu_bee_wait") !== undefined,
    {
      timeoutMs: 60_000,
    },
  );
  const page = JSON.parse(toolResultText("anthropic", followUp.body, "toolu_bee_wait") ?? "") as {
    records: Array<{ id: string }>;
  };
  expect(page.records.map((record) => record.id)).toEqual([action.id]);

  const exit = await claude.exited;
  expect(exit.code, claude.stderr()).toBe(0);
  const bridgeLog = readFileSync(beeEnv.BEE_LOG_FILE, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const call = bridgeLog.find((entry) => entry.message === "tools/call" && entry.tool === "bee_wait_action");
  expect(call?.progressToken).toEqual(expect.any(Number));
  expect(call?.toolUseId).toBe("toolu_bee_wait");
  expect(bridgeLog.find((entry) => entry.message === "bridge stopping")?.reason).toBe("SIGINT");
  await eventually(() => readdirSync(beeEnv.BEE_RUN_DIR).length === 0, 5000);
});
