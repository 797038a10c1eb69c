// The npm-facing manifests of the public packages, checked without packing (scripts/check-packages.mjs
// packs them, runs publint and attw, and installs the tarballs). The same functions the script uses
// are also run on broken manifests, so each rule is shown to fail.
import { describe, expect, it } from "vitest";
import {
  filesCover,
  isApp,
  isPublic,
  manifestProblems,
  packedFileProblems,
  packedManifestProblems,
  workspacePackages,
  workspaceProblems,
} from "../../../scripts/check-packages.mjs";
import { readApps, repoRoot } from "./helpers.js";

const packages = workspacePackages(repoRoot);
const publics = packages.filter((pkg) => isPublic(pkg.manifest));

/** A library manifest that passes every rule; the tests below break one thing at a time. */
function library() {
  return {
    name: "@bridgeworks/demo",
    version: "1.0.0",
    description: "demo",
    license: "MIT",
    type: "module",
    repository: { type: "git", url: "git+https://example.com/x.git", directory: "packages/demo" },
    exports: {
      ".": { "@bridgeworks/source": "./src/index.ts", types: "./dist/index.d.ts", import: "./dist/index.js" },
    },
    publishConfig: {
      access: "public",
      exports: { ".": { types: "./dist/index.d.ts", import: "./dist/index.js" } },
    },
    files: ["dist", "!dist/.tsbuildinfo", "!dist/**/*.map"],
  } as Record<string, unknown> & { publishConfig: Record<string, unknown> };
}

describe("the workspace's public packages", () => {
  it("are found from pnpm-workspace.yaml, apps and libraries both", () => {
    const dirs = publics.map((pkg) => pkg.dir);
    expect(dirs).toEqual(
      expect.arrayContaining(["apps/floot-daemon", "apps/pi-provider", "packages/protocol"]),
    );
    expect(dirs).not.toContain("packages/repo-checks");
    expect(dirs).not.toContain("packages/test-harness");
  });

  it("include every app Nix builds (apps are published to npm too)", () => {
    const publicNames = publics.map((pkg) => pkg.manifest.name);
    for (const app of Object.values(readApps().apps)) {
      if (!packages.some((pkg) => pkg.dir === app.dir)) continue; // not in the workspace yet
      expect(publicNames).toContain(app.workspace);
    }
  });

  it("have no workspace-level problems (private runtime dependencies, private apps)", () => {
    expect(workspaceProblems(packages)).toEqual([]);
  });

  describe.each(publics.map((pkg) => [pkg.dir, pkg] as const))("%s", (dir, { manifest }) => {
    it("has files, repository.directory, public access and publish exports mirroring its exports", () => {
      expect(manifestProblems(manifest, dir)).toEqual([]);
    });

    if (isApp(manifest))
      it("is an app whose bin and Pi extensions are published files", () => {
        const targets = [
          ...(typeof manifest.bin === "string" ? [manifest.bin] : Object.values(manifest.bin ?? {})),
          ...(manifest.pi?.extensions ?? []),
        ] as string[];
        expect(targets.length).toBeGreaterThan(0);
        for (const target of targets) {
          expect(target).toMatch(/^\.\/(bundle|dist)\//);
          expect(filesCover(manifest.files, target.slice(2)), target).toBe(true);
        }
      });
  });
});

describe("the manifest rules fail on broken manifests", () => {
  it("accept the sample", () => {
    expect(manifestProblems(library(), "packages/demo")).toEqual([]);
  });

  it("want files", () => {
    const pkg = library();
    delete pkg.files;
    expect(manifestProblems(pkg, "packages/demo").join("\n")).toMatch(/"files" must list/);
  });

  it("want repository.directory to be the package's folder", () => {
    expect(manifestProblems(library(), "packages/other").join("\n")).toMatch(
      /"repository.directory" must be "packages\/other"/,
    );
  });

  it("want publishConfig.exports to be exports without the source condition", () => {
    const pkg = library();
    pkg.publishConfig.exports = { ".": { import: "./dist/index.js" } };
    expect(manifestProblems(pkg, "packages/demo").join("\n")).toMatch(/"publishConfig.exports" must be/);
    delete pkg.publishConfig.exports;
    expect(manifestProblems(pkg, "packages/demo").join("\n")).toMatch(/"publishConfig.exports" must be/);
  });

  it("want types first and default last", () => {
    const pkg = library();
    const exports = { ".": { import: "./dist/index.js", types: "./dist/index.d.ts" } };
    pkg.exports = exports;
    pkg.publishConfig.exports = exports;
    expect(manifestProblems(pkg, "packages/demo").join("\n")).toMatch(/"types" must be the first condition/);
    pkg.exports = pkg.publishConfig.exports = {
      ".": { default: "./dist/index.js", types: "./dist/index.d.ts" },
    };
    expect(manifestProblems(pkg, "packages/demo").join("\n")).toMatch(/"default" must be the last condition/);
  });

  it("want every export, bin and Pi extension inside files", () => {
    const pkg = library();
    pkg.files = ["dist/index.js"];
    pkg.bin = { demo: "./bundle/demo.mjs" };
    pkg.pi = { extensions: ["./bundle/extension.mjs"] };
    const problems = manifestProblems(pkg, "packages/demo").join("\n");
    expect(problems).toMatch(/dist\/index.d.ts is promised but not in "files"/);
    expect(problems).toMatch(/bundle\/demo.mjs is promised but not in "files"/);
    expect(problems).toMatch(/bundle\/extension.mjs is promised but not in "files"/);
  });

  it("refuse a private app and a public package depending on a private one", () => {
    const problems = workspaceProblems([
      { dir: "apps/demo", manifest: { name: "@x/app", private: true } },
      { dir: "packages/lib", manifest: { name: "@x/lib", dependencies: { "@x/internal": "workspace:^" } } },
      { dir: "packages/internal", manifest: { name: "@x/internal", private: true } },
    ]).join("\n");
    expect(problems).toMatch(/@x\/app: apps are published to npm/);
    expect(problems).toMatch(/@x\/lib: dependencies names the private package @x\/internal/);
  });
});

describe("the tarball rules fail on what must not be published", () => {
  const packed = () => {
    const { publishConfig, exports, ...rest } = library();
    return { ...rest, exports: publishConfig.exports, dependencies: { zod: "4.6.7" } } as Record<
      string,
      unknown
    >;
  };
  const good = ["README.md", "package.json", "dist/index.d.ts", "dist/index.js"];

  it("accept the sample", () => {
    expect(packedManifestProblems(packed())).toEqual([]);
    expect(packedFileProblems(packed(), good)).toEqual([]);
  });

  it("refuse workspace: and catalog: specifiers and the source condition", () => {
    const pkg: Record<string, unknown> = { ...packed(), dependencies: { a: "workspace:^", b: "catalog:" } };
    pkg.exports = { ".": { "@bridgeworks/source": "./src/index.ts", import: "./dist/index.js" } };
    const problems = packedManifestProblems(pkg).join("\n");
    expect(problems).toMatch(/dependencies.a is still "workspace:\^"/);
    expect(problems).toMatch(/dependencies.b is still "catalog:"/);
    expect(problems).toMatch(/@bridgeworks\/source/);
  });

  it("refuse tests, fixtures, sources, build info and configs", () => {
    const problems = packedFileProblems(packed(), [
      ...good,
      "test/board.test.ts",
      "dist/sample.test.js",
      "fixtures/a.json",
      "src/index.ts",
      "dist/.tsbuildinfo",
      "tsconfig.json",
      "vitest.config.ts",
      "bench/x.mjs",
      "notes.txt",
    ]).join("\n");
    for (const file of ["test/board.test.ts", "dist/sample.test.js", "fixtures/a.json", "src/index.ts"])
      expect(problems).toContain(file);
    for (const file of ["dist/.tsbuildinfo", "tsconfig.json", "vitest.config.ts", "bench/x.mjs", "notes.txt"])
      expect(problems).toContain(file);
  });

  it("refuse a tarball missing what package.json promises", () => {
    expect(packedFileProblems(packed(), ["package.json", "dist/index.js"]).join("\n")).toMatch(
      /dist\/index.d.ts is promised by package.json but not in the tarball/,
    );
  });

  it("accept sources that the exports point at", () => {
    const pkg = { ...packed(), exports: { ".": "./src/index.js" } };
    expect(packedFileProblems(pkg, ["package.json", "src/index.js"])).toEqual([]);
  });
});

describe("filesCover (npm's files list)", () => {
  it("takes in directories and globs, in order with negations", () => {
    const files = ["dist", "!dist/.tsbuildinfo", "!dist/**/*.map", "bundle/*.mjs"];
    expect(filesCover(files, "dist/a/b.js")).toBe(true);
    expect(filesCover(files, "dist/.tsbuildinfo")).toBe(false);
    expect(filesCover(files, "dist/a/b.js.map")).toBe(false);
    expect(filesCover(files, "bundle/bee.mjs")).toBe(true);
    expect(filesCover(files, "bundle/ui/app.js")).toBe(false);
    expect(filesCover(files, "src/index.ts")).toBe(false);
  });
});
