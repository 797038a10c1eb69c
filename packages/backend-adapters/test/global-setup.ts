import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";

const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");

/** The CLI spawner runs as its own process from `dist/spawner-main.js`: build this package first. */
export default function setup(): void {
  execFileSync(process.execPath, [tsc, "-b"], {
    cwd: packageDir,
    stdio: ["ignore", "inherit", "inherit"],
  });
}
