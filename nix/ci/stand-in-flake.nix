# The flake's outputs as the offline checks read them: evaluated against the stand-in for the
# locked nixpkgs (nix/ci/stub-nixpkgs), which builds nothing.
let
  stub = (import ./stub-nixpkgs/flake.nix).outputs { self = stub; };
  flake = (import ../../flake.nix).outputs {
    self = flake // {
      outPath = toString ../..;
    };
    nixpkgs = stub;
  };
in
{
  inherit stub flake;
}
