# MODEL, NOT NIXPKGS (nix/ci/README.md "Two paths"): the `lib` the model's module system passes to
# the modules it evaluates, as NixOS and home-manager pass nixpkgs' whole lib. It is the stand-in's
# lib (the names nix/ci/NIXPKGS.md lists) with every option type the stand-in reads
# (stub-nixpkgs/types.nix) and these further functions, read at nixpkgs.lib de42d44:
#   lib/strings.nix:1236  escapeShellArgs = concatMapStringsSep " " escapeShellArg;
# A module using a function that is in neither fails here with "attribute … missing": add it with
# the file and line it was read from.
let
  lib = import ../stub-nixpkgs/lib.nix;
in
lib
// {
  types = import ../stub-nixpkgs/types.nix;
  escapeShellArgs = args: builtins.concatStringsSep " " (map lib.escapeShellArg args);
}
