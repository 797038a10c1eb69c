import { lstat, readdir, rm, unlink } from "node:fs/promises";
import { join } from "node:path";
import { hasErrnoCode } from "./errno.js";
import {
  assertGeneration,
  assertSocketPath,
  type McpSocketServer,
  type McpSocketServerOptions,
  mcpSocketName,
  startMcpSocketServer,
} from "./mcp-socket-server.js";
import { ensureRunDir } from "./run-dir.js";

/** `<bridgesDir>/g<generation>`. */
export function bridgeGenerationDir(bridgesDir: string, generation: number): string {
  assertGeneration(generation);
  return join(bridgesDir, `g${generation}`);
}

const generationDirPattern = /^g([1-9][0-9]*)$/;

/**
 * Removes `<bridgesDir>/g<n>` for every n below `currentGeneration` (anything else is left alone) and
 * returns the generations removed, ascending. A shim still pointed at one of them then finds no socket
 * and exits at once. A symlink named like a generation is unlinked, never followed.
 */
export async function removeStaleGenerations(
  bridgesDir: string,
  currentGeneration: number,
): Promise<number[]> {
  assertGeneration(currentGeneration);
  const names = await readdir(bridgesDir).catch((error: unknown) => {
    if (hasErrnoCode(error, "ENOENT")) return [] as string[];
    throw error;
  });
  const removed: number[] = [];
  for (const name of names) {
    const match = generationDirPattern.exec(name);
    if (!match) continue;
    const generation = Number(match[1]);
    if (!Number.isSafeInteger(generation) || generation >= currentGeneration) continue;
    const path = join(bridgesDir, name);
    const stats = await lstat(path).catch(() => undefined);
    if (stats === undefined) continue;
    if (stats.isDirectory()) await rm(path, { recursive: true, force: true });
    else await unlink(path).catch(() => {});
    removed.push(generation);
  }
  return removed.sort((a, b) => a - b);
}

export interface BridgeGenerationOptions<Context>
  extends Omit<McpSocketServerOptions<Context>, "dir" | "generation"> {
  /** The parent of every generation dir, e.g. `<state>/bridges`. */
  bridgesDir: string;
  /** The generation this daemon start committed (bumped on every start). */
  generation: number;
}

export interface BridgeGeneration<Context> {
  server: McpSocketServer<Context>;
  /** Older generations whose dirs were removed. */
  removedGenerations: number[];
}

/**
 * What a daemon does at start, after committing its bumped generation and before accepting turns:
 * serve `<bridgesDir>/g<generation>/mcp.sock`, then remove every older generation's dir.
 */
export async function startBridgeGeneration<Context>(
  options: BridgeGenerationOptions<Context>,
): Promise<BridgeGeneration<Context>> {
  const { bridgesDir, generation, ...rest } = options;
  const dir = bridgeGenerationDir(bridgesDir, generation);
  assertSocketPath(join(dir, mcpSocketName));
  await ensureRunDir(bridgesDir);
  const server = await startMcpSocketServer({ ...rest, dir, generation });
  try {
    const removedGenerations = await removeStaleGenerations(bridgesDir, generation);
    return { server, removedGenerations };
  } catch (error) {
    await server.close();
    throw error;
  }
}
