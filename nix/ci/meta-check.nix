# nixpkgs' check-meta platform rule, applied to every package and check the flake offers on every
# system: real nixpkgs refuses to evaluate a derivation whose meta.platforms leaves out the host
# (or whose meta.badPlatforms names it), so `nix flake check` on GitHub would stop there. The rule
# is nixpkgs' own lib.meta.availableOn (one of meta.platforms matches, none of meta.badPlatforms),
# called with nixpkgs' own lib.systems.elaborate of the system, from the recorded nixpkgs lib
# (nix/ci/upstream.json; nix/ci/NIXPKGS.md says where check-meta.nix calls it).
#   nix-instantiate --eval --strict --json nix/ci/meta-check.nix --arg nixpkgsLib <path>
{ nixpkgsLib }:
let
  lib = import (nixpkgsLib + "/lib");
  stub = (import ./stub-nixpkgs/flake.nix).outputs { self = stub; };
  flake = (import ../../flake.nix).outputs {
    self = flake // {
      outPath = toString ../..;
    };
    nixpkgs = stub;
  };

  refusals =
    system:
    let
      hostPlatform = lib.systems.elaborate system;
      offered = flake.packages.${system} // flake.checks.${system};
      refused = builtins.filter (name: !lib.meta.availableOn hostPlatform offered.${name}) (
        builtins.attrNames offered
      );
    in
    map (
      name:
      "${system}.${name}: Package ‘${offered.${name}.name}’ is not available on the requested hostPlatform "
      + "(hostPlatform.system = ${system}; meta.platforms = ${builtins.toJSON (offered.${name}.meta.platforms or null)}; "
      + "meta.badPlatforms = ${builtins.toJSON (offered.${name}.meta.badPlatforms or null)}): nixpkgs refuses to evaluate it there"
    ) refused;

  found = builtins.concatMap refusals (builtins.attrNames flake.packages);
in
if found != [ ] then
  throw "meta-check (nixpkgs' check-meta platform rule):\n  ${builtins.concatStringsSep "\n  " found}"
else
  builtins.mapAttrs (system: packages: builtins.attrNames packages) flake.packages
