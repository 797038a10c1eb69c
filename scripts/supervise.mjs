// Runs a long-lived child (the Floot daemon of `npm start`, the test run of `npm test`) so that it
// ends with its caller: a signal sent to this process alone reaches the child too, and so does the
// death of the parent (npm, killed by pid, exits without passing its SIGTERM on). This process then
// exits as the child did.
import { spawn } from "node:child_process";
import { constants } from "node:os";

export const forwardedSignals = ["SIGINT", "SIGTERM", "SIGHUP"];

/** Resolves with the exit code to leave with: the child's, or 128 + its signal's number. */
export function supervise(name, command, args, { cwd, env, parentCheckMs = 500 } = {}) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env, stdio: "inherit" });
    const forward = (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    };
    for (const signal of forwardedSignals) process.on(signal, forward);
    const parent = process.ppid;
    const parentWatch = setInterval(() => {
      if (process.ppid !== parent) forward("SIGTERM");
    }, parentCheckMs);
    const done = (code) => {
      clearInterval(parentWatch);
      for (const signal of forwardedSignals) process.off(signal, forward);
      resolve(code);
    };
    child.on("error", (error) => {
      console.error(`bootstrap: ${name}: ${error.message}`);
      done(1);
    });
    child.on("exit", (code, signal) => {
      if (code === 0) return done(0);
      console.error(`bootstrap: ${name} failed (${signal ?? `exit ${code}`})`);
      done(code ?? 128 + (constants.signals[signal] ?? 0));
    });
  });
}
