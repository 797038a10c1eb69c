// nix/ci/NIXPKGS.md lists the nixpkgs definitions the flake depends on; the stand-in
// (nix/ci/stub-nixpkgs) has exactly those, takes exactly the arguments listed, and refuses the
// names the "Refused" table gives.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readText, repoRoot } from "./helpers.js";

interface Surface {
  names: string[];
  refused: string[];
  arguments: Record<string, string[]>;
}

function surface(): Surface {
  const result = spawnSync(
    "nix",
    ["eval", "--json", "--file", join(repoRoot, "nix/ci/stub-nixpkgs/surface.nix")],
    {
      encoding: "utf8",
      env: {
        ...process.env,
        NIX_CONFIG: "experimental-features = nix-command flakes\nbuild-users-group =\nsubstituters =\n",
      },
    },
  );
  if (result.error || result.status !== 0) {
    throw new Error(
      `nix eval of the stand-in's surface failed (scripts/check-nix.sh installs nix): ${result.error?.message ?? result.stderr}`,
    );
  }
  return JSON.parse(result.stdout) as Surface;
}

/** The table rows of each `## ` section: [first cell's backticked names, the whole row]. */
function sections(markdown: string) {
  const found = new Map<string, { names: string[]; row: string }[]>();
  let section = "";
  for (const line of markdown.split("\n")) {
    const heading = /^## (.+)$/.exec(line);
    if (heading) {
      section = heading[1] as string;
      found.set(section, []);
      continue;
    }
    if (!line.startsWith("| `")) continue;
    const firstCell = line.split(" | ")[0] ?? "";
    const names = [...firstCell.matchAll(/`([^`]+)`/g)].map((match) => match[1] as string);
    found.get(section)?.push({ names, row: line });
  }
  return found;
}

const doc = sections(readText("nix/ci/NIXPKGS.md"));
const stand = surface();
const listedNames = (title: string) => (doc.get(title) ?? []).flatMap((entry) => entry.names);

describe("nix/ci/NIXPKGS.md and the stand-in", () => {
  it("has sections for lib, pkgs, refused names and home-manager", () => {
    expect([...doc.keys()]).toEqual(
      expect.arrayContaining([
        "lib",
        "pkgs",
        "Refused",
        "home-manager (nix-community/home-manager @ ec1a8fd, 2026-08-22)",
      ]),
    );
  });

  it("the stand-in has every name the lib and pkgs tables list, and no other", () => {
    const listed = [...listedNames("lib"), ...listedNames("pkgs")].sort();
    expect(new Set(listed).size).toBe(listed.length);
    expect(listed).toEqual([...stand.names].sort());
  });

  it("the stand-in refuses exactly the names the Refused table gives, and has none of them", () => {
    expect(
      listedNames("Refused")
        .flatMap((cell) => cell.split(/,\s*/))
        .map((name) => name.replaceAll("`", ""))
        .sort(),
    ).toEqual([...stand.refused].sort());
    for (const name of stand.refused) expect(stand.names).not.toContain(name);
  });

  it.each(Object.entries(stand.arguments))("lists every argument the stand-in's %s takes", (name, args) => {
    const row = [...(doc.get("lib") ?? []), ...(doc.get("pkgs") ?? [])].find((entry) =>
      entry.names.includes(name),
    );
    expect(row, `${name} has a row`).toBeDefined();
    for (const arg of args) expect(row?.row, `${name}: ${arg}`).toMatch(new RegExp(`\\b${arg}\\b`));
  });

  it("names no stdenv.mkDerivation argument the stand-in would refuse", () => {
    const row = doc.get("pkgs")?.find((entry) => entry.names.includes("stdenv.mkDerivation"));
    const used = row?.row.split(" | ")[3]?.split(". ")[0] ?? "";
    const listed = [...used.matchAll(/`([A-Za-z_]\w*)`/g)]
      .map((match) => match[1])
      .filter((arg) => arg !== "fnOrAttrs");
    expect(listed.sort()).toEqual([...(stand.arguments["stdenv.mkDerivation"] ?? [])].sort());
  });

  it("records the locked revision and its NAR hash as flake.lock has them", () => {
    const lock = JSON.parse(readText("flake.lock")) as {
      nodes: { nixpkgs: { locked: { rev: string; narHash: string } } };
    };
    const text = readText("nix/ci/NIXPKGS.md");
    expect(text).toContain(lock.nodes.nixpkgs.locked.rev);
    expect(text).toContain(lock.nodes.nixpkgs.locked.narHash);
  });
});
