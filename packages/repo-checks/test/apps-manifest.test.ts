// nix/apps.json agrees with the workspace: the install scripts Nix runs are the ones pnpm allows,
// and each app is the package, binary and bundle the Nix build expects.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isRecord, readApps, readJson, readYaml, repoRoot } from "./helpers.js";

const apps = readApps();

describe("nix/apps.json", () => {
  it("runs exactly the install scripts pnpm-workspace.yaml allows", () => {
    const workspace = readYaml("pnpm-workspace.yaml");
    const allowBuilds = isRecord(workspace) && isRecord(workspace.allowBuilds) ? workspace.allowBuilds : {};
    const allowed = Object.entries(allowBuilds)
      .filter(([, allow]) => allow === true)
      .map(([name]) => name)
      .sort();
    expect([...apps.allowBuilds].sort()).toEqual(allowed);
  });

  describe.each(Object.entries(apps.apps))("%s", (name, app) => {
    const pkg = () =>
      readJson(`${app.dir}/package.json`) as {
        name: string;
        scripts?: Record<string, string>;
        bin?: Record<string, string> | string;
        pi?: { extensions?: string[] };
        dependencies?: Record<string, string>;
      };

    it(`is the package ${app.workspace} with build and test scripts`, () => {
      expect(pkg().name).toBe(app.workspace);
      expect(pkg().scripts?.build).toBeTruthy();
      expect(pkg().scripts?.test).toBeTruthy();
    });

    it(`exposes ${app.mainProgram} or its Pi extension`, () => {
      if (app.kind === "cli") {
        const bin = pkg().bin;
        expect(isRecord(bin) && Object.keys(bin)).toContain(app.mainProgram);
      } else {
        expect(pkg().pi?.extensions).toContain(`./${app.entry}`);
      }
    });

    it("depends on every package its bundle leaves external", () => {
      for (const external of app.externals) expect(Object.keys(pkg().dependencies ?? {})).toContain(external);
    });

    it(`lives in ${app.dir}`, () => {
      expect(app.dir).toBe(`apps/${name}`);
      expect(existsSync(join(repoRoot, app.dir, "package.json"))).toBe(true);
    });
  });
});
