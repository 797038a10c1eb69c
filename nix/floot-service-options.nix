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

  environment = lib.mkOption {
    type = lib.types.attrsOf lib.types.str;
    default = { };
    description = "Extra environment variables. Never put a secret here: it lands in the world-readable store.";
  };
}
