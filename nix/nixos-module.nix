# services.floot-daemon: `floot daemon` as a system service, its state in /var/lib/floot-daemon.
# Usage (flake):  imports = [ bridgeworks.nixosModules.default ];
#                 services.floot-daemon = { enable = true; path = [ pkgs.claude-code pkgs.codex ]; };
self:
{
  config,
  lib,
  pkgs,
  utils,
  ...
}:
let
  cfg = config.services.floot-daemon;
  systemd = import ./systemd.nix { inherit lib utils; };
  stateDir = "/var/lib/floot-daemon";
  runtimeDir = "/run/floot-daemon";
in
{
  options.services.floot-daemon =
    import ./floot-service-options.nix {
      inherit lib pkgs self;
      what = "the Floot daemon (hosts Claude Code and Codex sessions that survive a restart)";
      pathDescription = "Packages on the daemon's PATH: the claude and codex CLIs it starts, git, and what their tools run.";
    }
    // {
      environmentFile = lib.mkOption {
        # A string naming a file outside the store: a path literal (./floot.env) would be copied
        # into the world-readable store with the keys in it, so it is refused, as is a store path.
        type = lib.types.nullOr lib.types.externalPath;
        default = null;
        example = "/run/secrets/floot.env";
        description = "An absolute path, as a string, outside the Nix store, to a file of KEY=value lines (e.g. ANTHROPIC_API_KEY) that systemd reads at start.";
      };

      user = lib.mkOption {
        type = lib.types.nullOr lib.types.str;
        default = null;
        description = "Run as this existing user (so sessions can work in that user's projects). null: a dynamic user.";
      };
    };

  config = lib.mkIf cfg.enable {
    systemd.services.floot-daemon = {
      description = "Floot daemon";
      wantedBy = [ "multi-user.target" ];
      after = [ "network.target" ];
      inherit (cfg) path;
      environment = systemd.environment (
        {
          FLOOT_STATE_DIR = stateDir;
          XDG_STATE_HOME = stateDir;
          XDG_RUNTIME_DIR = runtimeDir;
          HOME = stateDir;
        }
        // cfg.environment
      );
      serviceConfig = {
        ExecStart = systemd.execStart ([ (lib.getExe cfg.package) "daemon" ] ++ cfg.extraArgs);
        StateDirectory = "floot-daemon";
        StateDirectoryMode = "0700";
        RuntimeDirectory = "floot-daemon";
        RuntimeDirectoryMode = "0700";
        # The runtime dir holds the running turns' credential files (and the keeper's spools):
        # systemd would remove it at every stop and restart (systemd.exec(5)), from under the turns
        # KillMode=process keeps running (systemd.stopSettings).
        RuntimeDirectoryPreserve = "yes";
        WorkingDirectory = stateDir;
        # The daemon fences and recovers leftover turns at start; a crash loop is still a crash loop.
        Restart = "on-failure";
        RestartSec = 2;
        UMask = "0077";
        NoNewPrivileges = true;
        PrivateTmp = true;
      }
      // systemd.stopSettings {
        exe = lib.getExe cfg.package;
        inherit (cfg) extraArgs endTurnsOnStop;
      }
      // (if cfg.user == null then { DynamicUser = true; } else { User = cfg.user; })
      // lib.optionalAttrs (cfg.environmentFile != null) {
        EnvironmentFile = systemd.escapeSpecifiers cfg.environmentFile;
      };
    };
  };
}
