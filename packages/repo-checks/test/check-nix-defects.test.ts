// scripts/check-nix.sh (the Nix step of .ci/run) fails on each defect of issues 17 and 34 when it
// is reintroduced into a copy of the repository, naming it, and passes on the copy as it is.
// Each case edits one file of a git-tracked copy (a flake sees only tracked files) and runs the
// whole check with Nix (Debian's nix-bin, installed by the script when missing). The copy uses
// this checkout's installed workspace (node_modules linked: check-nix.sh lists the unit tests
// with its vitest). Every case runs as on a fresh machine: in an empty Nix store of its own
// (CHECK_NIX_STORE), so without nixpkgs' lib, home-manager or the locked nixpkgs (nix/ci/
// upstream.json, flake.lock) and without fetching them: there the model of the upstream rules
// (nix/ci/model) is what refuses the module and meta defects. The last block runs those cases
// again in this machine's own store, where the upstream rules run first if it has their sources:
// the messages are the same either way.
import { spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bumpZod, repoRoot } from "./helpers.js";

// What check-nix.sh reads: the flake, nix/, the workspace (filesets, importers, sandbox tests),
// the workflow and the README.
const copied = [
  "flake.nix",
  "flake.lock",
  "nix",
  "scripts/check-nix.sh",
  "package.json",
  "pnpm-lock.yaml",
  "pnpm-workspace.yaml",
  "turbo.json",
  "tsconfig.base.json",
  "vitest.config.ts",
  "vitest.shared.ts",
  "packages",
  "apps",
  "README.md",
  ".github/workflows/nix.yml",
];

/** `${expression}` in Nix source (written out so it is not mistaken for a template). */
const nixVar = (expression: string) => `$${"{"}${expression}}`;

function git(cwd: string, args: string[]) {
  const result = spawnSync("git", args, { cwd, encoding: "utf8" });
  if (result.status !== 0) throw new Error(`git ${args.join(" ")}: ${result.stderr}`);
  return result.stdout;
}

let pristine: string;

beforeAll(() => {
  pristine = mkdtempSync(join(tmpdir(), "check-nix-defects-"));
  const files = git(repoRoot, ["ls-files", "-z", "--", ...copied])
    .split("\0")
    .filter(Boolean);
  for (const file of files) {
    mkdirSync(dirname(join(pristine, file)), { recursive: true });
    cpSync(join(repoRoot, file), join(pristine, file));
  }
});

afterAll(() => rmSync(pristine, { recursive: true, force: true }));

/** Removes a directory that holds a Nix store (whose directories Nix makes read-only). */
function removeStore(dir: string) {
  spawnSync("chmod", ["-R", "u+w", dir]);
  rmSync(dir, { recursive: true, force: true });
}

/** This checkout's installed workspace, linked into a copy (and kept out of its git index). */
function linkWorkspace(root: string) {
  const dirs = [
    ".",
    ...["packages", "apps"].flatMap((parent) =>
      readdirSync(join(root, parent)).map((name) => join(parent, name)),
    ),
  ];
  for (const dir of dirs) {
    const installed = join(repoRoot, dir, "node_modules");
    if (existsSync(installed) && existsSync(join(root, dir)))
      symlinkSync(installed, join(root, dir, "node_modules"));
  }
  writeFileSync(join(root, ".gitignore"), "node_modules\n");
}

interface CheckOptions {
  /** This machine's own Nix store instead of an empty one. */
  ownStore?: boolean;
  args?: string[];
}

/** A git-tracked copy with `edit` applied; check-nix.sh's exit status and output. */
function checkWith(edit: (root: string) => void, { ownStore = false, args = [] }: CheckOptions = {}) {
  const root = mkdtempSync(join(tmpdir(), "check-nix-case-"));
  // An empty Nix store of the case's own: a fresh machine's, with none of the upstream sources.
  const freshStore = mkdtempSync(join(tmpdir(), "check-nix-fresh-store-"));
  try {
    cpSync(pristine, root, { recursive: true });
    edit(root);
    linkWorkspace(root);
    git(root, ["init", "-q"]);
    git(root, ["add", "-A"]);
    const { GITHUB_ACTIONS: _, CHECK_NIX_STORE: __, ...env } = process.env;
    const result = spawnSync("bash", [join(root, "scripts/check-nix.sh"), "--root", root, ...args], {
      encoding: "utf8",
      env: ownStore ? env : { ...env, CHECK_NIX_STORE: freshStore },
      timeout: 240_000,
      killSignal: "SIGKILL",
    });
    return { status: result.status, output: `${result.stdout}${result.stderr}` };
  } finally {
    rmSync(root, { recursive: true, force: true });
    removeStore(freshStore);
  }
}

function replaceIn(root: string, file: string, from: string | RegExp, to: string) {
  const path = join(root, file);
  const text = readFileSync(path, "utf8");
  const next = text.replace(from, to);
  if (next === text) throw new Error(`${file}: ${String(from)} not found (the fixture is stale)`);
  writeFileSync(path, next);
}

const editJson = (root: string, file: string, edit: (value: Record<string, unknown>) => void) => {
  const value = JSON.parse(readFileSync(join(root, file), "utf8"));
  edit(value);
  writeFileSync(join(root, file), JSON.stringify(value, null, 2));
};

/** Issue 34's module and meta defects: the message names each, whichever path refuses it. */
const moduleAndMetaDefects: {
  what: string;
  edit: (root: string) => void;
  message: string;
  byModel: string;
}[] = [
  {
    what: "meta.platforms leaves out a system the flake builds (nixpkgs' check-meta)",
    edit: (root) =>
      replaceIn(
        root,
        "nix/workspace.nix",
        "platforms = builtins.attrNames tarballs.systems;",
        'platforms = [ "x86_64-linux" "aarch64-darwin" ];',
      ),
    message:
      "aarch64-linux.floot-daemon: Package ‘floot-daemon-0.0.0’ is not available on the requested hostPlatform",
    byModel: "the model of nixpkgs' check-meta platform rule, nix/ci/model/meta.nix",
  },
  {
    what: "the launchd agent's ProcessType is not one launchd knows (home-manager's enum)",
    edit: (root) =>
      replaceIn(root, "nix/hm-module.nix", 'ProcessType = "Background";', 'ProcessType = "Backgroundd";'),
    message:
      'A definition for option `launchd.agents.floot-daemon.config.ProcessType\' is not of type `null or one of "Background", "Standard", "Adaptive", "Interactive"\'',
    byModel: "fails the model of the module system and of the upstream declarations",
  },
  {
    what: "the launchd agent's KeepAlive.SuccessfulExit is a string (home-manager: null or boolean)",
    edit: (root) =>
      replaceIn(root, "nix/hm-module.nix", "SuccessfulExit = false;", 'SuccessfulExit = "false";'),
    message:
      "A definition for option `launchd.agents.floot-daemon.config.KeepAlive.SuccessfulExit' is not of type `null or boolean'",
    byModel: "fails the model of the module system and of the upstream declarations",
  },
  {
    what: "the units leave KillMode at control-group (a stop or restart kills every running turn, issue 31)",
    edit: (root) => replaceIn(root, "nix/systemd.nix", /\n {6}KillMode = "process";\n/, "\n"),
    message:
      "systemd user KillMode is unset (control-group), not process: a stop or restart would kill every running turn with the daemon",
    byModel: "fails the model of the module system and of the upstream declarations",
  },
  {
    what: "the NixOS unit lets systemd remove its runtime dir at a stop (the kept turns' credential files)",
    edit: (root) =>
      replaceIn(root, "nix/nixos-module.nix", /\n {8}RuntimeDirectoryPreserve = "yes";\n/, "\n"),
    message:
      "NixOS RuntimeDirectoryPreserve is not yes: systemd would remove the runtime dir from under the turns KillMode=process keeps running",
    byModel: "fails the model of the module system and of the upstream declarations",
  },
  {
    what: "a NixOS option is misspelt (afterr)",
    edit: (root) =>
      replaceIn(
        root,
        "nix/nixos-module.nix",
        'after = [ "network.target" ];',
        'afterr = [ "network.target" ];',
      ),
    message: "The option `systemd.services.floot-daemon.afterr' does not exist",
    byModel: "fails the model of the module system and of the upstream declarations",
  },
];

describe("scripts/check-nix.sh against reintroduced defects", { timeout: 300_000 }, () => {
  it("passes on the repository as it is", () => {
    const result = checkWith(() => {});
    expect(result.output).toContain(
      "sandbox unit tests, tsconfig references, systems and binary cache agree",
    );
    // The fresh machine's path, said so.
    expect(result.output).toContain(
      "meta and modules: the model of the upstream rules only (nix/ci/model). nixpkgs.lib and home-manager",
    );
    expect(result.output).toContain(
      "NixOS and home-manager modules: the model of lib.evalModules and of home-manager's and NixOS's declarations",
    );
    expect(result.output).toContain(
      "meta.platforms: every package and check evaluates on every system (the model of nixpkgs' check-meta rule)",
    );
    expect(result.status).toBe(0);
  });

  it("1: fails when the dev shell asks for pnpm_12, which the locked nixpkgs does not have", () => {
    const result = checkWith((root) => {
      replaceIn(root, "nix/dev-shell.nix", /^ {2}pnpm,$/m, "  pnpm_12,");
      replaceIn(root, "nix/dev-shell.nix", /^ {4}pnpm$/m, "    pnpm_12");
      replaceIn(root, "flake.nix", "{ inherit (workspaceFor pkgs) pnpm; }", "{ }");
    });
    expect(result.status).toBe(1);
    expect(result.output).toContain("asks for pnpm_12: pnpm_12 is not in the locked nixpkgs");
  });

  it("1: fails on a nixpkgs attribute the list does not have", () => {
    const result = checkWith((root) => {
      replaceIn(root, "nix/dev-shell.nix", /^ {2}git,$/m, "  git,\n  nodejs_24,");
    });
    expect(result.status).toBe(1);
    expect(result.output).toContain("asks for nodejs_24: not in nix/ci/NIXPKGS.md");
  });

  it("2: fails when the dependencies come from fetchPnpmDeps (fetcherVersion 4, pnpm 12) again", () => {
    const result = checkWith((root) => {
      replaceIn(root, "nix/workspace.nix", /^ {2}fetchurl,$/m, "  fetchurl,\n  fetchPnpmDeps,\n  pnpm_12,");
      replaceIn(
        root,
        "nix/workspace.nix",
        "  apps = lib.mapAttrs mkApp manifest.apps;",
        '  pnpmDeps = fetchPnpmDeps { pname = "bridgeworks"; inherit src; pnpm = pnpm_12; fetcherVersion = 4; hash = lib.fakeHash; };\n  apps = builtins.seq pnpmDeps (lib.mapAttrs mkApp manifest.apps);',
      );
    });
    expect(result.status).toBe(1);
    expect(result.output).toMatch(/asks for fetchPnpmDeps, pnpm_12|asks for pnpm_12, fetchPnpmDeps/);
    expect(result.output).toContain("fetcherVersion 4 runs jq over the JSONC tsconfig.json");
  });

  it("2: fails when fetchurl gets an argument the list does not name (here a bare sha256)", () => {
    const result = checkWith((root) => {
      replaceIn(
        root,
        "nix/workspace.nix",
        `inherit (tarballs.tarballs.${nixVar("key")}) hash;`,
        `inherit (tarballs.tarballs.${nixVar("key")}) hash;\n      sha256 = "0000";`,
      );
    });
    expect(result.status).toBe(1);
    expect(result.output).toContain("called with unexpected argument 'sha256'");
  });

  it("3: fails when an app runs its test suite in the sandbox (doCheck)", () => {
    const result = checkWith((root) => {
      replaceIn(
        root,
        "nix/workspace.nix",
        "        doCheck = false;",
        '        doCheck = true;\n        checkPhase = "pnpm --filter @bridgeworks/bee-bridge run test";',
      );
    });
    expect(result.status).toBe(1);
    expect(result.output).toContain("doCheck is on, so its checkPhase runs in the sandbox");
    expect(result.output).toContain("checkPhase starts a test suite in the sandbox");
  });

  it("3: fails when a build phase runs a whole vitest suite", () => {
    const result = checkWith((root) => {
      replaceIn(
        root,
        "nix/workspace.nix",
        `        bridgeworks_build_app ${nixVar("lib.escapeShellArg name")}`,
        `        bridgeworks_build_app ${nixVar("lib.escapeShellArg name")}\n        vitest run`,
      );
    });
    expect(result.status).toBe(1);
    expect(result.output).toContain("buildPhase starts a test suite in the sandbox: vitest run");
  });

  it("3: fails when the sandbox unit tests include a suite that needs PostgreSQL", () => {
    const result = checkWith((root) => {
      editJson(root, "nix/sandbox.json", (sandbox) => {
        (sandbox.unitTests as { projects: string[] }).projects.push("board");
      });
    });
    expect(result.status).toBe(1);
    expect(result.output).toContain(
      "nix/sandbox.json runs board, whose packages/board/vitest.config.ts has a globalSetup",
    );
  });

  it("3: fails when the sandbox unit tests include an app's suite", () => {
    const result = checkWith((root) => {
      editJson(root, "nix/sandbox.json", (sandbox) => {
        (sandbox.unitTests as { projects: string[] }).projects.push("floot-daemon");
      });
    });
    expect(result.status).toBe(1);
    expect(result.output).toContain("an app's suite runs the real clients");
  });

  it("3: fails when a sandbox unit test that starts pnpm is no longer excluded", () => {
    const result = checkWith((root) => {
      editJson(root, "nix/sandbox.json", (sandbox) => {
        (sandbox.unitTests as { exclude: string[] }).exclude = [];
      });
    });
    expect(result.status).toBe(1);
    expect(result.output).toContain(
      "packages/turn-journal/test/torn-write.test.ts (sandbox unit tests) starts pnpm",
    );
  });

  it("6: fails without nixConfig", () => {
    const result = checkWith((root) => {
      replaceIn(root, "flake.nix", /\n {2}nixConfig = \{[\s\S]*?\n {2}\};\n/, "\n");
    });
    expect(result.status).toBe(1);
    expect(result.output).toContain("flake.nix has no nixConfig");
  });

  it("6: fails when nixConfig names another cache than the workflow pushes to", () => {
    const result = checkWith((root) => {
      replaceIn(root, "flake.nix", '"https://bridgeworks.cachix.org"', '"https://example.cachix.org"');
    });
    expect(result.status).toBe(1);
    expect(result.output).toContain("does not include https://bridgeworks.cachix.org");
  });

  it("6: fails when the key in nixConfig is not an ed25519 public key", () => {
    const result = checkWith((root) => {
      replaceIn(
        root,
        "flake.nix",
        /bridgeworks\.cachix\.org-1:[A-Za-z0-9+/]{43}=/,
        "bridgeworks.cachix.org-1:<key>",
      );
    });
    expect(result.status).toBe(1);
    expect(result.output).toContain("is not an ed25519 public key");
  });

  it("6: fails when aarch64-linux is advertised but the workflow never builds it", () => {
    const result = checkWith((root) => {
      replaceIn(
        root,
        ".github/workflows/nix.yml",
        /\n {10}- os: ubuntu-24\.04-arm\n {12}system: aarch64-linux/,
        "",
      );
    });
    expect(result.status).toBe(1);
    expect(result.output).toContain(
      "README.md advertises aarch64-linux, which .github/workflows/nix.yml never builds",
    );
  });

  it("7: fails when environmentFile is types.path again (a path literal lands in the store)", () => {
    const result = checkWith((root) => {
      replaceIn(
        root,
        "nix/nixos-module.nix",
        "lib.types.nullOr lib.types.externalPath",
        "lib.types.nullOr lib.types.path",
      );
    });
    expect(result.status).toBe(1);
    expect(result.output).toContain("environmentFile accepts a path literal");
  });

  it("8: fails when ExecStart is shell-quoted again", () => {
    const result = checkWith((root) => {
      replaceIn(
        root,
        "nix/systemd.nix",
        "execStart = utils.escapeSystemdExecArgs;",
        "execStart = lib.escapeShellArgs;",
      );
    });
    expect(result.status).toBe(1);
    expect(result.output).toContain("not nixpkgs' escapeSystemdExecArgs");
  });

  it("34: fails when model-double's tsconfig does not reference the workspace packages it imports", () => {
    const result = checkWith((root) => {
      writeFileSync(
        join(root, "packages/model-double/tsconfig.json"),
        `${JSON.stringify({ extends: "../../tsconfig.base.json", include: ["src"] }, null, 2)}\n`,
      );
    });
    expect(result.status).toBe(1);
    expect(result.output).toContain(
      "packages/model-double/tsconfig.json does not reference packages/runtime (@bridgeworks/runtime, a workspace dependency)",
    );
  });

  it("34: fails when an excluded unit test would run (an --exclude path vitest does not match)", () => {
    const result = checkWith((root) => {
      replaceIn(root, "nix/build-steps.sh", '--exclude "$PWD/$path"', '--exclude "$path"');
    });
    expect(result.status).toBe(1);
    expect(result.output).toContain(
      "the unit-tests check runs packages/turn-journal/test/torn-write.test.ts, which nix/sandbox.json excludes",
    );
  });

  for (const defect of moduleAndMetaDefects) {
    it(`34: fails when ${defect.what}`, () => {
      const result = checkWith(defect.edit);
      expect(result.status).toBe(1);
      expect(result.output).toContain(defect.message);
      // Refused by the model: the upstream sources are not in this store.
      expect(result.output).toContain(defect.byModel);
    });
  }

  it("fails when pnpm-lock.yaml changed and nix/npm-tarballs.json was not regenerated", () => {
    const result = checkWith((root) => {
      writeFileSync(
        join(root, "pnpm-lock.yaml"),
        bumpZod(readFileSync(join(root, "pnpm-lock.yaml"), "utf8")),
      );
    });
    expect(result.status).toBe(1);
    expect(result.output).toContain("node nix/npm-tarballs.mjs");
  });
});

// The same defects in this machine's own Nix store: where it holds nix/ci/upstream.json's sources
// the upstream rules run (and refuse first), where it does not the model does; the message names
// the defect either way, and the repository as it is passes.
describe("scripts/check-nix.sh --modules-only in this machine's own Nix store", { timeout: 300_000 }, () => {
  const modulesOnly = { ownStore: true, args: ["--modules-only"] };

  it("passes on the repository as it is", () => {
    const result = checkWith(() => {}, modulesOnly);
    expect(result.output).toMatch(/meta and modules: the (upstream rules|model of the upstream rules only)/);
    expect(result.status).toBe(0);
  });

  for (const defect of moduleAndMetaDefects) {
    it(`fails when ${defect.what}`, () => {
      const result = checkWith(defect.edit, modulesOnly);
      expect(result.status).toBe(1);
      expect(result.output).toContain(defect.message);
    });
  }
});
