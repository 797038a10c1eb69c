// Releases: changesets opens the version PR and publishes with npm trusted publishing (OIDC) and
// provenance; no npm token anywhere.
import { describe, expect, it } from "vitest";
import { expression, readJson, readWorkflow, type Step } from "./helpers.js";

const file = ".github/workflows/release.yml";
const workflow = readWorkflow(file);
const job = workflow.jobs.release;
const steps: Step[] = job?.steps ?? [];

function versionAtLeast(version: string, minimum: string): boolean {
  const a = version.split(".").map(Number);
  const b = minimum.split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  }
  return true;
}

describe(".github/workflows/release.yml", () => {
  it("runs on pushes to main", () => {
    expect(workflow.on).toEqual({ push: { branches: ["main"] } });
  });

  it("may mint an OIDC token, push the version commit and open the version pull request", () => {
    expect(job?.permissions).toEqual({ contents: "write", "pull-requests": "write", "id-token": "write" });
  });

  it("installs npm 11.5.1 or later (trusted publishing)", () => {
    const npm = steps
      .map((step) => /npm install -g npm@(\d+\.\d+\.\d+)/.exec(step.run ?? "")?.[1])
      .find(Boolean);
    expect(npm).toBeDefined();
    expect(versionAtLeast(npm as string, "11.5.1")).toBe(true);
  });

  it("installs the pnpm version the workspace pins", () => {
    const { packageManager } = readJson("package.json") as { packageManager: string };
    expect(steps.some((step) => step.run === `npm install -g ${packageManager}`)).toBe(true);
  });

  it("builds before changesets publishes, with provenance", () => {
    const action = steps.findIndex((step) => step.uses === "changesets/action@v1");
    const buildStep = steps.findIndex((step) => step.run === "pnpm run build");
    expect(action).toBeGreaterThan(-1);
    expect(buildStep).toBeGreaterThan(-1);
    expect(buildStep).toBeLessThan(action);
    const changesets = steps[action] as Step;
    expect(changesets.with?.version).toMatch(/changeset version$/);
    expect(changesets.with?.publish).toMatch(/changeset publish$/);
    expect(changesets.env?.NPM_CONFIG_PROVENANCE).toBe("true");
    expect(changesets.env?.GITHUB_TOKEN).toBe(expression("secrets.GITHUB_TOKEN"));
  });

  it("uses no npm token (trusted publishing only)", () => {
    // Every key and value of the workflow (comments may explain why there is none).
    expect(JSON.stringify(workflow)).not.toMatch(/NPM_TOKEN|NODE_AUTH_TOKEN|_authToken/);
  });
});
