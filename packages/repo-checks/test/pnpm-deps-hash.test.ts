// The offline check fails when pnpm-lock.yaml changes without nix/pnpm-deps.json being refreshed.
import { spawnSync } from "node:child_process";
import {
  appendFileSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { repoRoot } from "./helpers.js";

function run(script: string, args: string[]) {
  const result = spawnSync("bash", [script, ...args], { encoding: "utf8" });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("scripts/check-nix.sh --lockfile-only", () => {
  it("passes on the repository's own lockfile and pin", () => {
    const result = run(join(repoRoot, "scripts/check-nix.sh"), ["--lockfile-only"]);
    expect(result.stderr).not.toContain("pnpm-lock.yaml changed");
    expect(result.status).toBe(0);
  });

  describe("on a copy of the repository", () => {
    let root: string;
    const check = () => run(join(root, "scripts/check-nix.sh"), ["--lockfile-only", "--root", root]);
    const pin = () => JSON.parse(readFileSync(join(root, "nix/pnpm-deps.json"), "utf8"));
    const writePin = (value: unknown) =>
      writeFileSync(join(root, "nix/pnpm-deps.json"), JSON.stringify(value));

    beforeEach(() => {
      root = mkdtempSync(join(tmpdir(), "repo-checks-"));
      mkdirSync(join(root, "nix"));
      mkdirSync(join(root, "scripts"));
      for (const file of [
        "pnpm-lock.yaml",
        "nix/pnpm-deps.json",
        "scripts/check-nix.sh",
        "scripts/refresh-pnpm-deps-hash.sh",
      ]) {
        copyFileSync(join(repoRoot, file), join(root, file));
      }
    });

    afterEach(() => rmSync(root, { recursive: true, force: true }));

    it("passes when nothing changed", () => {
      expect(check().status).toBe(0);
    });

    it("fails when the lockfile changed, naming the command that refreshes the hash", () => {
      appendFileSync(join(root, "pnpm-lock.yaml"), "\n# a dependency changed\n");
      const result = check();
      expect(result.status).toBe(1);
      expect(result.stderr).toContain("pnpm-lock.yaml changed");
      expect(result.stderr).toContain("scripts/refresh-pnpm-deps-hash.sh");
    });

    it("fails when the hash is not an SRI sha256", () => {
      writePin({ ...pin(), hash: "sha256-tooShort=" });
      const result = check();
      expect(result.status).toBe(1);
      expect(result.stderr).toContain("SRI sha256");
    });

    it("fails when lockSha256 is not a sha256", () => {
      writePin({ ...pin(), lockSha256: "abc" });
      expect(check().status).toBe(1);
    });

    it("fails when the pin is missing", () => {
      rmSync(join(root, "nix/pnpm-deps.json"));
      expect(check().status).toBe(1);
    });

    it("passes again after --pending, and says the hash is a placeholder", () => {
      appendFileSync(join(root, "pnpm-lock.yaml"), "\n# a dependency changed\n");
      expect(check().status).toBe(1);
      const pending = run(join(root, "scripts/refresh-pnpm-deps-hash.sh"), ["--pending"]);
      expect(pending.status).toBe(0);
      expect(pin().hash).toBe("sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=");
      const result = check();
      expect(result.status).toBe(0);
      expect(result.stderr).toContain("placeholder");
    });
  });
});
