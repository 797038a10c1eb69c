import { randomBytes as cryptoRandomBytes } from "node:crypto";
import { constants } from "node:fs";
import { open, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { RandomBytes } from "./token.js";

export interface WritePrivateFileOptions {
  randomBytes?: RandomBytes;
}

/**
 * Writes `contents` to `path` with mode 0600 so that a reader sees the old file or the whole new one:
 * a temp file `.<name>.<hex>.tmp` (O_EXCL, never through a link) beside it, fsynced, renamed over the
 * target, then the dir fsynced. The dir must already be safe (see `ensureRunDir`).
 */
export async function writePrivateFileAtomic(
  path: string,
  contents: string,
  options: WritePrivateFileOptions = {},
): Promise<void> {
  const dir = dirname(path);
  const suffix = Buffer.from((options.randomBytes ?? cryptoRandomBytes)(8)).toString("hex");
  const tempPath = join(dir, `.${basename(path, ".json")}.${suffix}.tmp`);
  const handle = await open(
    tempPath,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    try {
      // A umask can only narrow the create mode; chmod anyway so the mode never depends on it.
      await handle.chmod(0o600);
      await handle.writeFile(contents, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tempPath, path);
  } catch (error) {
    await unlink(tempPath).catch(() => {});
    throw error;
  }
  await syncDir(dir);
}

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
