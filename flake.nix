{
  description = "Bridgeworks: the bee bridge, the Pi provider and the Floot daemon";

  # The binary cache .github/workflows/nix.yml pushes every build to (apps, their npm tarballs).
  # Nix asks before using these (or set accept-flake-config); `cachix use bridgeworks` is the same.
  # The key must be the one app.cachix.org shows for the cache (one-time setup, README "Install").
  # Until then this is a key whose secret half was never kept, so it vouches for nothing; the Nix
  # workflow compares it with the cache's real key on every run and prints the line to put here.
  nixConfig = {
    extra-substituters = [ "https://bridgeworks.cachix.org" ];
    extra-trusted-public-keys = [
      "bridgeworks.cachix.org-1:EnOSmgZtMCcrhX+5Dvu4I9wcUiZsw5l1UvjNm8TYLqY="
    ];
  };

  # nixos-unstable, locked in flake.lock. Every nixpkgs name the flake uses is listed, with the
  # file and revision it was read from, in nix/ci/NIXPKGS.md.
  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixos-unstable";

  outputs =
    { self, nixpkgs }:
    let
      inherit (nixpkgs) lib;
      # The systems built here, in the workflow and in the cache: nix/npm-tarballs.json platforms.
      systems = builtins.attrNames (lib.importJSON ./nix/npm-tarballs.json).platforms;
      forAllSystems = f: lib.genAttrs systems (system: f nixpkgs.legacyPackages.${system});
      appNames = builtins.attrNames (lib.importJSON ./nix/apps.json).apps;
      workspaceFor = pkgs: pkgs.callPackage ./nix/workspace.nix { };
    in
    {
      # bee-bridge, pi-provider, floot-daemon (nix/apps.json).
      packages = forAllSystems (
        pkgs:
        let
          ws = workspaceFor pkgs;
        in
        lib.genAttrs appNames (name: ws.${name})
        // {
          default = ws.floot-daemon;
        }
      );

      # Each app's build checks it in the sandbox (--version, Pi loads it, its native executables
      # run); unit-tests runs the vitest projects nix/sandbox.json names. The end-to-end suites
      # (real clients, PostgreSQL, tmux, Chromium) are `npm test`'s, never the sandbox's.
      checks = forAllSystems (
        pkgs:
        lib.genAttrs appNames (name: self.packages.${pkgs.stdenv.hostPlatform.system}.${name})
        // {
          inherit (workspaceFor pkgs) unit-tests;
        }
      );

      devShells = forAllSystems (pkgs: {
        default = pkgs.callPackage ./nix/dev-shell.nix { inherit (workspaceFor pkgs) pnpm; };
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
