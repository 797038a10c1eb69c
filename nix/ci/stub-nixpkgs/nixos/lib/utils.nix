# STAND-IN, NOT NIXPKGS (see nix/ci/README.md): of nixpkgs' nixos/lib/utils.nix, only what the
# Floot service modules use, behaving as read there (nix/ci/NIXPKGS.md): each argument is written
# as a JSON string (systemd's "-quoting accepts those escapes), then every % becomes %% and every
# $ becomes $$, so systemd expands neither a specifier nor a variable.
{
  lib,
  config,
  pkgs,
}:
let
  escapeSystemdExecArg =
    arg:
    let
      s =
        if builtins.isPath arg then
          "${arg}"
        else if builtins.isString arg then
          arg
        else if builtins.isInt arg || builtins.isFloat arg || (arg.type or null) == "derivation" then
          toString arg
        else
          throw "escapeSystemdExecArg only allows strings, paths, numbers and derivations";
    in
    builtins.replaceStrings [ "%" "$" ] [ "%%" "$$" ] (builtins.toJSON s);
in
{
  inherit escapeSystemdExecArg;
  escapeSystemdExecArgs = args: builtins.concatStringsSep " " (map escapeSystemdExecArg args);
}
