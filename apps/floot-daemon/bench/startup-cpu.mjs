// CPU time (user + system, from exec) a `floot` process spends before it is useful: the daemon until its
// "listening" line on an empty state dir, `floot --version` and `floot session list` until they exit.
// CPU, not wall time: it does not depend on what else the machine runs. Prints one JSON document.
// FLOOT_BENCH_BUNDLE (see daemon-kit.mjs) measures another build, for an A/B comparison.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { bundle, children, startDaemon, stats, stopDaemon } from "./daemon-kit.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const probe = join(here, "cpu-probe.mjs");
const { values } = parseArgs({ options: { runs: { type: "string", default: "9" } } });
const runs = Number(values.runs);
const root = mkdtempSync(join(tmpdir(), "floot-startup-"));
let probes = 0;

/** Runs `floot <args>` under the probe; resolves with its CPU ms (at "listening", else at exit). */
function cpuOf(args, { until } = {}) {
  const out = join(root, `probe-${probes++}.json`);
  const child = spawn(process.execPath, ["--import", probe, bundle, ...args], {
    env: { ...process.env, FLOOT_RUNTIME_DIR: join(root, "run"), FLOOT_CPU_PROBE_OUT: out },
    stdio: ["ignore", "ignore", "pipe"],
  });
  children.add(child);
  let stderr = "";
  return new Promise((resolve, reject) => {
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
      if (until !== undefined && stderr.includes(until)) child.kill("SIGTERM");
    });
    child.on("exit", (code, signal) => {
      children.delete(child);
      if (until === undefined && code !== 0) reject(new Error(`floot ${args.join(" ")}: ${code} ${stderr}`));
      else if (until !== undefined && signal === null && code !== 0) reject(new Error(stderr));
      else resolve(JSON.parse(readFileSync(out, "utf8")).cpuMs);
    });
  });
}

try {
  const daemon = [];
  for (let i = 0; i < runs; i += 1) {
    daemon.push(await cpuOf(["daemon", "--state", join(root, `empty-${i}`)], { until: "listening on" }));
  }
  const version = [];
  for (let i = 0; i < runs; i += 1) version.push(await cpuOf(["--version"]));
  const stateDir = join(root, "listed");
  const { child } = await startDaemon(root, stateDir);
  const sessionList = [];
  try {
    for (let i = 0; i < runs; i += 1) sessionList.push(await cpuOf(["session", "list", "--state", stateDir]));
  } finally {
    await stopDaemon(child);
  }
  const bytes = readFileSync(bundle).length;
  console.log(
    JSON.stringify(
      {
        bundle,
        entryBytes: bytes,
        cpuMs: { daemonReady: stats(daemon), version: stats(version), sessionList: stats(sessionList) },
      },
      null,
      2,
    ),
  );
} finally {
  for (const child of children) child.kill("SIGKILL");
  rmSync(root, { recursive: true, force: true });
}
