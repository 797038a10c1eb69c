# STRUCTURE CHECK ONLY (see nix/ci/README.md): the few `lib` functions the Bridgeworks flake uses,
# with the same names and argument shapes as nixpkgs' lib. The module-system functions only record
# what they were given; nix/ci/module-shape.nix reads those records.
let
  inherit (builtins)
    all
    attrNames
    concatMap
    concatStringsSep
    isAttrs
    isList
    isPath
    isString
    listToAttrs
    pathExists
    stringLength
    substring
    typeOf
    ;

  hasPrefix = prefix: s: substring 0 (stringLength prefix) s == prefix;
  hasSuffix =
    suffix: s:
    let
      n = stringLength s;
      m = stringLength suffix;
    in
    n >= m && substring (n - m) m s == suffix;

  assertMsg = condition: message: if condition then true else throw message;

  escapeShellArg = arg: "'${builtins.replaceStrings [ "'" ] [ "'\\''" ] (toString arg)}'";

  isFileset = v: isAttrs v && (v._type or null) == "fileset";
  toFileset =
    caller: v:
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
          throw "lib.fileset.${caller}: ${toString v} is a path that does not exist (flakes see only git-tracked files)."
      )
    else
      throw "lib.fileset.${caller}: expected a path or a file set, got a ${typeOf v}.";

  unions = list: {
    _type = "fileset";
    paths = concatMap (v: (toFileset "unions" v).paths) list;
  };

  mkType = name: check: { inherit name check; };
  types = {
    bool = mkType "bool" builtins.isBool;
    str = mkType "str" isString;
    path = mkType "path" (v: isPath v || (isString v && hasPrefix "/" v));
    package = mkType "package" (v: isAttrs v && (v.type or null) == "derivation");
    listOf = t: mkType "listOf ${t.name}" (v: isList v && all t.check v);
    attrsOf = t: mkType "attrsOf ${t.name}" (v: isAttrs v && all (n: t.check v.${n}) (attrNames v));
    nullOr = t: mkType "nullOr ${t.name}" (v: v == null || t.check v);
  };

  mkOption =
    args:
    assert assertMsg (args ? type) "lib.mkOption: every option here must have a type";
    assert assertMsg (args ? description) "lib.mkOption: every option here must have a description";
    args // { _type = "option"; };
in
{
  inherit
    assertMsg
    escapeShellArg
    hasPrefix
    hasSuffix
    types
    mkOption
    ;

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
  concatStringsSep = concatStringsSep;
  optionals = condition: list: if condition then list else [ ];
  optionalString = condition: s: if condition then s else "";
  optionalAttrs = condition: attrs: if condition then attrs else { };
  escapeShellArgs = args: concatStringsSep " " (map escapeShellArg args);
  makeBinPath = packages: concatStringsSep ":" (map (p: "${p}/bin") packages);
  versionAtLeast = v: min: builtins.compareVersions v min >= 0;

  getExe =
    drv:
    assert assertMsg (
      drv ? meta.mainProgram
    ) "lib.getExe: ${drv.name or "package"} has no meta.mainProgram";
    "${drv}/bin/${drv.meta.mainProgram}";
  getLib = drv: drv.lib or drv;

  fakeHash = "sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
  licenses.mit = {
    spdxId = "MIT";
    shortName = "mit";
  };

  literalExpression = text: {
    _type = "literalExpression";
    inherit text;
  };
  mkEnableOption =
    name:
    mkOption {
      type = types.bool;
      default = false;
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
    inherit unions;
    union = a: b: unions [
      a
      b
    ];
    maybeMissing =
      path:
      if pathExists path then
        toFileset "maybeMissing" path
      else
        {
          _type = "fileset";
          paths = [ ];
        };
    toSource =
      { root, fileset }:
      let
        fs = toFileset "toSource" fileset;
        outside = builtins.filter (p: !(hasPrefix (toString root) (toString p))) fs.paths;
      in
      assert assertMsg (isPath root) "lib.fileset.toSource: root must be a path";
      assert assertMsg (
        outside == [ ]
      ) "lib.fileset.toSource: ${toString (builtins.head outside)} is outside root ${toString root}";
      root;
  };
}
