# STRUCTURE CHECK ONLY: this is not nixpkgs and nothing it describes can be built (every builder
# exits 1). It checks attribute names, the files the filesets name, and hash shapes, so that Nix 2.8
# can evaluate the Bridgeworks flake offline. See nix/ci/README.md. Real builds: .github/workflows/nix.yml.
{
  description = "Stand-in for nixpkgs: structure checks only, never builds";

  outputs =
    { self }:
    let
      lib = import ./lib.nix;
      # Only the systems the Bridgeworks flake supports: asking for another one is an error.
      systems = [
        "x86_64-linux"
        "aarch64-linux"
        "aarch64-darwin"
      ];
    in
    {
      inherit lib;
      legacyPackages = lib.genAttrs systems (system: import ./pkgs.nix { inherit lib system; });
    };
}
