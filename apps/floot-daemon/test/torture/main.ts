// `pnpm torture`: the crash torture run, with the real claude or codex against the model double.
// Prints one JSON summary on stdout (progress, one line per trial, on stderr); exits 1 on a violation.
//   pnpm torture -- --backend claude --trials 300 [--keeper on|off] [--seed N] [--sessions 3000]
//                   [--pollers 8] [--followers 4] [--poll-pause-ms 2500] [--points a,b,...]
//                   [--stop-starting-at 2026-12-07T06:00:00Z]
// `--keeper off` (the default) kills the daemon with its CLIs running without the keeper and checks
// recovery; `--keeper on` runs them under the keeper and stops the daemon at the keeper's points.
import { parseArgs } from "node:util";
import { Backend } from "@bridgeworks/protocol";
import { type KillPoint, keeperKillPoints, killPoints, runTorture } from "./harness.js";

// `pnpm torture -- …` hands the arguments on behind a `--` of its own.
const args = process.argv.slice(2);
while (args[0] === "--") args.shift();

const { values } = parseArgs({
  args,
  options: {
    backend: { type: "string", default: "claude" },
    keeper: { type: "string", default: "off" },
    trials: { type: "string", default: "20" },
    seed: { type: "string" },
    sessions: { type: "string", default: "3000" },
    pollers: { type: "string", default: "8" },
    followers: { type: "string", default: "4" },
    "poll-pause-ms": { type: "string", default: "2500" },
    points: { type: "string" },
    "stop-starting-at": { type: "string" },
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
if (values.keeper !== "on" && values.keeper !== "off") {
  process.stderr.write(`torture: --keeper must be on or off, got ${JSON.stringify(values.keeper)}\n`);
  process.exit(2);
}
const mode = values.keeper === "on" ? "keeper" : "recovery";
const known: readonly string[] = mode === "keeper" ? keeperKillPoints : killPoints;
const points = values.points?.split(",").map((point) => point.trim()) ?? [...known];
const unknown = points.filter((point) => !known.includes(point));
if (unknown.length > 0) {
  process.stderr.write(
    `torture: unknown --points ${unknown.join(", ")} with --keeper ${values.keeper}; known: ${known.join(", ")}\n`,
  );
  process.exit(2);
}

const stopStartingAt =
  values["stop-starting-at"] === undefined ? undefined : Date.parse(values["stop-starting-at"]);
if (stopStartingAt !== undefined && Number.isNaN(stopStartingAt)) {
  process.stderr.write(
    `torture: --stop-starting-at must be a date and time, got ${JSON.stringify(values["stop-starting-at"])}\n`,
  );
  process.exit(2);
}

const summary = await runTorture({
  backend: backend.data,
  mode,
  trials: count("trials", values.trials),
  seed: values.seed === undefined ? Date.now() % 2_147_483_647 : count("seed", values.seed),
  points: points as KillPoint[],
  sessions: count("sessions", values.sessions),
  pollers: count("pollers", values.pollers),
  followers: count("followers", values.followers),
  pollPauseMs: count("poll-pause-ms", values["poll-pause-ms"]),
  ...(stopStartingAt !== undefined && { stopStartingAt }),
  progress: (line) => process.stderr.write(`${line}\n`),
});
process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
process.exit(summary.violations.length === 0 ? 0 : 1);
