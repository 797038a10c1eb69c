# Everything the stand-in has, as names, for packages/repo-checks to compare with the list in
# nix/ci/NIXPKGS.md: lib (into its sets), one system's pkgs, stdenv, the utils file, and the
# arguments of the functions that take a fixed set of them.
#   nix eval --json --file nix/ci/stub-nixpkgs/surface.nix
let
  lib = import ./lib.nix;
  pkgs = import ./pkgs.nix {
    inherit lib;
    system = "x86_64-linux";
  };
  utils = import ./nixos/lib/utils.nix {
    inherit lib pkgs;
    config = { };
  };
  names = prefix: set: map (name: "${prefix}${name}") (builtins.attrNames set);
  args = f: builtins.attrNames (builtins.functionArgs f);
in
{
  names =
    names "lib." (
      removeAttrs lib [
        "fileset"
        "types"
        "licenses"
      ]
    )
    ++ names "lib.fileset." lib.fileset
    ++ names "lib.types." lib.types
    ++ names "lib.licenses." lib.licenses
    ++ names "" (
      removeAttrs pkgs [
        "lib"
        "stdenv"
      ]
    )
    ++ names "stdenv." (removeAttrs pkgs.stdenv [ "hostPlatform" ])
    ++ names "stdenv.hostPlatform." pkgs.stdenv.hostPlatform
    ++ names "utils." utils;
  refused = builtins.attrNames (import ./refused.nix);
  arguments = {
    "fetchurl" = args pkgs.fetchurl;
    "mkShell" = args pkgs.mkShell;
    "lib.mkOption" = args lib.mkOption;
    "lib.fileset.toSource" = args lib.fileset.toSource;
    "stdenv.mkDerivation" = import ./mk-derivation-args.nix;
  };
}
