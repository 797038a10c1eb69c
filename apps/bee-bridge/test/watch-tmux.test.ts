import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { afterEach, expect, test } from "vitest";
import { bundlePath, eventually, runBee, startBridge, useBridgeTestScope } from "./helpers.js";

// bee watch in a real terminal (tmux, its own -L socket): what it shows as things happen, and how it quits.

const scope = useBridgeTestScope();
let socket: string | undefined;

function tmux(...args: string[]): string {
  if (socket === undefined) throw new Error("no tmux server");
  return execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8" });
}

afterEach(() => {
  if (socket === undefined) return;
  try {
    // The server by its pid (its panes, bee watch among them, end with it), then its socket file.
    const [pid, path] = tmux("display-message", "-p", "#{pid}\n#{socket_path}").trim().split("\n");
    if (Number(pid) > 0) process.kill(Number(pid), "SIGTERM");
    if (path) rmSync(path, { force: true });
  } catch {}
  socket = undefined;
});

/** Starts `bee watch ...args` in a 160x50 pane; the shell around it prints its exit status once it quits. */
function startWatch(...args: string[]): void {
  socket = `bee-watch-${process.pid}-${Date.now()}`;
  const env = Object.entries(scope.sandbox.env)
    .map(([name, value]) => `${name}=${JSON.stringify(value)}`)
    .join(" ");
  const watch = `env -i TERM=xterm-256color ${env} ${process.execPath} ${bundlePath} watch ${args.join(" ")}`;
  tmux(
    "new-session",
    "-d",
    "-s",
    "watch",
    "-x",
    "160",
    "-y",
    "50",
    `${watch}; echo "bee watch exited $?"; sleep 600`,
  );
}

function pane(): string {
  return tmux("capture-pane", "-p", "-t", "watch");
}

async function paneShows(pattern: RegExp, what: string): Promise<RegExpMatchArray> {
  return eventually(() => pane().match(pattern) ?? undefined, 30_000).catch(() => {
    throw new Error(`bee watch did not show ${what} (${pattern}):\n${pane()}`);
  });
}

async function exitStatus(): Promise<number> {
  const [, code] = await paneShows(/^bee watch exited (\d+)$/m, "its exit");
  return Number(code);
}

async function bee(...args: string[]) {
  return runBee(args, scope.sandbox.env);
}

test("bee watch shows a post, a claim, a lease expiry and an approval as they happen, and quits on q", async () => {
  expect((await bee("board", "settings", "--lease-ttl", "1000")).code).toBe(0);
  startWatch();
  await paneShows(/^bee watch .* 0 agents, 0 open, 0 claimed, 0 approvals waiting/m, "its header");

  const id = (await bee("post", "--to", "alpha", "review PR 12")).stdout.trim();
  await paneShows(
    new RegExp(`\\d\\d:\\d\\d:\\d\\d ${id} posted task: human -> alpha: review PR 12`),
    "the post",
  );

  const alpha = await startBridge({
    tracker: scope.tracker,
    env: { ...scope.sandbox.env, BEE_AGENT: "alpha" },
  });
  await alpha.client.callTool({ name: "bee_claim", arguments: { actionId: id } });
  const [, holder] = await paneShows(
    new RegExp(`${id} claimed by (agent:alpha#[0-9a-f]{8}) \\(fence 1\\)`),
    "the claim",
  );
  await paneShows(
    new RegExp(
      `^  ${holder}  lease until \\d\\d:\\d\\d:\\d\\d  pid ${alpha.process.pid} on .*holds ${id}$`,
      "m",
    ),
    "who holds it",
  );

  process.kill(alpha.process.pid, "SIGKILL");
  await paneShows(new RegExp(`${id} open again: the lease of ${holder} lapsed`), "the lease expiry");
  await paneShows(new RegExp(`${holder} expired: its lease lapsed`), "the identity expired");

  const hook = scope.tracker.spawn(
    process.execPath,
    [bundlePath, "hook", "permission-request", "--to", "human:iain", "--timeout", "60"],
    { env: { ...scope.sandbox.env, BEE_AGENT: "worker" }, stdio: ["pipe", "pipe", "pipe"] },
  );
  hook.child.stdin?.end(
    JSON.stringify({
      session_id: "s",
      transcript_path: "/t",
      cwd: "/tmp",
      hook_event_name: "PermissionRequest",
      tool_name: "Bash",
      tool_input: { command: "rm -rf build" },
    }),
  );
  const [, approval] = await paneShows(
    /^ {2}(act_[0-9a-f]{16}) {2}agent:worker#[0-9a-f]{8} asks human:iain: Bash\(rm -rf build\)/m,
    "the approval waiting",
  );
  expect((await bee("approve", approval!, "--by", "human:iain")).code).toBe(0);
  await paneShows(new RegExp(`${approval} approved by human:iain`), "the approval decided");
  await paneShows(/APPROVALS WAITING\n {2}\(none\)/, "no approval waiting");
  expect(await hook.exited).toMatchObject({ code: 0 });

  tmux("send-keys", "-t", "watch", "q");
  expect(await exitStatus()).toBe(0);
  // Back on the normal screen: the alternate screen it drew on is gone.
  expect(pane()).not.toContain("APPROVALS WAITING");
});

test("bee watch filtered by agent and state shows only that, and quits on Ctrl-C", async () => {
  startWatch("--agent", "beta", "--state", "open,claimed");
  await paneShows(/^EVENTS$/m, "its events section");
  const forAlpha = (await bee("post", "--to", "alpha", "not beta's")).stdout.trim();
  const forBeta = (await bee("post", "--to", "beta", "beta's")).stdout.trim();
  await paneShows(new RegExp(`${forBeta} posted task: human -> beta: beta's`), "beta's action");
  expect(pane()).not.toContain(forAlpha);
  expect((await bee("claim", forBeta, "--as", "beta")).code).toBe(0);
  await paneShows(
    new RegExp(`^ {2}${forBeta} {2}claimed by agent:beta#[0-9a-f]{8}, fence 1`, "m"),
    "the claim",
  );

  tmux("send-keys", "-t", "watch", "C-c");
  expect(await exitStatus()).toBe(0);
});
