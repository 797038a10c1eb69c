# The options both Floot service modules (NixOS and home-manager) share.
{
  lib,
  pkgs,
  self,
  what,
  pathDescription,
}:
{
  enable = lib.mkEnableOption what;

  package = lib.mkOption {
    type = lib.types.package;
    default = self.packages.${pkgs.stdenv.hostPlatform.system}.floot-daemon;
    defaultText = lib.literalExpression "bridgeworks.packages.\${system}.floot-daemon";
    description = "The floot-daemon package.";
  };

  extraArgs = lib.mkOption {
    type = lib.types.listOf lib.types.str;
    default = [ ];
    description = "Arguments after `floot daemon`.";
  };

  path = lib.mkOption {
    type = lib.types.listOf lib.types.package;
    default = [ ];
    description = pathDescription;
  };

  endTurnsOnStop = lib.mkOption {
    type = lib.types.bool;
    default = false;
    example = true;
    description = ''
      Whether stopping the service ends its running turns (systemd only; the launchd agent ignores it).
      false: the unit has KillMode=process, so `systemctl stop` and `systemctl restart` stop the
      daemon alone; each running turn's CLI runs on under the daemon's keeper and the next start
      of the daemon adopts it. true: ExecStop= runs `floot daemon stop --cancel-turns`, which
      cancels the running turns and ends the keeper before the daemon exits. systemd runs
      ExecStop= on every restart too (a restart is a stop, then a start), so with this on a
      restart ends the running turns as well. Without it, `floot daemon stop --cancel-turns`
      ends them by hand.
    '';
  };

  environment = lib.mkOption {
    type = lib.types.attrsOf lib.types.str;
    default = { };
    description = "Extra environment variables. Never put a secret here: it lands in the world-readable store.";
  };
}
