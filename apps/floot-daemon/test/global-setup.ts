import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const appDir = dirname(dirname(fileURLToPath(import.meta.url)));

/**
 * The e2e suites run the shipped artifact (the daemon, shim and gate hook from `bundle/`): build it
 * once, before any test file runs, so no file rebuilds it under another's running daemon.
 */
export default function setup(): void {
  execFileSync(process.execPath, [join(appDir, "node_modules/tsdown/dist/run.mjs"), "--silent"], {
    cwd: appDir,
    stdio: ["ignore", "ignore", "inherit"],
  });
}
