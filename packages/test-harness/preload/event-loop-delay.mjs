// Bench-only: measures the event loop of the process it is preloaded into (`node --import <this file>
// bundle/floot.mjs daemon …`) with perf_hooks.monitorEventLoopDelay; never part of a bundle. Each
// SIGUSR2 appends one JSON line `{n, p50, p99, max, mean, wallMs, cpuMs}` (ms) of the delays since the
// previous one to FLOOT_LOOP_DELAY_FILE and starts a new window; `cpuMs` is the process's user + system
// CPU time in the window (what the work cost, whatever else shares the cores). The variable is removed
// so children do not inherit it.
import { appendFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";

const file = process.env.FLOOT_LOOP_DELAY_FILE;
delete process.env.FLOOT_LOOP_DELAY_FILE;
if (!file) throw new Error("event-loop-delay preload: FLOOT_LOOP_DELAY_FILE is not set");

const histogram = monitorEventLoopDelay({ resolution: 1 });
histogram.enable();
const ms = (ns) => Math.round(ns / 1e4) / 100;
let windowStart = { at: performance.now(), cpu: process.cpuUsage() };
process.on("SIGUSR2", () => {
  const cpu = process.cpuUsage(windowStart.cpu);
  const window = {
    n: histogram.count,
    p50: ms(histogram.percentile(50)),
    p99: ms(histogram.percentile(99)),
    max: ms(histogram.max),
    mean: ms(histogram.mean),
    wallMs: Math.round(performance.now() - windowStart.at),
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
  };
  histogram.reset();
  windowStart = { at: performance.now(), cpu: process.cpuUsage() };
  appendFileSync(file, `${JSON.stringify(window)}\n`);
});
