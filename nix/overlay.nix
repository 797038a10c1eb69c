# overlays.default: the apps (nix/apps.json) built with the consumer's own nixpkgs.
# Prefer the flake's packages when you want cache hits: they use the nixpkgs in flake.lock, which is
# what .github/workflows/nix.yml builds and pushes. (The npm tarballs substitute either way: a
# fetchurl's store path depends only on its name and hash.)
final: prev:
let
  ws = final.callPackage ./workspace.nix { };
  appNames = builtins.attrNames (prev.lib.importJSON ./apps.json).apps;
in
prev.lib.genAttrs appNames (name: ws.${name})
