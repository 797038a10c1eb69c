import { readFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { UsageError } from "@bridgeworks/cli";
import { EnvVarName } from "@bridgeworks/protocol";
import type { FlootContext } from "./context.js";

/**
 * A session's `env`, with no value on any command line: `--env-from F` lines (in order), then each
 * `--env NAME` with its value from floot's own environment. Nothing here ever repeats a value in an
 * error: a refused line or argument is named by file and line, or by its name.
 */
export function sessionEnv(
  names: readonly string[],
  files: readonly string[],
  context: Pick<FlootContext, "env" | "cwd">,
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const file of files) {
    const path = isAbsolute(file) ? file : resolve(context.cwd, file);
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (error) {
      throw new UsageError(
        "--env-from",
        `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? error}`,
      );
    }
    Object.assign(env, parseEnvFile(text, file));
  }
  for (const name of names) {
    if (name.includes("=")) {
      throw new UsageError(
        "--env",
        `takes a variable NAME, whose value is read from floot's own environment (a value in argv is readable by every user); got "${name.slice(0, name.indexOf("="))}=…"; for NAME=VALUE pairs use --env-from`,
      );
    }
    if (!EnvVarName.safeParse(name).success)
      throw new UsageError("--env", `${JSON.stringify(name)} is not an environment variable name`);
    const value = context.env[name];
    if (value === undefined) throw new UsageError("--env", `${name} is not set in floot's environment`);
    env[name] = value;
  }
  return env;
}

/**
 * dotenv-like: `NAME=VALUE` per line (an `export ` prefix allowed; a value in matching single or double
 * quotes loses them, nothing else is unescaped); blank lines and lines starting with `#` are skipped.
 */
export function parseEnvFile(text: string, file: string): Record<string, string> {
  const env: Record<string, string> = {};
  const lines = text.split("\n");
  for (const [index, raw] of lines.entries()) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("#")) continue;
    const match = /^\s*(?:export\s+)?([^=\s]+)\s*=(.*)$/.exec(line);
    const where = `${file}:${index + 1}`;
    if (match === null) throw new UsageError("--env-from", `${where}: not a NAME=VALUE line`);
    const [, name, rawValue] = match as unknown as [string, string, string];
    if (!EnvVarName.safeParse(name).success)
      throw new UsageError(
        "--env-from",
        `${where}: ${JSON.stringify(name)} is not an environment variable name`,
      );
    env[name] = unquote(rawValue.trim());
  }
  return env;
}

function unquote(value: string): string {
  const first = value[0];
  return value.length >= 2 && (first === '"' || first === "'") && value.endsWith(first)
    ? value.slice(1, -1)
    : value;
}
