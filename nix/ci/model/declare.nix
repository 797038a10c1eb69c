# How the model's declaration files (home-manager.nix, nixos.nix) declare an option: as
# lib.mkOption's result (`_type = "option"`), with the upstream file and revision it was read from
# (`source`); `unmodelled` is the type of an option whose type the model has not read (modules.nix
# refuses a definition of it).
{
  declare =
    source: attrs:
    attrs
    // {
      _type = "option";
      inherit source;
    };
  unmodelled = source: {
    _type = "option-type";
    kind = "unmodelled";
    name = "unmodelled";
    description = "a type nix/ci/model does not model";
    check = _: false;
    inherit source;
  };
}
