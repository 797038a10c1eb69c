// nix/npm-tarballs.mjs: the tarball list the Nix build fetches, made from pnpm-lock.yaml.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { admits, npmTarballs, parseLockfile, tarballPath } from "../../../nix/npm-tarballs.mjs";
import { bumpZod, readText, repoRoot } from "./helpers.js";

const sha = (n: number) => `sha512-${String(n).padStart(86, "A")}==`;

/** A pnpm 12 lockfile: the package-manager document, then the workspace's. */
function lockfile(main: string) {
  return `---
lockfileVersion: '9.0'

importers:

  .:
    configDependencies: {}
    packageManagerDependencies:
      pnpm:
        specifier: 12.4.2
        version: 12.4.2

packages:

  '@pnpm/exe.darwin-arm64@12.4.2':
    resolution: {integrity: ${sha(1)}}
    cpu: [arm64]
    os: [darwin]

  '@pnpm/exe.linux-arm64@12.4.2':
    resolution: {integrity: ${sha(2)}}
    cpu: [arm64]
    os: [linux]
    libc: [glibc]

  '@pnpm/exe.linux-x64-musl@12.4.2':
    resolution: {integrity: ${sha(3)}}
    cpu: [x64]
    os: [linux]
    libc: [musl]

  '@pnpm/exe.linux-x64@12.4.2':
    resolution: {integrity: ${sha(4)}}
    cpu: [x64]
    os: [linux]
    libc: [glibc]

  pnpm@12.4.2:
    resolution: {integrity: ${sha(5)}}
    engines: {node: '>=18.*'}
    hasBin: true

snapshots:

  '@pnpm/exe.darwin-arm64@12.4.2':
    optional: true

  '@pnpm/exe.linux-arm64@12.4.2':
    optional: true

  '@pnpm/exe.linux-x64-musl@12.4.2':
    optional: true

  '@pnpm/exe.linux-x64@12.4.2':
    optional: true

  pnpm@12.4.2:
    optionalDependencies:
      '@pnpm/exe.darwin-arm64': 12.4.2
      '@pnpm/exe.linux-arm64': 12.4.2
      '@pnpm/exe.linux-x64': 12.4.2
      '@pnpm/exe.linux-x64-musl': 12.4.2

---
lockfileVersion: '9.0'
${main}`;
}

const workspace = `
importers:

  .:
    devDependencies:
      tool:
        specifier: 1.0.0
        version: 1.0.0(peer@2.0.0)

  apps/app:
    dependencies:
      '@scope/lib':
        specifier: ^3
        version: 3.1.0
    devDependencies:
      '@bridgeworks/harness':
        specifier: workspace:^
        version: link:../../packages/harness

  packages/harness:
    dependencies:
      client:
        specifier: 9.0.0
        version: 9.0.0

packages:

  '@scope/lib@3.1.0':
    resolution: {integrity: ${sha(10)}}

  client@9.0.0:
    resolution: {integrity: ${sha(11)}}

  native-linux-x64@1.0.0:
    resolution: {integrity: ${sha(12)}}
    cpu: [x64]
    os: [linux]

  native-darwin-arm64@1.0.0:
    resolution: {integrity: ${sha(13)}}
    cpu: [arm64]
    os: [darwin]

  native-wasm@1.0.0:
    resolution: {integrity: ${sha(14)}}
    cpu: [wasm32]

  wasm-runtime@1.0.0:
    resolution: {integrity: ${sha(15)}}

  not-windows@1.0.0:
    resolution: {integrity: ${sha(16)}}
    os: ['!win32']

  peer@2.0.0:
    resolution: {integrity: ${sha(17)}}

  tool@1.0.0:
    resolution: {integrity: ${sha(18)}}
    peerDependencies:
      peer: '*'

  '@alias/real@4.0.0-linux-x64':
    resolution: {integrity: ${sha(19)}}
    cpu: [x64]
    os: [linux]

snapshots:

  '@scope/lib@3.1.0':
    dependencies:
      not-windows: 1.0.0
    optionalDependencies:
      native-darwin-arm64: 1.0.0
      native-linux-x64: 1.0.0
      native-wasm: 1.0.0
      aliased: '@alias/real@4.0.0-linux-x64'

  client@9.0.0: {}

  native-darwin-arm64@1.0.0:
    optional: true

  native-linux-x64@1.0.0:
    optional: true

  native-wasm@1.0.0:
    dependencies:
      wasm-runtime: 1.0.0
    optional: true

  wasm-runtime@1.0.0:
    optional: true

  not-windows@1.0.0: {}

  peer@2.0.0: {}

  tool@1.0.0(peer@2.0.0):
    dependencies:
      peer: 2.0.0

  '@alias/real@4.0.0-linux-x64':
    optional: true
`;

const importerNames = {
  ".": "root",
  "apps/app": "@bridgeworks/app",
  "packages/harness": "@bridgeworks/harness",
};

describe("the lockfile parser", () => {
  it("reads pnpm-lock.yaml exactly as the yaml library does", () => {
    const text = readText("pnpm-lock.yaml");
    const ours = parseLockfile(text);
    const theirs = parseAllDocuments(text).map((document) => document.toJS());
    expect(ours).toHaveLength(2);
    expect(ours).toEqual(theirs);
  });

  it("reads the fixture as the yaml library does", () => {
    const text = lockfile(workspace);
    expect(parseLockfile(text)).toEqual(parseAllDocuments(text).map((document) => document.toJS()));
  });

  it.each([
    ["an anchor", "packages:\n  a@1.0.0: &x\n    resolution: {}\n"],
    ["a comment", "# hello\nlockfileVersion: '9.0'\n"],
    ["a tab", "lockfileVersion:\t'9.0'\n"],
    ["a duplicate key", "a: 1\na: 2\n"],
    ["stray indentation", "a:\n  b: 1\n    c: 2\n"],
  ])("refuses %s, naming the line", (_, text) => {
    expect(() => parseLockfile(text)).toThrow(/pnpm-lock\.yaml:\d+/);
  });
});

describe("pnpm's platform rule", () => {
  it.each([
    [undefined, "linux", true],
    [["linux"], "linux", true],
    [["darwin"], "linux", false],
    [["!win32"], "linux", true],
    [["!linux"], "linux", false],
    [["any"], "linux", true],
    [["glibc"], null, true],
  ])("%j admits %s: %s", (list, value, expected) => {
    expect(admits(list as string[] | undefined, value as string | null)).toBe(expected);
  });
});

describe("npmTarballs", () => {
  const result = () =>
    npmTarballs({
      lockfileText: lockfile(workspace),
      importerNames,
      installExclude: ["@bridgeworks/harness"],
    });

  it("lists, per system, the closure of the installed projects that fits it", () => {
    const { systems } = result();
    expect(systems["x86_64-linux"]).toEqual([
      "@alias/real@4.0.0-linux-x64",
      "@scope/lib@3.1.0",
      "native-linux-x64@1.0.0",
      "not-windows@1.0.0",
      "peer@2.0.0",
      "tool@1.0.0",
    ]);
    expect(systems["aarch64-darwin"]).toEqual([
      "@scope/lib@3.1.0",
      "native-darwin-arm64@1.0.0",
      "not-windows@1.0.0",
      "peer@2.0.0",
      "tool@1.0.0",
    ]);
  });

  it("leaves out the projects pnpm install leaves out, and what only a skipped package needs", () => {
    const { tarballs } = result();
    expect(Object.keys(tarballs)).not.toContain("client@9.0.0");
    expect(Object.keys(tarballs)).not.toContain("native-wasm@1.0.0");
    expect(Object.keys(tarballs)).not.toContain("wasm-runtime@1.0.0");
  });

  it("includes an excluded project's dependencies once it is installed", () => {
    const { systems } = npmTarballs({ lockfileText: lockfile(workspace), importerNames, installExclude: [] });
    expect(systems["x86_64-linux"]).toContain("client@9.0.0");
  });

  it("fetches each tarball from the registry path pnpm asks for, with the lockfile's hash", () => {
    const { tarballs } = result();
    expect(tarballs["@scope/lib@3.1.0"]).toEqual({ path: "/@scope/lib/-/lib-3.1.0.tgz", hash: sha(10) });
    expect(tarballs["@alias/real@4.0.0-linux-x64"]?.path).toBe("/@alias/real/-/real-4.0.0-linux-x64.tgz");
    expect(tarballPath("zod@4.6.7")).toBe("/zod/-/zod-4.6.7.tgz");
  });

  it("picks the lockfile's pnpm, glibc on Linux, for each system", () => {
    const { pnpm, tarballs } = result();
    expect(pnpm).toEqual({
      version: "12.4.2",
      wrapper: "pnpm@12.4.2",
      exe: {
        "x86_64-linux": "@pnpm/exe.linux-x64@12.4.2",
        "aarch64-linux": "@pnpm/exe.linux-arm64@12.4.2",
        "aarch64-darwin": "@pnpm/exe.darwin-arm64@12.4.2",
      },
    });
    expect(Object.keys(tarballs)).not.toContain("@pnpm/exe.linux-x64-musl@12.4.2");
  });

  it("refuses a package that does not come from the npm registry", () => {
    const text = lockfile(
      workspace.replace(
        `client@9.0.0:\n    resolution: {integrity: ${sha(11)}}`,
        "client@9.0.0:\n    resolution: {tarball: https://example.com/client.tgz}",
      ),
    );
    expect(() => npmTarballs({ lockfileText: text, importerNames, installExclude: [] })).toThrow(
      /client@9\.0\.0 is not resolved from the npm registry/,
    );
  });

  it("refuses a package without a sha512 integrity hash", () => {
    const text = lockfile(workspace.replace(sha(10), "sha1-abc"));
    expect(() => npmTarballs({ lockfileText: text, importerNames, installExclude: [] })).toThrow(
      /@scope\/lib@3\.1\.0 has no sha512 integrity/,
    );
  });

  it("refuses an installExclude that names no project", () => {
    expect(() =>
      npmTarballs({
        lockfileText: lockfile(workspace),
        importerNames,
        installExclude: ["@bridgeworks/nope"],
      }),
    ).toThrow(/installExclude names @bridgeworks\/nope/);
  });

  it("refuses a lockfile without pnpm 12's package-manager document", () => {
    expect(() =>
      npmTarballs({
        lockfileText: `lockfileVersion: '9.0'\n${workspace}`,
        importerNames,
        installExclude: [],
      }),
    ).toThrow(/packageManagerDependencies/);
  });
});

describe("node nix/npm-tarballs.mjs --check", () => {
  let root: string;
  const check = () =>
    spawnSync(process.execPath, [join(root, "nix/npm-tarballs.mjs"), "--check", "--root", root], {
      encoding: "utf8",
    });

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "npm-tarballs-"));
    const importers = Object.keys(
      (parseLockfile(readText("pnpm-lock.yaml"))[1] as { importers: object }).importers,
    );
    const files = [
      "pnpm-lock.yaml",
      "nix/npm-tarballs.mjs",
      "nix/npm-tarballs.json",
      "nix/sandbox.json",
      ...importers.map((path) => join(path, "package.json")),
    ];
    for (const file of files) {
      mkdirSync(dirname(join(root, file)), { recursive: true });
      copyFileSync(join(repoRoot, file), join(root, file));
    }
  });

  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("passes on the repository's lockfile and list", () => {
    const result = check();
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
  });

  it("fails when a tarball in the lockfile changed, naming the command that regenerates the list", () => {
    writeFileSync(join(root, "pnpm-lock.yaml"), bumpZod(readFileSync(join(root, "pnpm-lock.yaml"), "utf8")));
    const result = check();
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("node nix/npm-tarballs.mjs");
  });

  it("fails when the list was edited by hand", () => {
    const path = join(root, "nix/npm-tarballs.json");
    writeFileSync(path, readFileSync(path, "utf8").replace(/"sha512-[^"]+"/, `"${sha(99)}"`));
    expect(check().status).toBe(1);
  });

  it("writes a list that passes, and names a broken lockfile's line", () => {
    writeFileSync(join(root, "nix/npm-tarballs.json"), "{}\n");
    expect(check().status).toBe(1);
    const write = spawnSync(process.execPath, [join(root, "nix/npm-tarballs.mjs"), "--root", root], {
      encoding: "utf8",
    });
    expect(write.status).toBe(0);
    expect(check().status).toBe(0);
    writeFileSync(join(root, "pnpm-lock.yaml"), "lockfileVersion: '9.0'\n  stray: 1\n");
    const broken = check();
    expect(broken.status).toBe(1);
    expect(broken.stderr).toMatch(/npm-tarballs: pnpm-lock\.yaml:2/);
  });
});
