import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

/** The end-to-end tests spawn the built bundle, exactly what `bee` is once installed. */
export default function buildBundle(): void {
  const root = fileURLToPath(new URL("../../..", import.meta.url));
  execFileSync(
    "pnpm",
    ["turbo", "run", "build", "--filter", "@bridgeworks/bee-bridge", "--output-logs=errors-only"],
    {
      cwd: root,
      stdio: ["ignore", "inherit", "inherit"],
    },
  );
}
