// nix/npm-registry.mjs, the registry on 127.0.0.1 the Nix build installs from.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { repoRoot } from "./helpers.js";

const script = join(repoRoot, "nix/npm-registry.mjs");

async function waitForFile(path: string, child: ChildProcess) {
  const deadline = Date.now() + 20_000;
  while (!existsSync(path)) {
    if (child.exitCode !== null) throw new Error(`the registry exited ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error(`${path} never appeared`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return readFileSync(path, "utf8");
}

describe("nix/npm-registry.mjs", () => {
  let dir: string;
  let child: ChildProcess | undefined;
  let stderr: string;

  const start = (manifest: Record<string, string>) => {
    const manifestPath = join(dir, "manifest.json");
    writeFileSync(manifestPath, JSON.stringify(manifest));
    stderr = "";
    const started = spawn(process.execPath, [script, manifestPath, join(dir, "port")], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    started.stderr?.on("data", (chunk) => {
      stderr += chunk;
    });
    child = started;
    return started;
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "npm-registry-"));
    writeFileSync(join(dir, "zod.tgz"), "zod tarball bytes");
    writeFileSync(join(dir, "lib.tgz"), "scoped tarball bytes");
  });

  afterEach(async () => {
    if (child && child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      const exited = once(child, "exit");
      process.kill(child.pid, "SIGKILL");
      await exited;
    }
    child = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves the listed tarballs on 127.0.0.1 at the paths pnpm asks for, and 404s the rest", async () => {
    const server = start({
      "/zod/-/zod-4.6.7.tgz": join(dir, "zod.tgz"),
      "/@scope/lib/-/lib-1.0.0.tgz": join(dir, "lib.tgz"),
    });
    const port = Number((await waitForFile(join(dir, "port"), server)).trim());
    expect(port).toBeGreaterThan(0);
    const base = `http://127.0.0.1:${port}`;

    const zod = await fetch(`${base}/zod/-/zod-4.6.7.tgz`);
    expect(zod.status).toBe(200);
    expect(await zod.text()).toBe("zod tarball bytes");
    // pnpm may escape a scope's slash.
    const scoped = await fetch(`${base}/@scope%2Flib/-/lib-1.0.0.tgz`);
    expect(await scoped.text()).toBe("scoped tarball bytes");

    const metadata = await fetch(`${base}/zod`);
    expect(metadata.status).toBe(404);
    await metadata.text();
    const traversal = await fetch(`${base}/zod/-/../../manifest.json`);
    expect(traversal.status).toBe(404);
    await traversal.text();
    expect(stderr).toContain("npm-registry: 404 GET /zod: not a tarball this build fetched");
  });

  it("closes on SIGTERM", async () => {
    const server = start({ "/zod/-/zod-4.6.7.tgz": join(dir, "zod.tgz") });
    await waitForFile(join(dir, "port"), server);
    const exited = once(server, "exit");
    server.kill("SIGTERM");
    const [code] = await exited;
    expect(code).toBe(0);
  });

  it("refuses a manifest naming a file that does not exist, before listening", async () => {
    const server = start({ "/zod/-/zod-4.6.7.tgz": join(dir, "missing.tgz") });
    const [code] = await once(server, "exit");
    expect(code).toBe(2);
    expect(stderr).toContain("/zod/-/zod-4.6.7.tgz -> ");
    expect(existsSync(join(dir, "port"))).toBe(false);
  });

  it("refuses a manifest entry that is not a tarball path", async () => {
    const server = start({ "/zod": join(dir, "zod.tgz") });
    const [code] = await once(server, "exit");
    expect(code).toBe(2);
    expect(stderr).toContain("/zod is not a registry tarball path");
  });
});
