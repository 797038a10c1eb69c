// What the pi-provider benches share: the two Pi lines, a Pi process driven over RPC, statistics.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { resolveRealClient } from "@bridgeworks/test-harness";

export const appDir = dirname(dirname(fileURLToPath(import.meta.url)));
const repoRoot = join(appDir, "../..");

/** Pi 0.73 (`@mariozechner`, this Node) and Pi's current line (`@earendil-works`, Node 24). */
export function piLines() {
  const legacy = resolveRealClient("pi");
  const lines = [{ name: `pi ${legacy.version}`, node: process.execPath, cli: legacy.executable }];
  const node24 = execFileSync(process.execPath, [join(repoRoot, "scripts/ensure-node.mjs"), "24"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
  const require = createRequire(join(appDir, "package.json"));
  for (const dir of require.resolve.paths("@earendil-works/pi-coding-agent") ?? []) {
    const manifestPath = join(dir, "@earendil-works/pi-coding-agent/package.json");
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
    lines.push({
      name: `pi ${manifest.version}`,
      node: node24,
      cli: join(dirname(manifestPath), manifest.bin.pi),
    });
    break;
  }
  return lines;
}

/**
 * Pi's arguments and environment for a provider under comparison: `builtin-anthropic` (Pi's own
 * client), `claude-code`, `claude-code-cold` (Claude Code started only at the first prompt), or
 * `claude-code-baseline`: another build of this package (a directory with its package.json and
 * bundle, e.g. the main branch's), named by `BENCH_BASELINE_EXTENSION`, to compare in the same run.
 */
export function providerArgs(provider) {
  if (provider === "builtin-anthropic") return ["--provider", "double", "--model", "claude-double"];
  const extension = provider === "claude-code-baseline" ? process.env.BENCH_BASELINE_EXTENSION : appDir;
  return ["-e", extension, "--provider", "claude-code", "--model", "sonnet"];
}

export function providerEnv(provider) {
  return provider === "claude-code-cold" ? { CLAUDE_BRIDGE_WARM_START: "0" } : {};
}

/** A `pi --mode rpc` in `environment`: JSONL events parsed as they arrive, commands with ids. */
export function startRpcPi(environment, line, provider, env = {}) {
  const process_ = environment.spawn(
    line.node,
    [line.cli, "--mode", "rpc", "--no-session", "-ne", ...providerArgs(provider)],
    {
      keepStdinOpen: true,
      env: {
        PI_OFFLINE: "1",
        PI_SKIP_VERSION_CHECK: "1",
        CLAUDE_BRIDGE_DIAG_LOG: join(environment.root, "diag.log"),
        ...providerEnv(provider),
        ...env,
      },
    },
  );
  const events = [];
  let consumed = 0;
  let calls = 0;
  const read = () => {
    const text = process_.stdout();
    const end = text.lastIndexOf("\n");
    if (end >= consumed) {
      for (const record of text.slice(consumed, end).split("\n")) {
        if (record.trim().startsWith("{")) events.push({ at: performance.now(), ...JSON.parse(record) });
      }
      consumed = end + 1;
    }
    return events;
  };
  const waitFor = async (predicate, from, timeoutMs = 60_000) => {
    let found;
    await process_.waitForOutput(() => {
      found = read().slice(from).find(predicate);
      return found !== undefined;
    }, timeoutMs);
    return found;
  };
  return {
    process: process_,
    events: read,
    send: (command) => process_.child.stdin.write(`${JSON.stringify(command)}\n`),
    /** Sends a command and resolves with Pi's response to it. */
    async call(command, timeoutMs) {
      const id = `bench-${++calls}`;
      const from = read().length;
      process_.child.stdin.write(`${JSON.stringify({ ...command, id })}\n`);
      return waitFor((event) => event.type === "response" && event.id === id, from, timeoutMs);
    },
    waitFor,
  };
}

export function isTextDelta(event) {
  return event.type === "message_update" && event.assistantMessageEvent?.type === "text_delta";
}

export function stats(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const round = (value) => Math.round(value * 10) / 10;
  return {
    samples: sorted.length,
    medianMs: round(at(0.5)),
    p90Ms: round(at(0.9)),
    p99Ms: round(at(0.99)),
    minMs: round(sorted[0]),
    maxMs: round(sorted.at(-1)),
  };
}

export function delay(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
