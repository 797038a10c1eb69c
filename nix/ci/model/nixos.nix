# MODEL, NOT NIXOS (nix/ci/README.md "Two paths"): NixOS's declarations of
# systemd.services.<name>, the only NixOS options the Floot NixOS module sets, as read in the
# code index (the locked nixpkgs, 83199d0, is 4.4 GB and not readable here; nix/ci/NIXPKGS.md
# "The model" says what each revision is):
#   nixpkgs 2faec4e nixos/lib/systemd-types.nix:131  services = attrsOf (submodule [
#                                                      stage2ServiceOptions unitConfig stage2ServiceConfig ])
#   nixpkgs 515c8fb nixos/lib/systemd-unit-options.nix  the options of stage2ServiceOptions
#                                                      (sharedOptions, commonUnitOptions,
#                                                      stage2CommonUnitOptions, serviceOptions)
#   nixpkgs 6f03be6 nixos/lib/systemd-lib.nix        unitNameType; unitConfig and
#                                                      stage2ServiceConfig only set config
# Each option names its source (`source`). The lock is newer than these readings: an option
# added since is missing here (a module setting it fails with "does not exist", fail closed); the
# names the Floot module sets (description, wantedBy, after, path, environment, serviceConfig)
# are in every version read. Types the model does not read are `unmodelled`: defining one fails.
{ types }:
let
  inherit (import ./declare.nix) declare unmodelled;
  inherit (types)
    attrsOf
    bool
    enum
    int
    listOf
    nullOr
    oneOf
    str
    submodule
    ;
  options = "nixos/lib/systemd-unit-options.nix";
  read = group: "nixpkgs 515c8fb ${options} (${group})";

  # systemd-lib.nix: unitNameType = types.strMatching "…".
  unitNameType =
    types.strMatching "[a-zA-Z0-9@%:_.\\-]+[.](service|socket|device|mount|automount|swap|target|path|timer|scope|slice)";
  units = group: declare (read group) {
    type = listOf unitNameType;
    default = [ ];
  };

  # systemd-unit-options.nix unitOption: lists are concatenated, anything else must agree;
  # it checks nothing.
  unitOption = types.anything // {
    name = "systemd option";
    description = "systemd option";
    descriptionClass = null;
  };
  # serviceOptions.serviceConfig: addCheck (attrsOf unitOption) checkService, checkService
  # refusing a Type or Restart outside these lists; every other key (KillMode, ExecStop,
  # RuntimeDirectoryPreserve, ...) is any unitOption, unchecked.
  serviceConfigType =
    let
      base = attrsOf unitOption;
      oneOf' =
        name: values: attrs: !(attrs ? ${name}) || builtins.elem attrs.${name} values;
    in
    base
    // {
      check =
        attrs:
        base.check attrs
        && oneOf' "Type" [
          "exec"
          "simple"
          "forking"
          "oneshot"
          "dbus"
          "notify"
          "idle"
        ] attrs
        && oneOf' "Restart" [
          "no"
          "on-success"
          "on-failure"
          "on-abnormal"
          "on-abort"
          "always"
        ] attrs;
    };

  lines = group: declare (read group) {
    type = unmodelled (read group);
    default = "";
  };

  service = {
    # sharedOptions
    enable = declare (read "sharedOptions.enable") {
      type = bool;
      default = true;
    };
    overrideStrategy = declare (read "sharedOptions.overrideStrategy") {
      type = enum [
        "asDropinIfExists"
        "asDropin"
      ];
      default = "asDropinIfExists";
    };
    requiredBy = units "sharedOptions.requiredBy";
    wantedBy = units "sharedOptions.wantedBy";
    aliases = units "sharedOptions.aliases";
    # commonUnitOptions
    description = declare (read "commonUnitOptions.description") {
      type = types.singleLineStr;
      default = "";
    };
    documentation = declare (read "commonUnitOptions.documentation") {
      type = listOf str;
      default = [ ];
    };
    requires = units "commonUnitOptions.requires";
    wants = units "commonUnitOptions.wants";
    after = units "commonUnitOptions.after";
    before = units "commonUnitOptions.before";
    bindsTo = units "commonUnitOptions.bindsTo";
    partOf = units "commonUnitOptions.partOf";
    conflicts = units "commonUnitOptions.conflicts";
    requisite = units "commonUnitOptions.requisite";
    unitConfig = declare (read "commonUnitOptions.unitConfig") {
      type = attrsOf unitOption;
      default = { };
    };
    onFailure = units "commonUnitOptions.onFailure";
    onSuccess = units "commonUnitOptions.onSuccess";
    startLimitBurst = declare (read "commonUnitOptions.startLimitBurst") { type = int; };
    startLimitIntervalSec = declare (read "commonUnitOptions.startLimitIntervalSec") { type = int; };
    # stage2CommonUnitOptions
    restartTriggers = declare (read "stage2CommonUnitOptions.restartTriggers") {
      type = listOf types.unspecified;
      default = [ ];
    };
    reloadTriggers = declare (read "stage2CommonUnitOptions.reloadTriggers") {
      type = listOf unitOption;
      default = [ ];
    };
    # serviceOptions
    environment = declare (read "serviceOptions.environment") {
      type = attrsOf (
        nullOr (oneOf [
          str
          types.path
          types.package
        ])
      );
      default = { };
    };
    path = declare (read "serviceOptions.path") {
      type = listOf (oneOf [
        types.package
        str
      ]);
      default = [ ];
    };
    serviceConfig = declare (read "serviceOptions.serviceConfig") {
      type = serviceConfigType;
      default = { };
    };
    script = lines "serviceOptions.script";
    scriptArgs = declare (read "serviceOptions.scriptArgs") {
      type = str;
      default = "";
    };
    preStart = lines "serviceOptions.preStart";
    postStart = lines "serviceOptions.postStart";
    reload = lines "serviceOptions.reload";
    preStop = lines "serviceOptions.preStop";
    postStop = lines "serviceOptions.postStop";
    jobScripts = declare (read "serviceOptions.jobScripts") {
      type = unmodelled (read "serviceOptions.jobScripts");
      default = [ ];
    };
    # stage2ServiceOptions
    restartIfChanged = declare (read "stage2ServiceOptions.restartIfChanged") {
      type = bool;
      default = true;
    };
    reloadIfChanged = declare (read "stage2ServiceOptions.reloadIfChanged") {
      type = bool;
      default = false;
    };
    stopIfChanged = declare (read "stage2ServiceOptions.stopIfChanged") {
      type = bool;
      default = true;
    };
    startAt = declare (read "stage2ServiceOptions.startAt") {
      type = types.either str (listOf str);
      default = [ ];
      apply = v: if builtins.isList v then v else [ v ];
    };
  };
in
{
  _file = "nix/ci/model/nixos.nix (NixOS's systemd.services declarations, as read)";
  options.systemd.services = declare "nixpkgs 2faec4e nixos/lib/systemd-types.nix:131" {
    type = attrsOf (submodule { options = service; });
    default = { };
  };
}
