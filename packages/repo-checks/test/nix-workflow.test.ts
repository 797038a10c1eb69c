// The nix workflow builds, checks and pushes exactly what the flake exposes, on every system it
// offers: nix/apps.json is the one list of apps and nix/npm-tarballs.json the one list of systems,
// read by nix/workspace.nix, flake.nix and here.
import { describe, expect, it } from "vitest";
import {
  expression,
  installables,
  isRecord,
  readApps,
  readJson,
  readText,
  readWorkflow,
  type Step,
} from "./helpers.js";

const workflow = readWorkflow(".github/workflows/nix.yml");
const apps = readApps();
const appNames = Object.keys(apps.apps).sort();
const systems = Object.keys((readJson("nix/npm-tarballs.json") as { platforms: object }).platforms).sort();

function runSteps(steps: Step[] | undefined): string[] {
  return (steps ?? []).flatMap((step) => (typeof step.run === "string" ? [step.run] : []));
}

function stepUsing(steps: Step[] | undefined, action: string): Step | undefined {
  return (steps ?? []).find((step) => step.uses?.split("@")[0] === action);
}

describe("nix/apps.json is the list the Nix code reads", () => {
  it("names three apps with their workspace packages and bundles", () => {
    expect(appNames).toEqual(["bee-bridge", "floot-daemon", "pi-provider"]);
    for (const [name, app] of Object.entries(apps.apps)) {
      expect(app.workspace).toBe(`@bridgeworks/${name}`);
      expect(app.dir).toBe(`apps/${name}`);
      expect(["cli", "pi-package"]).toContain(app.kind);
      expect(app.entry).toMatch(/^bundle\/[\w.-]+\.mjs$/);
      expect(app.mainProgram).toMatch(/^[a-z][\w-]*$/);
      expect(Array.isArray(app.externals) && Array.isArray(app.hostProvided)).toBe(true);
    }
    expect(apps.apps["bee-bridge"]?.mainProgram).toBe("bee");
    expect(apps.apps["floot-daemon"]?.mainProgram).toBe("floot");
    expect(apps.apps["pi-provider"]?.kind).toBe("pi-package");
  });

  it("is what nix/workspace.nix packages and flake.nix exposes", () => {
    const workspace = readText("nix/workspace.nix");
    expect(workspace).toContain("manifest = lib.importJSON ./apps.json;");
    expect(workspace).toContain("apps = lib.mapAttrs mkApp manifest.apps;");
    expect(workspace).toContain("tarballs = lib.importJSON ./npm-tarballs.json;");
    const flake = readText("flake.nix");
    expect(flake).toContain("appNames = builtins.attrNames (lib.importJSON ./nix/apps.json).apps;");
    // Nix interpolation, not a JS template.
    expect(flake).toContain("lib.genAttrs appNames (name: ws.$" + "{name})");
    expect(flake).toContain(
      "systems = builtins.attrNames (lib.importJSON ./nix/npm-tarballs.json).platforms;",
    );
  });
});

describe(".github/workflows/nix.yml", () => {
  const build = workflow.jobs.build;

  it("is one job: nothing to refresh or commit before building", () => {
    expect(Object.keys(workflow.jobs)).toEqual(["build"]);
    expect(build?.needs).toBeUndefined();
    expect(workflow.permissions).toEqual({ contents: "read" });
    expect(JSON.stringify(workflow)).not.toMatch(/pnpm-deps|refresh-pnpm|git push|git commit/);
  });

  it("runs on pushes to main, pull requests and by hand", () => {
    expect(isRecord(workflow.on) && Object.keys(workflow.on).sort()).toEqual([
      "pull_request",
      "push",
      "workflow_dispatch",
    ]);
  });

  it("builds every system the flake offers, each on a runner of that system", () => {
    expect(build?.["runs-on"]).toBe(expression("matrix.os"));
    const matrix = build?.strategy?.matrix;
    expect(isRecord(matrix) && matrix.include).toEqual([
      { os: "ubuntu-24.04", system: "x86_64-linux" },
      { os: "ubuntu-24.04-arm", system: "aarch64-linux" },
      { os: "macos-15", system: "aarch64-darwin" },
    ]);
    const include = (isRecord(matrix) ? matrix.include : []) as { system: string }[];
    expect(include.map((entry) => entry.system).sort()).toEqual(systems);
    expect(runSteps(build?.steps)).toContain(
      `test "$(nix eval --raw --impure --expr builtins.currentSystem)" = "${expression("matrix.system")}"`,
    );
  });

  it("installs Nix and Cachix (pull-only without the secret) before running Nix", () => {
    const steps = build?.steps;
    const installNix = stepUsing(steps, "cachix/install-nix-action");
    const cachix = stepUsing(steps, "cachix/cachix-action");
    expect(installNix?.uses).toBe("cachix/install-nix-action@v31");
    expect(cachix?.uses).toBe("cachix/cachix-action@v17");
    expect(cachix?.with).toMatchObject({
      name: "bridgeworks",
      authToken: expression("secrets.CACHIX_AUTH_TOKEN"),
      skipPush: expression("secrets.CACHIX_AUTH_TOKEN == ''"),
    });
    const firstNix = (steps ?? []).findIndex(
      (step) => typeof step.run === "string" && /(^|[\s(])nix\s/m.test(step.run),
    );
    expect(firstNix).toBeGreaterThan((steps ?? []).indexOf(cachix as Step));
  });

  it("uses the cache only once it is set up: the first run, before the one-time setup, goes green", () => {
    const steps = build?.steps ?? [];
    const ready = steps.find((step) => step.run === "bash nix/ci/cache-ready.sh bridgeworks");
    expect(ready?.id).toBe("cache");
    expect(ready?.if).toBeUndefined();
    const readyIndex = steps.indexOf(ready as Step);
    const usesCache = steps.filter(
      (step) =>
        step.uses?.startsWith("cachix/cachix-action@") ||
        (typeof step.run === "string" && /cachix push|cache-key\.sh/.test(step.run)),
    );
    expect(usesCache).toHaveLength(3);
    for (const step of usesCache) {
      expect(steps.indexOf(step)).toBeGreaterThan(readyIndex);
      expect(step.if).toContain("steps.cache.outputs.ready == 'true'");
    }
  });

  it("runs the sandboxed unit tests on every runner: x86_64-linux, aarch64-linux and aarch64-darwin", () => {
    const step = (build?.steps ?? []).find(
      (candidate) => typeof candidate.run === "string" && candidate.run.includes(".unit-tests"),
    );
    expect(step?.run).toBe(`nix build -L --no-link .#checks.${expression("matrix.system")}.unit-tests`);
    expect(step?.if).toBeUndefined();
  });

  it("evaluates the modules against the locked nixpkgs' declarations after nix flake check", () => {
    const runs = runSteps(build?.steps);
    const modules = runs.indexOf("bash scripts/check-nix.sh --modules-only --require-upstream");
    expect(modules).toBeGreaterThan(runs.indexOf("nix flake check -L"));
  });

  it("uses no secret but CACHIX_AUTH_TOKEN", () => {
    const secrets = [...JSON.stringify(workflow).matchAll(/secrets\.([A-Za-z_]+)/g)].map((match) => match[1]);
    expect(new Set(secrets)).toEqual(new Set(["CACHIX_AUTH_TOKEN"]));
  });

  it("runs nix flake check, which builds the apps and the sandbox unit tests", () => {
    expect(runSteps(build?.steps).some((run) => /^nix flake check -L$/m.test(run))).toBe(true);
  });

  it("builds exactly the flake's apps", () => {
    const builds = runSteps(build?.steps).filter(
      (run) => /\bnix build\b/.test(run) && !run.includes("cachix push") && !run.includes("#checks."),
    );
    expect(builds).toHaveLength(1);
    expect(installables(builds[0] as string)).toEqual(appNames);
  });

  it("pushes the apps to the cache, only with the secret", () => {
    const push = (build?.steps ?? []).find(
      (step) => typeof step.run === "string" && step.run.includes("cachix push"),
    );
    expect(push?.run).toMatch(/\|\s*cachix push bridgeworks\s*$/);
    expect(installables(push?.run ?? "")).toEqual(appNames);
    expect(push?.if).toBe(expression("env.CACHIX_AUTH_TOKEN != '' && steps.cache.outputs.ready == 'true'"));
    expect(build?.env?.CACHIX_AUTH_TOKEN).toBe(expression("secrets.CACHIX_AUTH_TOKEN"));
  });

  it("compares flake.nix's cache key with the cache's, last", () => {
    const runs = runSteps(build?.steps);
    expect(runs.at(-1)).toBe("bash nix/ci/cache-key.sh bridgeworks");
  });
});
