# systemd unit lines for the Floot service modules, escaped the way systemd reads them
# (systemd.syntax(7), systemd.service(5)), not the way a shell does.
#   utils: nixpkgs' nixos/lib/utils.nix (the NixOS module argument `utils`; home-manager imports
#          the same file from pkgs.path), whose escapeSystemdExecArgs quotes each argument and
#          doubles % and $, so neither a specifier nor a variable is expanded.
{ lib, utils }:
let
  # Environment= expands % specifiers but not $ (systemd.exec(5)).
  escapeSpecifiers = lib.replaceStrings [ "%" ] [ "%%" ];

  # The `--state DIR` and `--state=DIR` among `floot daemon`'s extra arguments (before any `--`),
  # so `floot daemon stop` asks the daemon ExecStart ran; the last one wins in both, as the CLI
  # parses them (node:util parseArgs).
  stateArgs =
    args:
    let
      count = builtins.length args;
      at = builtins.elemAt args;
      from =
        i:
        if i >= count || at i == "--" then
          [ ]
        else if at i == "--state" && i + 1 < count then
          [
            (at i)
            (at (i + 1))
          ]
          ++ from (i + 2)
        else if builtins.substring 0 8 (at i) == "--state=" then
          [ (at i) ] ++ from (i + 1)
        else
          from (i + 1);
    in
    from 0;
in
{
  inherit escapeSpecifiers;

  execStart = utils.escapeSystemdExecArgs;

  # What `systemctl stop` and `systemctl restart` do to running turns, the same [Service] lines in
  # the NixOS unit and the home-manager user unit (issue 31). Each turn's CLI runs under the keeper,
  # a process in its own session but in the unit's cgroup: KillMode=process signals the daemon
  # alone (systemd.kill(5)), so the turns outlive it and the next daemon adopts them, where the
  # default (control-group) would kill them with it. ExecStop= ends them instead: systemd runs it
  # before it signals the daemon, on a restart too (a stop, then a start: systemd.service(5)).
  # The environment (FLOOT_STATE_DIR) is ExecStart's; a --state in extraArgs is passed on.
  stopSettings =
    {
      exe,
      extraArgs,
      endTurnsOnStop,
    }:
    {
      KillMode = "process";
    }
    // lib.optionalAttrs endTurnsOnStop {
      ExecStop = utils.escapeSystemdExecArgs (
        [
          exe
          "daemon"
          "stop"
          "--cancel-turns"
        ]
        ++ stateArgs extraArgs
      );
    };

  # For NixOS's systemd.services.<name>.environment: NixOS writes `Environment=` + toJSON of
  # "NAME=value" (nixos/lib/systemd-lib.nix, serviceToUnit) and doubles nothing itself.
  environment = lib.mapAttrs (_: escapeSpecifiers);

  # For home-manager's Service.Environment, which is written verbatim: the same line NixOS writes.
  environmentLines = lib.mapAttrsToList (
    name: value: builtins.toJSON "${name}=${escapeSpecifiers value}"
  );
}
