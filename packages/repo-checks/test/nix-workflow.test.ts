// The nix workflow builds, checks and pushes exactly what the flake exposes: nix/apps.json is the
// one list, read by nix/workspace.nix (packages), flake.nix (checks, package names) and here.
import { describe, expect, it } from "vitest";
import {
  expression,
  installables,
  isRecord,
  readApps,
  readText,
  readWorkflow,
  type Step,
} from "./helpers.js";

const workflow = readWorkflow(".github/workflows/nix.yml");
const apps = readApps();
const appNames = Object.keys(apps.apps).sort();
const expectedBuilt = [...appNames, "pnpm-deps"].sort();

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
    expect(workspace).toContain("lib.mapAttrs mkApp manifest.apps");
    expect(workspace).toMatch(/fetcherVersion = 4;/);
    expect(workspace).toMatch(/pnpm = pnpm_12;/);
    expect(workspace).toContain("pnpmDepsPin = lib.importJSON ./pnpm-deps.json;");
    const flake = readText("flake.nix");
    expect(flake).toContain("appNames = builtins.attrNames (lib.importJSON ./nix/apps.json).apps;");
    // Nix interpolation, not a JS template.
    expect(flake).toContain("lib.genAttrs appNames (name: ws.$" + "{name})");
    expect(flake).toContain("pnpm-deps = ws.pnpmDeps;");
  });
});

describe(".github/workflows/nix.yml", () => {
  const build = workflow.jobs.build;
  const hash = workflow.jobs["pnpm-deps-hash"];

  it("runs on pushes to main, pull requests and by hand", () => {
    expect(isRecord(workflow.on) && Object.keys(workflow.on).sort()).toEqual([
      "pull_request",
      "push",
      "workflow_dispatch",
    ]);
  });

  it("builds on Linux x86_64 and macOS aarch64", () => {
    expect(build?.["runs-on"]).toBe(expression("matrix.os"));
    const matrix = build?.strategy?.matrix;
    expect(isRecord(matrix) && matrix.include).toEqual([
      { os: "ubuntu-24.04", system: "x86_64-linux" },
      { os: "macos-15", system: "aarch64-darwin" },
    ]);
  });

  it.each(["build", "pnpm-deps-hash"])("%s installs Nix and Cachix (pull-only without the secret)", (id) => {
    const steps = workflow.jobs[id]?.steps;
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
      (step) => typeof step.run === "string" && /\bnix\b|refresh-pnpm/.test(step.run),
    );
    expect(firstNix).toBeGreaterThan((steps ?? []).indexOf(cachix as Step));
  });

  it("runs nix flake check", () => {
    expect(runSteps(build?.steps).some((run) => /^nix flake check\b/m.test(run))).toBe(true);
  });

  it("builds exactly the flake's apps and the pnpm dependency store", () => {
    const builds = runSteps(build?.steps).filter(
      (run) => /\bnix build\b/.test(run) && !run.includes("cachix push"),
    );
    expect(builds).toHaveLength(1);
    expect(installables(builds[0] as string)).toEqual(expectedBuilt);
  });

  it("pushes the apps and the pnpm dependency store to the cache, only with the secret", () => {
    const push = (build?.steps ?? []).find(
      (step) => typeof step.run === "string" && step.run.includes("cachix push"),
    );
    expect(push?.run).toMatch(/\|\s*cachix push bridgeworks\s*$/);
    expect(installables(push?.run ?? "")).toEqual(expectedBuilt);
    expect(push?.if).toBe(expression("env.CACHIX_AUTH_TOKEN != ''"));
    expect(build?.env?.CACHIX_AUTH_TOKEN).toBe(expression("secrets.CACHIX_AUTH_TOKEN"));
  });

  it("refreshes the pnpm dependency hash before building, and fails when it is stale", () => {
    expect(build?.needs).toBe("pnpm-deps-hash");
    const runs = runSteps(hash?.steps);
    expect(runs).toContain("bash scripts/refresh-pnpm-deps-hash.sh");
    expect(runs.some((run) => run.includes("git diff --exit-code -- nix/pnpm-deps.json"))).toBe(true);
  });
});
