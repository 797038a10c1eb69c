import { createHash } from "node:crypto";
import { homedir } from "node:os";
import { join } from "node:path";
import { type RunDirRule, resolveRunDir } from "@bridgeworks/control-channel";

/**
 * Where credential files go: on a tmpfs when there is one, never under the state dir.
 * `FLOOT_RUNTIME_DIR` (absolute), else `$XDG_RUNTIME_DIR/floot`, else `/dev/shm/floot-<uid>`, else
 * `<tmpdir>/floot-<uid>`.
 */
export const flootRuntimeDirRule: RunDirRule = {
  overrideVar: "FLOOT_RUNTIME_DIR",
  runtimeSubdir: "floot",
  fallback: { kind: "tmpfs", prefix: "floot" },
};

/** One dir per state dir under the runtime base; the vault creates both, refusing a symlink or another user's dir. */
export function runtimeDirFor(stateDir: string, env: Readonly<Record<string, string | undefined>>): string {
  const base = resolveRunDir(flootRuntimeDirRule, { env, homeDir: env.HOME || homedir() });
  const id = createHash("sha256").update(stateDir).digest("hex").slice(0, 16);
  return join(base, id);
}
