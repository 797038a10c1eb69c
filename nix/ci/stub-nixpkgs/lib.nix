# STAND-IN, NOT NIXPKGS (see nix/ci/README.md): exactly the `lib` definitions listed in
# nix/ci/NIXPKGS.md, with the argument shapes and behaviour read there (file, revision, lines).
# A name not listed is missing here, so using it fails the offline check. Written for this
# repository from those readings; no nixpkgs code is copied.
let
  inherit (builtins)
    all
    attrNames
    concatMap
    concatStringsSep
    elem
    filter
    head
    isAttrs
    isFunction
    isList
    isPath
    isString
    listToAttrs
    match
    pathExists
    stringLength
    substring
    typeOf
    ;

  hasPrefix = prefix: s: substring 0 (stringLength prefix) s == prefix;

  assertMsg = condition: message: condition || throw message;


  # lib/strings.nix: an argument made only of [[:alnum:],._+:@%/-] stays bare, anything else is
  # single-quoted with ' written as '\''.
  escapeShellArg =
    arg:
    let
      s = toString arg;
    in
    if match "[[:alnum:],._+:@%/-]+" s != null then
      s
    else
      "'${builtins.replaceStrings [ "'" ] [ "'\\''" ] s}'";

  # lib/fileset: a file set is made from paths that exist; toSource wants a path root holding it.
  isFileset = v: isAttrs v && (v._type or null) == "fileset";
  coerce =
    context: v:
    if isFileset v then
      v
    else if isPath v then
      (
        if pathExists v then
          {
            _type = "fileset";
            paths = [ v ];
          }
        else
          throw "${context}: ${toString v} does not exist (a flake sees only git-tracked files)"
      )
    else
      throw "${context}: expected a path or a file set, got a ${typeOf v}";

  # lib/types.nix: the types NIXPKGS.md lists, from the stand-in's reading of that file.
  allTypes = import ./types.nix;
  types = {
    inherit (allTypes)
      bool
      str
      package
      listOf
      attrsOf
      nullOr
      externalPath
      ;
  };

  # lib/options.nix mkOption: exactly these arguments, no others.
  mkOption =
    {
      default ? null,
      defaultText ? null,
      example ? null,
      description ? null,
      relatedPackages ? null,
      type ? null,
      apply ? null,
      internal ? null,
      visible ? null,
      readOnly ? null,
    }@attrs:
    attrs // { _type = "option"; };
in
{
  inherit escapeShellArg types mkOption;

  genAttrs =
    names: f:
    listToAttrs (
      map (name: {
        inherit name;
        value = f name;
      }) names
    );
  importJSON = path: builtins.fromJSON (builtins.readFile path);
  mapAttrs = builtins.mapAttrs;
  mapAttrsToList = f: attrs: map (name: f name attrs.${name}) (attrNames attrs);
  listToAttrs = builtins.listToAttrs;
  concatStringsSep = builtins.concatStringsSep;
  replaceStrings = builtins.replaceStrings;
  optionals = condition: list: if condition then list else [ ];
  optionalString = condition: s: if condition then s else "";
  optionalAttrs = condition: attrs: if condition then attrs else { };
  makeBinPath = packages: concatStringsSep ":" (map (p: "${p}/bin") packages);

  # lib/meta.nix getExe: <package>/bin/<meta.mainProgram>. nixpkgs only warns without
  # mainProgram and guesses; the stand-in refuses, so a guess never reaches a module.
  getExe =
    drv:
    assert assertMsg (
      drv ? meta.mainProgram
    ) "lib.getExe: ${drv.name or "package"} has no meta.mainProgram";
    "${drv}/bin/${drv.meta.mainProgram}";
  # lib/attrsets.nix getLib = getOutput "lib": the lib output when there is one.
  getLib = drv: drv.lib or drv.out or drv;

  licenses.mit = {
    spdxId = "MIT";
    fullName = "MIT License";
  };

  literalExpression =
    text:
    if !isString text then
      throw "literalExpression expects a string."
    else
      {
        _type = "literalExpression";
        inherit text;
      };
  mkEnableOption =
    name:
    mkOption {
      type = types.bool;
      default = false;
      example = true;
      description = "Whether to enable ${name}.";
    };
  mkIf = condition: content: {
    _type = "if";
    inherit condition content;
  };
  mkMerge = contents: {
    _type = "merge";
    inherit contents;
  };

  fileset = {
    unions =
      list:
      assert assertMsg (isList list) "lib.fileset.unions: expected a list";
      {
        _type = "fileset";
        paths = concatMap (v: (coerce "lib.fileset.unions" v).paths) list;
      };
    # The source is not copied here (the stand-in builds nothing): the root, once checked.
    toSource =
      { root, fileset }:
      let
        fs = coerce "lib.fileset.toSource: `fileset`" fileset;
        outside = filter (p: !(hasPrefix (toString root) (toString p))) fs.paths;
      in
      assert assertMsg (isPath root) "lib.fileset.toSource: `root` is not a path";
      assert assertMsg (
        outside == [ ]
      ) "lib.fileset.toSource: ${toString (head outside)} is not under root ${toString root}";
      toString root;
  };

}
