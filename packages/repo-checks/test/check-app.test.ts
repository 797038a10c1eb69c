// nix/check-app.mjs (the Nix build's installCheckPhase) against made-up installed apps and Pi hosts.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { repoRoot } from "./helpers.js";

const script = join(repoRoot, "nix/check-app.mjs");

/** `${name}` for a shell script (written out so it is not mistaken for a template). */
const shellVar = (name: string) => `$${"{"}${name}}`;

function write(path: string, content: string, mode = 0o644) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  chmodSync(path, mode);
}

/** A Pi CLI that lists provider `demo` only when given a package whose package.json has pi.extensions. */
const piHost = (listsAlways = false) => `#!/usr/bin/env node
import { existsSync, readFileSync } from "node:fs";
const args = process.argv.slice(2);
const at = args.indexOf("-e");
const pkg = at >= 0 ? JSON.parse(readFileSync(args[at + 1] + "/package.json", "utf8")) : null;
const loaded = ${listsAlways} || (pkg && pkg.pi && pkg.pi.extensions.every((e) => existsSync(args[at + 1] + "/" + e)));
console.error("provider  model");
if (loaded) console.error("demo      small\\ndemo      large");
`;

describe("nix/check-app.mjs", () => {
  let root: string;
  const apps = {
    apps: {
      tool: {
        workspace: "@bridgeworks/tool",
        dir: "apps/tool",
        kind: "cli",
        mainProgram: "tool",
        entry: "bundle/tool.mjs",
        nativeExecutables: [],
      },
      ext: {
        workspace: "@bridgeworks/ext",
        dir: "apps/ext",
        kind: "pi-package",
        mainProgram: "ext-path",
        entry: "bundle/extension.mjs",
        nativeExecutables: ["helper-bin"],
        piProvider: "demo",
        piHosts: ["@fake/pi"],
      },
    },
  };
  const run = (name: string, workspace?: string) =>
    spawnSync(
      process.execPath,
      [script, join(root, "apps.json"), name, join(root, "out", name), ...(workspace ? [workspace] : [])],
      { encoding: "utf8" },
    );

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "check-app-"));
    write(join(root, "apps.json"), JSON.stringify(apps));
    write(join(root, "out/tool/lib/tool/package.json"), JSON.stringify({ version: "1.2.3" }));
    write(join(root, "out/tool/bin/tool"), '#!/bin/sh\n[ "$1" = --version ] && echo "tool 1.2.3"\n', 0o755);

    write(
      join(root, "out/ext/lib/ext/package.json"),
      JSON.stringify({ version: "0.1.0", pi: { extensions: ["./bundle/extension.mjs"] } }),
    );
    write(join(root, "out/ext/lib/ext/bundle/extension.mjs"), "export default function () {}\n");
    write(
      join(root, "out/ext/lib/ext/node_modules/@x/sdk-linux/helper-bin"),
      '#!/bin/sh\necho "helper 9"\n',
      0o755,
    );
    write(
      join(root, "ws/apps/ext/node_modules/@fake/pi/package.json"),
      JSON.stringify({ name: "@fake/pi", version: "5.0.0", bin: { pi: "cli.mjs" } }),
    );
    write(join(root, "ws/apps/ext/node_modules/@fake/pi/cli.mjs"), piHost(), 0o755);
  });

  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("passes a CLI whose --version prints its version", () => {
    const result = run("tool");
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("check-app: tool: tool --version: tool 1.2.3");
  });

  it.each([
    ["passes", "node --", 0],
    ["fails", "node", 1],
  ])(
    "%s a CLI whose wrapper runs `%s <entry>` (node acts on a --env-file before `--` only)",
    (_, node, status) => {
      write(
        join(root, "out/tool/lib/tool/bundle/tool.mjs"),
        'if (process.argv[2] === "--version") console.log("tool 1.2.3");\nelse process.exitCode = 2;\n',
      );
      write(
        join(root, "out/tool/bin/tool"),
        `#!/bin/sh\nexec ${node} "${shellVar("0%/bin/tool")}/lib/tool/bundle/tool.mjs" "$@"\n`,
        0o755,
      );
      const result = run("tool");
      expect(result.status).toBe(status);
      if (status === 0) {
        expect(result.stdout).toContain("tool --env-file F: left to the program (exit 2), node read no file");
      } else {
        expect(result.stderr).toContain("tool --env-file F: node ran F's NODE_OPTIONS before the program");
      }
    },
  );

  it("fails a CLI whose --version prints another version", () => {
    write(join(root, "out/tool/bin/tool"), '#!/bin/sh\necho "tool 9.9.9"\n', 0o755);
    const result = run("tool");
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("not the version 1.2.3");
  });

  it("fails a CLI that has no --version (exits non-zero)", () => {
    write(
      join(root, "out/tool/bin/tool"),
      '#!/bin/sh\necho "unknown command --version" >&2; exit 2\n',
      0o755,
    );
    const result = run("tool");
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("tool --version exited 2: unknown command --version");
  });

  it("passes a Pi package its hosts load, and runs its native executables", () => {
    const result = run("ext", join(root, "ws"));
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("@fake/pi 5.0.0 loads it: small, large");
    expect(result.stdout).toContain("helper-bin --version: helper 9");
  });

  it("fails a Pi package whose extension file is missing (the host lists no models)", () => {
    rmSync(join(root, "out/ext/lib/ext/bundle/extension.mjs"));
    const result = run("ext", join(root, "ws"));
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("@fake/pi 5.0.0 did not load");
  });

  it("fails when the host lists the provider without the package (the check could not tell)", () => {
    write(join(root, "ws/apps/ext/node_modules/@fake/pi/cli.mjs"), piHost(true), 0o755);
    const result = run("ext", join(root, "ws"));
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("lists provider demo without the package");
  });

  it("fails when a native executable is missing or does not run", () => {
    rmSync(join(root, "out/ext/lib/ext/node_modules/@x"), { recursive: true });
    expect(run("ext", join(root, "ws")).stderr).toContain("no executable named helper-bin");
    write(join(root, "out/ext/lib/ext/node_modules/@x/sdk-linux/helper-bin"), "#!/bin/sh\nexit 139\n", 0o755);
    const result = run("ext", join(root, "ws"));
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("helper-bin --version exited 139");
  });

  it("passes no secret from the environment to what it runs", () => {
    write(
      join(root, "out/tool/bin/tool"),
      `#!/bin/sh\necho "tool 1.2.3 ${shellVar("ANTHROPIC_API_KEY:-none")}"\n`,
      0o755,
    );
    const result = spawnSync(
      process.execPath,
      [script, join(root, "apps.json"), "tool", join(root, "out/tool")],
      {
        encoding: "utf8",
        env: { ...process.env, ANTHROPIC_API_KEY: "sk-test-secret" },
      },
    );
    expect(result.status).toBe(0);
    expect(result.stdout).toContain("tool 1.2.3 none");
  });
});
