# `nix develop`: what `npm test` / `pnpm` need, including what the real clients the e2e tests run
# (claude, codex, pi from npm, through packages/test-harness) expect to find.
{
  lib,
  stdenv,
  mkShell,
  nodejs_22,
  # The pnpm that wrote pnpm-lock.yaml, from the lockfile itself (nix/workspace.nix).
  pnpm,
  python3,
  git,
  ripgrep,
  procps,
}:
mkShell {
  packages = [
    nodejs_22
    pnpm
    # better-sqlite3's install script compiles its addon (with pnpm's own node-gyp).
    python3
    # claude and codex run git and rg; the claude-pid rule reads `ps -o comm=`.
    git
    ripgrep
    procps
  ];

  env = {
    # node-gyp builds against these headers instead of downloading them.
    npm_config_nodedir = "${nodejs_22}";
    TURBO_TELEMETRY_DISABLED = "1";
  };

  shellHook = lib.optionalString stdenv.hostPlatform.isLinux ''
    # The claude binary from npm is a dynamically linked FHS executable. On NixOS it needs nix-ld
    # (programs.nix-ld.enable = true); the Nix build sets its interpreter instead.
    if [ -e /etc/NIXOS ] && [ -z "''${NIX_LD:-}" ]; then
      echo "bridgeworks: NixOS without nix-ld; the e2e tests cannot start claude (programs.nix-ld.enable = true)" >&2
    fi
  '';
}
