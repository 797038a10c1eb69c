# systemd unit lines for the Floot service modules, escaped the way systemd reads them
# (systemd.syntax(7), systemd.service(5)), not the way a shell does.
#   utils: nixpkgs' nixos/lib/utils.nix (the NixOS module argument `utils`; home-manager imports
#          the same file from pkgs.path), whose escapeSystemdExecArgs quotes each argument and
#          doubles % and $, so neither a specifier nor a variable is expanded.
{ lib, utils }:
let
  # Environment= expands % specifiers but not $ (systemd.exec(5)).
  escapeSpecifiers = lib.replaceStrings [ "%" ] [ "%%" ];
in
{
  inherit escapeSpecifiers;

  execStart = utils.escapeSystemdExecArgs;

  # For NixOS's systemd.services.<name>.environment: NixOS writes `Environment=` + toJSON of
  # "NAME=value" (nixos/lib/systemd-lib.nix, serviceToUnit) and doubles nothing itself.
  environment = lib.mapAttrs (_: escapeSpecifiers);

  # For home-manager's Service.Environment, which is written verbatim: the same line NixOS writes.
  environmentLines = lib.mapAttrsToList (
    name: value: builtins.toJSON "${name}=${escapeSpecifiers value}"
  );
}
