import { mkdir, stat } from "node:fs/promises";
import { dirname } from "node:path";

/**
 * `mkdir -p`, one level at a time: node's recursive mkdir never settles for some paths (a missing
 * directory under /proc), which would leave the turn waiting forever instead of failing.
 */
export async function makeDirectories(path: string): Promise<void> {
  const missing: string[] = [];
  for (let current = path; ; current = dirname(current)) {
    const found = await stat(current).catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT") return undefined;
      throw error;
    });
    if (found) {
      if (!found.isDirectory()) throw new Error(`${current} is not a directory`);
      break;
    }
    missing.unshift(current);
    if (dirname(current) === current) break;
  }
  for (const dir of missing) {
    await mkdir(dir, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw error;
    });
  }
}
