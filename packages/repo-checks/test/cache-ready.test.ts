// nix/ci/cache-ready.sh decides whether GitHub's Nix workflow uses the Cachix cache: a cache that
// answers nix-cache-info is used; one that does not exist yet (404) is skipped with a notice, and the
// step itself succeeds, so the first run before the one-time setup goes green. Each case runs the
// script with curl against a server on 127.0.0.1 standing where the cache would be.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { repoRoot } from "./helpers.js";

const run = promisify(execFile);
let server: Server | undefined;
let dir: string | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A cache at 127.0.0.1 answering nix-cache-info with `status`; the script's output and stdout. */
async function cacheReady(status: number) {
  server = createServer((request, response) => {
    response.statusCode = request.url === "/nix-cache-info" ? status : 404;
    response.end(status === 200 ? "StoreDir: /nix/store\nWantMassQuery: 1\nPriority: 41\n" : "");
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  dir = mkdtempSync(join(tmpdir(), "cache-ready-"));
  const output = join(dir, "github-output");
  const { stdout } = await run("bash", [join(repoRoot, "nix/ci/cache-ready.sh"), "bridgeworks"], {
    env: {
      ...process.env,
      CACHE_URL: `http://127.0.0.1:${port}`,
      CACHE_RETRIES: "0",
      GITHUB_OUTPUT: output,
    },
  });
  return { output: readFileSync(output, "utf8"), stdout };
}

describe("nix/ci/cache-ready.sh", () => {
  it("says ready=true when the cache answers nix-cache-info", async () => {
    const result = await cacheReady(200);
    expect(result.output).toBe("ready=true\n");
    expect(result.stdout).not.toContain("::notice");
  });

  it("says ready=false with a notice, and succeeds, when the cache does not exist yet", async () => {
    const result = await cacheReady(404);
    expect(result.output).toBe("ready=false\n");
    expect(result.stdout).toContain("::notice title=Binary cache not set up::");
    expect(result.stdout).toContain("everything is built");
  });
});
