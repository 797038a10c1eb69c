import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { runBee } from "./helpers.js";
import {
  type InteractiveClaude,
  startInteractiveClaude,
  waitFor,
  waitOnPromptSteps,
} from "./interactive-claude.mjs";

// What Claude Code 2.1.332 does with bee's channel, measured with the real binary under tmux against the
// model double (an API key, not a claude.ai login). The bridge declares experimental["claude/channel"]
// (BEE_CHANNEL=1) and claude is started with --dangerously-load-development-channels server:bee; claude
// still skips the channel, for a reason only Anthropic's side can lift, and the long poll stays what wakes
// the agent. When a later Claude Code changes this, this test says so.

let session: InteractiveClaude | undefined;
let debugDir: string | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
  if (debugDir) rmSync(debugDir, { recursive: true, force: true });
  debugDir = undefined;
});

const skipped =
  'MCP server "bee": Channel notifications skipped: channels feature is not currently available';

test("claude 2.1.332 skips bee's channel without a claude.ai login, and an idle session is woken only by the long poll", async () => {
  debugDir = mkdtempSync(join(tmpdir(), "bee-channel-debug-"));
  const debugFile = join(debugDir, "claude-debug.log");
  session = await startInteractiveClaude({
    steps: waitOnPromptSteps("wait for bee"),
    extraArgs: ["--dangerously-load-development-channels", "server:bee", "--debug-file", debugFile],
    beeEnvExtra: { BEE_CHANNEL: "1" },
  });
  const current = session;
  const debug = () => (existsSync(debugFile) ? readFileSync(debugFile, "utf8") : "");
  await waitFor(() => debug().includes(skipped), 60_000, `the debug log's channel line\n${current.pane()}`);
  // No confirmation dialog either: claude sits at its prompt.
  await waitFor(
    () => current.pane().includes("(shift+tab to cycle)"),
    30_000,
    `the prompt\n${current.pane()}`,
  );

  const before = current.double.requests.length;
  const posted = await runBee(["post", "--to", "alpha", "--json", "pushed, not delivered"], {
    PATH: process.env.PATH ?? "",
    ...current.beeEnv,
  });
  expect(posted.code, posted.stderr).toBe(0);
  const { id } = JSON.parse(posted.stdout) as { id: string };
  // Held: the push reached claude (the bridge sent it) but started no turn.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  expect(current.double.requests.length).toBe(before);

  await current.type("wait for bee");
  // The wait's result, carrying the action, is what reaches the model.
  const answered = await current.double.waitForRequest(
    (request) =>
      JSON.stringify(request.body).includes("tool_result") && JSON.stringify(request.body).includes(id),
    { timeoutMs: 60_000 },
  );
  expect(answered.api).toBe("anthropic");
}, 180_000);
