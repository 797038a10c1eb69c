import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { defaultKeeperScriptPath, defaultSpawnerScriptPath } from "@bridgeworks/backend-adapters";
import { defaultGateHookScriptPath, defaultShimScriptPath } from "@bridgeworks/control-channel";

/** A helper program bundled beside the daemon, else the one its package builds. */
export function besideBundle(name: "shim.mjs" | "gate-hook.mjs" | "spawner.mjs" | "keeper.mjs"): string {
  const beside = join(dirname(fileURLToPath(import.meta.url)), name);
  if (existsSync(beside)) return beside;
  if (name === "spawner.mjs") return defaultSpawnerScriptPath();
  if (name === "keeper.mjs") return defaultKeeperScriptPath();
  return name === "shim.mjs" ? defaultShimScriptPath() : defaultGateHookScriptPath();
}
