# nixpkgs' check-meta platform rule, applied to every package and check the flake offers on every
# system: real nixpkgs refuses to evaluate a derivation whose meta.platforms leaves out the host
# (or whose meta.badPlatforms names it), so `nix flake check` on GitHub would stop there. The rule
# is lib.meta.availableOn (one of meta.platforms matches, none of meta.badPlatforms):
#   nixpkgsLib = <path>  nixpkgs' own, called with its lib.systems.elaborate of the system, from
#                        the recorded nixpkgs lib (nix/ci/upstream.json) in the Nix store;
#   nixpkgsLib = null    the model of it (nix/ci/model/meta.nix: platform strings only).
# nix/ci/NIXPKGS.md says where check-meta.nix calls it.
#   nix-instantiate --eval --strict --json nix/ci/meta-check.nix --arg nixpkgsLib '<path or null>'
{ nixpkgsLib }:
let
  inherit (import ./stand-in-flake.nix) flake;
  availableOn =
    if nixpkgsLib == null then
      (import ./model/meta.nix).availableOn
    else
      let
        lib = import (nixpkgsLib + "/lib");
      in
      system: lib.meta.availableOn (lib.systems.elaborate system);

  refusals =
    system:
    let
      offered = flake.packages.${system} // flake.checks.${system};
      refused = builtins.filter (name: !availableOn system offered.${name}) (builtins.attrNames offered);
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
  throw "meta-check (nixpkgs' check-meta platform rule, ${
    if nixpkgsLib == null then "the model, nix/ci/model/meta.nix" else "nixpkgs' own lib"
  }):\n  ${builtins.concatStringsSep "\n  " found}"
else
  builtins.mapAttrs (system: packages: builtins.attrNames packages) flake.packages
