import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

export type RealClientName = "claude" | "codex" | "pi";

export interface RealClient {
  name: RealClientName;
  /** The file to exec; the isolated environment links it into its bin dir under `name`. */
  executable: string;
  version: string;
}

const packageOf: Record<RealClientName, string> = {
  claude: "@anthropic-ai/claude-code",
  codex: "@openai/codex",
  pi: "@mariozechner/pi-coding-agent",
};

/** Locates the pinned real clients installed as this package's dependencies. */
export function resolveRealClient(name: RealClientName): RealClient {
  const manifestPath = findManifest(packageOf[name]);
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as {
    version: string;
    bin: string | Record<string, string>;
  };
  const bin = typeof manifest.bin === "string" ? manifest.bin : manifest.bin[name];
  if (!bin) throw new Error(`${packageOf[name]} declares no "${name}" bin`);
  return { name, executable: join(dirname(manifestPath), bin), version: manifest.version };
}

// Some of these packages do not export ./package.json, so look it up along the resolution paths.
function findManifest(packageName: string): string {
  const require = createRequire(import.meta.url);
  for (const dir of require.resolve.paths(packageName) ?? []) {
    const candidate = join(dir, packageName, "package.json");
    if (existsSync(candidate)) return candidate;
  }
  throw new Error(`${packageName} is not installed; run the workspace install`);
}
