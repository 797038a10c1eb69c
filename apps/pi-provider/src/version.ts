import { existsSync, readFileSync, realpathSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import manifest from "../package.json" with { type: "json" };

/** This package's version, from its package.json (inlined by the bundler). */
export const piProviderVersion: string = manifest.version;

/** The Agent SDK this package runs Claude Code through (its package.json, found as Node resolves it). */
export function agentSdkVersion(from: string = import.meta.url): string | undefined {
  try {
    const entry = createRequire(from).resolve("@anthropic-ai/claude-agent-sdk");
    return packageVersion(dirname(entry), (name) => name === "@anthropic-ai/claude-agent-sdk");
  } catch {
    return undefined;
  }
}

/** The Pi running this extension: the `pi-coding-agent` package (either scope) its CLI script is in. */
export function piVersion(script: string | undefined = process.argv[1]): string | undefined {
  if (!script) return undefined;
  try {
    return packageVersion(dirname(realpathSync(script)), (name) => name.endsWith("/pi-coding-agent"));
  } catch {
    return undefined;
  }
}

/** The version in the nearest package.json at or above `dir` whose name `accepts`. */
function packageVersion(dir: string, accepts: (name: string) => boolean): string | undefined {
  for (let current = dir; ; current = dirname(current)) {
    const manifestPath = join(current, "package.json");
    if (existsSync(manifestPath)) {
      const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as { name?: string; version?: string };
      if (manifest.name && accepts(manifest.name)) return manifest.version;
    }
    if (dirname(current) === current) return undefined;
  }
}
