// nix/install-app.mjs (the Nix installPhase/installCheckPhase) against a made-up pnpm workspace.
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { repoRoot } from "./helpers.js";

const script = join(repoRoot, "nix/install-app.mjs");

function write(path: string, content: string) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
}

/** A package in pnpm's layout: node_modules/.pnpm/<name>@<version>/node_modules/<name>. */
function pnpmPackage(
  root: string,
  name: string,
  version: string,
  pkg: object,
  files: Record<string, string> = {},
) {
  const dir = join(root, "node_modules/.pnpm", `${name.replace("/", "+")}@${version}`, "node_modules", name);
  write(join(dir, "package.json"), JSON.stringify({ name, version, ...pkg }));
  for (const [file, content] of Object.entries(files)) write(join(dir, file), content);
  return dir;
}

function link(target: string, path: string) {
  mkdirSync(dirname(path), { recursive: true });
  symlinkSync(target, path);
}

describe("nix/install-app.mjs", () => {
  let root: string;
  let out: string;
  const manifest = {
    apps: {
      demo: {
        workspace: "@bridgeworks/demo",
        dir: "apps/demo",
        kind: "cli",
        description: "demo",
        mainProgram: "demo",
        entry: "bundle/demo.mjs",
        externals: ["native-thing"],
        hostProvided: [],
      },
      ext: {
        workspace: "@bridgeworks/ext",
        dir: "apps/ext",
        kind: "pi-package",
        description: "ext",
        mainProgram: "ext-path",
        entry: "bundle/extension.mjs",
        externals: [],
        hostProvided: ["@mariozechner/*", "typebox"],
      },
    },
    allowBuilds: [],
    runtimeOmit: ["prebuild-install"],
  };

  const run = (mode: string, app: string, appsJson = join(root, "apps.json")) =>
    spawnSync(process.execPath, [script, mode, appsJson, app, out], { cwd: root, encoding: "utf8" });

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "install-app-"));
    out = join(root, "out");
    write(join(root, "apps.json"), JSON.stringify(manifest));

    // apps/demo: a bundle that imports a native package, which needs a helper and (at install time
    // only) prebuild-install.
    write(
      join(root, "apps/demo/package.json"),
      JSON.stringify({ name: "@bridgeworks/demo", version: "1.2.3" }),
    );
    write(
      join(root, "apps/demo/bundle/demo.mjs"),
      'import Database from "native-thing";\nimport { readFileSync } from "node:fs";\nimport { a } from "./chunk.mjs";\nimport "path";\n',
    );
    write(join(root, "apps/demo/bundle/chunk.mjs"), "export const a = 1;\n");
    write(join(root, "apps/demo/bundle/web/index.html"), "<!doctype html>\n");
    const native = pnpmPackage(
      root,
      "native-thing",
      "1.0.0",
      {
        dependencies: { helper: "^2", "prebuild-install": "^7" },
        optionalDependencies: { "native-thing-win32": "1" },
      },
      {
        "index.js": "module.exports = require('helper');\n",
        "binding.gyp": "{}\n",
        "build/Release/obj.target/thing.o": "object file",
        "build/Makefile": "all:\n",
        "deps/sqlite3.c": "int main;\n",
        "node_modules/.bin/prebuild-install": "#!/bin/sh\n",
      },
    );
    const helper = pnpmPackage(root, "helper", "2.0.0", {}, { "index.js": "module.exports = 2;\n" });
    const prebuild = pnpmPackage(root, "prebuild-install", "7.1.3", {}, { "index.js": "" });
    link(helper, join(dirname(native), "helper"));
    link(prebuild, join(dirname(native), "prebuild-install"));
    link(native, join(root, "apps/demo/node_modules/native-thing"));

    // apps/ext: a Pi package importing Pi's own modules.
    write(
      join(root, "apps/ext/package.json"),
      JSON.stringify({ name: "@bridgeworks/ext", version: "0.1.0", pi: { extensions: ["./src/index.ts"] } }),
    );
    write(
      join(root, "apps/ext/bundle/extension.mjs"),
      'import { stream } from "@mariozechner/pi-ai";\nimport { Type } from "typebox";\nexport default function (pi) {}\n',
    );
  });

  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("installs the bundle directory and the external with its runtime dependencies", () => {
    const result = run("install", "demo");
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(readFileSync(join(out, "bundle/demo.mjs"), "utf8")).toContain("native-thing");
    expect(existsSync(join(out, "bundle/web/index.html"))).toBe(true);
    expect(existsSync(join(out, "node_modules/native-thing/index.js"))).toBe(true);
    expect(existsSync(join(out, "node_modules/helper/index.js"))).toBe(true);
    expect(JSON.parse(readFileSync(join(out, "package.json"), "utf8"))).toMatchObject({
      name: "@bridgeworks/demo",
      version: "1.2.3",
      type: "module",
      private: true,
    });
  });

  it("leaves out install-time dependencies, build intermediates, C sources and nested node_modules", () => {
    expect(run("install", "demo").status).toBe(0);
    expect(existsSync(join(out, "node_modules/prebuild-install"))).toBe(false);
    expect(existsSync(join(out, "node_modules/native-thing/build"))).toBe(false);
    expect(existsSync(join(out, "node_modules/native-thing/deps"))).toBe(false);
    expect(existsSync(join(out, "node_modules/native-thing/node_modules"))).toBe(false);
  });

  it("keeps only the addons the native package's JavaScript loads", () => {
    const native = join(root, "node_modules/.pnpm/native-thing@1.0.0/node_modules/native-thing");
    write(join(native, "index.js"), "module.exports = require('bindings')('thing.node');\n");
    write(join(native, "build/Release/thing.node"), "not an ELF or Mach-O file");
    // better-sqlite3 builds an SQLite extension beside its addon; nothing loads it into Node.
    write(join(native, "build/Release/test_extension.node"), "an SQLite extension");
    write(join(native, "build/Release/obj.target/thing.node"), "intermediate");
    const result = run("install", "demo");
    expect(existsSync(join(out, "node_modules/native-thing/build/Release/thing.node"))).toBe(true);
    expect(existsSync(join(out, "node_modules/native-thing/build/Release/test_extension.node"))).toBe(false);
    expect(existsSync(join(out, "node_modules/native-thing/build/Release/obj.target"))).toBe(false);
    // The kept addon is then loaded, and this one is not a real addon.
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      "native addon node_modules/native-thing/build/Release/thing.node does not load",
    );
    expect(result.stderr).not.toContain("test_extension");
  });

  it("fails when an external is not installed in the workspace", () => {
    rmSync(join(root, "apps/demo/node_modules"), { recursive: true });
    rmSync(join(root, "node_modules/.pnpm/native-thing@1.0.0"), { recursive: true });
    const result = run("install", "demo");
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("native-thing: package not found");
  });

  it("fails when the bundle imports a package that is neither external nor host-provided", () => {
    write(join(root, "apps/demo/bundle/chunk.mjs"), 'import zod from "zod";\nexport const a = zod;\n');
    const result = run("install", "demo");
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("zod (imported by bundle/chunk.mjs)");
    expect(result.stderr).toContain('"externals"');
  });

  it("fails when the build produced no entry", () => {
    rmSync(join(root, "apps/demo/bundle/demo.mjs"));
    const result = run("install", "demo");
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("bundle/demo.mjs is missing");
  });

  it("verify fails when an installed native addon does not load", () => {
    expect(run("install", "demo").status).toBe(0);
    write(join(out, "node_modules/native-thing/build/Release/thing.node"), "not an ELF or Mach-O file");
    const result = run("verify", "demo");
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      "native addon node_modules/native-thing/build/Release/thing.node does not load",
    );
  });

  it("verify fails when an external was removed after install", () => {
    expect(run("install", "demo").status).toBe(0);
    expect(run("verify", "demo").status).toBe(0);
    rmSync(join(out, "node_modules/native-thing"), { recursive: true });
    const result = run("verify", "demo");
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("native-thing");
  });

  it("installs a Pi package whose package.json names the bundled extension", () => {
    const result = run("install", "ext");
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    const pkg = JSON.parse(readFileSync(join(out, "package.json"), "utf8"));
    expect(pkg.pi).toEqual({ extensions: ["./bundle/extension.mjs"] });
    expect(pkg.keywords).toContain("pi-package");
    expect(existsSync(join(out, "node_modules"))).toBe(false);
  });

  it("refuses an app that is not in apps.json", () => {
    const result = run("install", "nope");
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("nope is not an app");
  });
});
