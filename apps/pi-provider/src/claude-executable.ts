import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

export const CLAUDE_PATH_VARIABLE = "CLAUDE_BRIDGE_CLAUDE_PATH";

/**
 * Which Claude Code to run: `CLAUDE_BRIDGE_CLAUDE_PATH`; else the Agent SDK's own native binary (its
 * optional dependency for this platform), chosen by the SDK itself (undefined here); else, when that
 * package is missing (an install that skipped optional deps), the `@anthropic-ai/claude-code` binary.
 */
export function resolveClaudeExecutable(
  env: Readonly<Record<string, string | undefined>>,
  from: string = import.meta.url,
): string | undefined {
  const explicit = env[CLAUDE_PATH_VARIABLE]?.trim();
  if (explicit) return explicit;
  const require = createRequire(from);
  let sdkDir: string;
  try {
    sdkDir = dirname(require.resolve("@anthropic-ai/claude-agent-sdk"));
  } catch {
    return claudeCodePackageBinary(require);
  }
  const sdkRequire = createRequire(join(sdkDir, "sdk.mjs"));
  const platform = `${process.platform}-${process.arch}`;
  for (const suffix of ["", "-musl"]) {
    try {
      sdkRequire.resolve(`@anthropic-ai/claude-agent-sdk-${platform}${suffix}/package.json`);
      return undefined;
    } catch {}
  }
  return claudeCodePackageBinary(require);
}

function claudeCodePackageBinary(require: NodeJS.Require): string | undefined {
  for (const dir of require.resolve.paths("@anthropic-ai/claude-code") ?? []) {
    const manifestPath = join(dir, "@anthropic-ai/claude-code/package.json");
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as {
      bin?: string | Record<string, string>;
    };
    const bin = typeof manifest.bin === "string" ? manifest.bin : manifest.bin?.claude;
    if (bin) return join(dirname(manifestPath), bin);
  }
  return undefined;
}
