# services.floot-daemon for home-manager: `floot daemon` as the user's own service, a systemd user
# service on Linux and a launchd agent on macOS, so sessions run as you, in your projects.
# Usage (flake):  imports = [ bridgeworks.homeModules.default ];
#                 services.floot-daemon.enable = true;
self:
{
  config,
  lib,
  pkgs,
  ...
}:
let
  cfg = config.services.floot-daemon;
  # home-manager has no `utils` module argument; this is the same nixpkgs file NixOS passes as one.
  systemd = import ./systemd.nix {
    inherit lib;
    utils = import (pkgs.path + "/nixos/lib/utils.nix") { inherit lib config pkgs; };
  };
  stateDir = "${config.xdg.stateHome}/floot";
  exe = lib.getExe cfg.package;
  command = [
    exe
    "daemon"
  ]
  ++ cfg.extraArgs;
  environment = {
    FLOOT_STATE_DIR = stateDir;
    # A user service does not see the login shell's PATH: the CLIs the daemon starts come from
    # `path`, then from the home-manager profile.
    PATH = lib.concatStringsSep ":" [
      (lib.makeBinPath cfg.path)
      "${config.home.profileDirectory}/bin"
      "/run/current-system/sw/bin"
      "/nix/var/nix/profiles/default/bin"
      "/usr/local/bin"
      "/usr/bin"
      "/bin"
    ];
  }
  // cfg.environment;
in
{
  options.services.floot-daemon = import ./floot-service-options.nix {
    inherit lib pkgs self;
    what = "the Floot daemon as a user service";
    pathDescription = "Packages put first on the daemon's PATH (claude, codex, git, ...).";
  };

  config = lib.mkIf cfg.enable (
    lib.mkMerge [
      { home.packages = [ cfg.package ]; }

      (lib.mkIf pkgs.stdenv.hostPlatform.isLinux {
        systemd.user.services.floot-daemon = {
          Unit.Description = "Floot daemon";
          Service = {
            ExecStart = systemd.execStart command;
            Environment = systemd.environmentLines environment;
            Restart = "on-failure";
            RestartSec = 2;
            UMask = "0077";
          }
          // systemd.stopSettings {
            inherit exe;
            inherit (cfg) extraArgs endTurnsOnStop;
          };
          Install.WantedBy = [ "default.target" ];
        };
      })

      # launchd takes the argument vector and the environment as plist values: nothing to escape.
      (lib.mkIf pkgs.stdenv.hostPlatform.isDarwin {
        launchd.agents.floot-daemon = {
          enable = true;
          config = {
            ProgramArguments = command;
            EnvironmentVariables = environment;
            RunAtLoad = true;
            KeepAlive = {
              SuccessfulExit = false;
            };
            ProcessType = "Background";
            StandardOutPath = "${config.home.homeDirectory}/Library/Logs/floot-daemon.log";
            StandardErrorPath = "${config.home.homeDirectory}/Library/Logs/floot-daemon.log";
          };
        };
      })
    ]
  );
}
