# Example: Pi with the Bridgeworks Claude Code provider, from the Nix store, in home-manager.
#
#   # flake.nix of your home configuration
#   inputs.bridgeworks.url = "github:bridgeworks/bridgeworks";
#   # keep bridgeworks' own nixpkgs (no `follows`) to get the exact builds in the binary cache
#   homeConfigurations.me = home-manager.lib.homeManagerConfiguration {
#     ...
#     extraSpecialArgs = { inherit bridgeworks; };
#     modules = [ ./home-manager-pi.nix ];
#   };
#
# Pi loads a local package path from settings.packages: the directory holding the provider's
# package.json (pi.extensions -> bundle/extension.mjs). passthru.packagePath is that directory.
{
  pkgs,
  bridgeworks,
  ...
}:
let
  piProvider = bridgeworks.packages.${pkgs.stdenv.hostPlatform.system}.pi-provider;
in
{
  imports = [ bridgeworks.homeModules.default ];

  programs.pi-coding-agent = {
    enable = true;
    settings = {
      packages = [ piProvider.passthru.packagePath ];
      defaultProvider = "claude-code";
    };
  };

  # Optional: the Floot daemon as a user service (systemd on Linux, launchd on macOS).
  services.floot-daemon.enable = true;
}
