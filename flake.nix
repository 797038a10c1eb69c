{
  description = "Bridgeworks: the bee bridge, the Pi provider and the Floot daemon";

  # Binary cache: .github/workflows/nix.yml pushes every app and the pnpm dependency store to
  # https://bridgeworks.cachix.org, so a host without npm registry access substitutes them.
  # Its public key goes in the README's install section (and here, as nixConfig) once the cache exists.

  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";

  outputs =
    { self, nixpkgs }:
    let
      inherit (nixpkgs) lib;
      systems = [
        "x86_64-linux"
        "aarch64-linux"
        "aarch64-darwin"
      ];
      forAllSystems = f: lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});
      appNames = builtins.attrNames (lib.importJSON ./nix/apps.json).apps;
      workspaceFor = pkgs: pkgs.callPackage ./nix/workspace.nix { };
    in
    {
      # bee-bridge, pi-provider, floot-daemon (nix/apps.json), plus the shared dependency store.
      packages = forAllSystems (
        pkgs:
        let
          ws = workspaceFor pkgs;
        in
        lib.genAttrs appNames (name: ws.${name})
        // {
          pnpm-deps = ws.pnpmDeps;
          default = ws.floot-daemon;
        }
      );

      # Building an app runs its tests (checkPhase), so the checks are the apps themselves.
      checks = forAllSystems (pkgs: lib.genAttrs appNames (name: self.packages.${pkgs.stdenv.hostPlatform.system}.${name}));

      devShells = forAllSystems (pkgs: {
        default = pkgs.callPackage ./nix/dev-shell.nix { };
      });

      overlays.default = final: prev: import ./nix/overlay.nix final prev;

      nixosModules = {
        floot-daemon = import ./nix/nixos-module.nix self;
        default = self.nixosModules.floot-daemon;
      };

      # home-manager's current name for module outputs is homeModules; homeManagerModules is the older one.
      homeModules = {
        floot-daemon = import ./nix/hm-module.nix self;
        default = self.homeModules.floot-daemon;
      };
      homeManagerModules = self.homeModules;
    };
}
