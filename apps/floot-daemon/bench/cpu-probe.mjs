// Loaded with `node --import` by startup-cpu.mjs: writes the process's CPU time (user + system, µs since
// exec) to FLOOT_CPU_PROBE_OUT when the daemon prints its "listening" line, or else when the process exits.
import { writeFileSync } from "node:fs";

const out = process.env.FLOOT_CPU_PROBE_OUT;
let written = false;
const record = () => {
  if (written || out === undefined) return;
  written = true;
  const { user, system } = process.cpuUsage();
  writeFileSync(out, JSON.stringify({ cpuMs: (user + system) / 1000 }));
};
const write = process.stderr.write.bind(process.stderr);
process.stderr.write = (chunk, ...rest) => {
  if (String(chunk).includes("floot daemon listening on")) record();
  return write(chunk, ...rest);
};
process.on("exit", record);
