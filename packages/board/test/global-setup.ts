import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

/** Board processes in the tests run plain node against `dist/`, so build protocol and board first. */
export default function buildBoard(): void {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const project = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));
  execFileSync(process.execPath, [tsc, "-b", project("../../protocol"), project("..")], { stdio: "inherit" });
}
