// `pnpm torture`: the crash torture run, with the real claude or codex against the model double.
// Prints one JSON summary on stdout (progress, one line per trial, on stderr); exits 1 on a violation.
//   pnpm torture -- --backend claude --trials 300 [--seed N] [--sessions 3000] [--pollers 8]
//                   [--followers 4] [--poll-pause-ms 2500] [--points a,b,...]
import { parseArgs } from "node:util";
import { Backend } from "@bridgeworks/protocol";
import { type KillPoint, killPoints, runTorture } from "./harness.js";

// `pnpm torture -- …` hands the arguments on behind a `--` of its own.
const args = process.argv.slice(2);
while (args[0] === "--") args.shift();

const { values } = parseArgs({
  args,
  options: {
    backend: { type: "string", default: "claude" },
    trials: { type: "string", default: "20" },
    seed: { type: "string" },
    sessions: { type: "string", default: "3000" },
    pollers: { type: "string", default: "8" },
    followers: { type: "string", default: "4" },
    "poll-pause-ms": { type: "string", default: "2500" },
    points: { type: "string" },
  },
  strict: true,
});

function count(name: string, raw: string | undefined): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) {
    process.stderr.write(`torture: --${name} must be a non-negative integer, got ${JSON.stringify(raw)}\n`);
    process.exit(2);
  }
  return value;
}

const backend = Backend.safeParse(values.backend);
if (!backend.success) {
  process.stderr.write(`torture: --backend must be claude or codex, got ${JSON.stringify(values.backend)}\n`);
  process.exit(2);
}
const points = values.points?.split(",").map((point) => point.trim()) ?? [...killPoints];
const unknown = points.filter((point) => !(killPoints as readonly string[]).includes(point));
if (unknown.length > 0) {
  process.stderr.write(`torture: unknown --points ${unknown.join(", ")}; known: ${killPoints.join(", ")}\n`);
  process.exit(2);
}

const summary = await runTorture({
  backend: backend.data,
  trials: count("trials", values.trials),
  seed: values.seed === undefined ? Date.now() % 2_147_483_647 : count("seed", values.seed),
  points: points as KillPoint[],
  sessions: count("sessions", values.sessions),
  pollers: count("pollers", values.pollers),
  followers: count("followers", values.followers),
  pollPauseMs: count("poll-pause-ms", values["poll-pause-ms"]),
  progress: (line) => process.stderr.write(`${line}\n`),
});
process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
process.exit(summary.violations.length === 0 ? 0 : 1);
