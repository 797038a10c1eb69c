import type { CliExit } from "./cli-process.js";

/** "claude exited with code 3: <last stderr line>", for errors a human reads. */
export function describeExit(command: string, exit: CliExit): string {
  const how =
    exit.signal !== null ? `was killed by ${exit.signal}` : `exited with code ${exit.code ?? "unknown"}`;
  const lastLine = lastStderrLine(exit.stderrTail);
  return lastLine === undefined ? `${command} ${how}` : `${command} ${how}: ${lastLine}`;
}

export function lastStderrLine(stderr: string, pattern?: RegExp): string | undefined {
  const lines = stderr
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
  for (let index = lines.length - 1; index >= 0; index--) {
    const line = lines[index];
    if (line !== undefined && (pattern === undefined || pattern.test(line))) return line;
  }
  return undefined;
}
