// nix/ci/model stands in for nixpkgs' module system, check-meta rule and the option declarations
// of home-manager and NixOS where their sources are not in the Nix store (a fresh machine). Like
// the stand-in for nixpkgs, it may encode only what was read upstream: every option it declares
// names the upstream file and revision it was read from, and every revision it names is one
// nix/ci/NIXPKGS.md ("The model") records.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readText, repoRoot } from "./helpers.js";

interface Declared {
  option: string;
  source: string;
}

function modelSources(): { homeManager: Declared[]; nixos: Declared[] } {
  const result = spawnSync(
    "nix-instantiate",
    ["--eval", "--strict", "--json", join(repoRoot, "nix/ci/model/sources.nix")],
    {
      encoding: "utf8",
      env: { ...process.env, NIX_CONFIG: "build-users-group =\nsubstituters =\n" },
    },
  );
  if (result.error || result.status !== 0) {
    throw new Error(
      `nix-instantiate of nix/ci/model/sources.nix failed (scripts/check-nix.sh installs nix): ${result.error?.message ?? result.stderr}`,
    );
  }
  return JSON.parse(result.stdout);
}

/** The first cells of the table under `## The model` in NIXPKGS.md: `<source> <revision>`. */
function recordedRevisions(): string[] {
  const markdown = readText("nix/ci/NIXPKGS.md");
  const section = markdown.split(/^## /m).find((part) => part.startsWith("The model"));
  if (!section) throw new Error("nix/ci/NIXPKGS.md has no section `## The model`");
  return [...section.matchAll(/^\| `([a-z.-]+ [0-9a-f]{7})`/gm)].map((match) => match[1] as string);
}

describe("nix/ci/model names its upstream sources", () => {
  const revisions = recordedRevisions();
  const { homeManager, nixos } = modelSources();

  it("NIXPKGS.md records the revisions the model was read at", () => {
    expect(revisions).toEqual(
      expect.arrayContaining([
        "nixpkgs.lib de42d44",
        "home-manager ec1a8fd",
        "nixpkgs 515c8fb",
        "nixpkgs 2faec4e",
        "nixpkgs 6f03be6",
      ]),
    );
  });

  it("every option it declares names a recorded revision and the file there", () => {
    const unnamed = [...homeManager, ...nixos].filter(
      ({ source }) => !revisions.some((revision) => new RegExp(`^${revision} \\S+\\.nix\\b`).test(source)),
    );
    expect(unnamed).toEqual([]);
  });

  it("declares the options issue 34's defects are refused by, each with its source", () => {
    const sourceOf = (list: Declared[], option: string) => list.find((d) => d.option === option)?.source;
    expect(sourceOf(homeManager, "launchd.agents.config.ProcessType")).toBe(
      "home-manager ec1a8fd modules/launchd/launchd.nix:668",
    );
    expect(sourceOf(homeManager, "launchd.agents.config.KeepAlive.SuccessfulExit")).toBe(
      "home-manager ec1a8fd modules/launchd/launchd.nix:207",
    );
    expect(sourceOf(nixos, "systemd.services.after")).toBe(
      "nixpkgs 515c8fb nixos/lib/systemd-unit-options.nix (commonUnitOptions.after)",
    );
  });

  it("each of its files names the recorded revisions it was read at", () => {
    const dir = join(repoRoot, "nix/ci/model");
    const unnamed = readdirSync(dir)
      // sources.nix and declare.nix encode no upstream fact: they list and shape declarations.
      .filter((name) => name.endsWith(".nix") && !["sources.nix", "declare.nix"].includes(name))
      .filter((name) => {
        const text = readText(`nix/ci/model/${name}`);
        return !revisions.some((revision) => text.includes(revision.split(" ")[1] as string));
      });
    expect(unnamed).toEqual([]);
  });
});
