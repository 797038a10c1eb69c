# STAND-IN, NOT NIXPKGS: see nix/ci/README.md. Nothing it describes can be built (every builder
# exits 1). It has exactly the names nix/ci/NIXPKGS.md lists, so that Debian's Nix 2.8 evaluates
# the Bridgeworks flake offline and fails where the locked nixpkgs would. Real builds:
# .github/workflows/nix.yml.
{
  description = "Stand-in for the locked nixpkgs: structure checks only, never builds";

  outputs =
    { self }:
    let
      lib = import ./lib.nix;
      # nixpkgs' legacyPackages has many more; these are the ones a Bridgeworks system could be.
      systems = [
        "x86_64-linux"
        "aarch64-linux"
        "x86_64-darwin"
        "aarch64-darwin"
      ];
    in
    {
      inherit lib;
      legacyPackages = lib.genAttrs systems (system: import ./pkgs.nix { inherit lib system; });
    };
}
