import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { TestProject } from "vitest/node";

const appDir = dirname(dirname(fileURLToPath(import.meta.url)));
const repoRoot = join(appDir, "../..");

declare module "vitest" {
  export interface ProvidedContext {
    node24: string;
  }
}

/**
 * The e2e suites load the built bundle (what `pi install` ships), so build it first; and Pi's current
 * line needs Node 24, which `scripts/ensure-node.mjs 24` installs on first use (never skipped).
 */
export default function setup(project: TestProject): void {
  execFileSync(join(appDir, "node_modules/.bin/tsdown"), ["--silent"], {
    cwd: appDir,
    stdio: ["ignore", "ignore", "inherit"],
  });
  const node24 = execFileSync(process.execPath, [join(repoRoot, "scripts/ensure-node.mjs"), "24"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
  project.provide("node24", node24);
}
