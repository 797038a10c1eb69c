# STAND-IN, NOT NIXPKGS (see nix/ci/README.md): option types as nixpkgs' lib/types.nix defines them
# at nixpkgs.lib de42d44 (nix/ci/NIXPKGS.md), as read: each type's name, its description (the text
# the module system's errors quote), its check, and what kind of merge it does (nix/ci/model/
# modules.nix merges by `kind`). lib.nix exposes only the types NIXPKGS.md lists as `lib.types`;
# the model of the upstream declarations (nix/ci/model) uses the rest. Written for this repository
# from that reading; no nixpkgs code is copied.
let
  inherit (builtins)
    concatStringsSep
    elem
    head
    isAttrs
    isBool
    isFunction
    isInt
    isList
    isPath
    isString
    length
    match
    stringLength
    substring
    ;

  hasPrefix = prefix: s: substring 0 (stringLength prefix) s == prefix;
  isDerivation = v: isAttrs v && (v.type or null) == "derivation";
  isStringLike = x: isString x || isPath x || (isAttrs x && (x ? outPath || x ? __toString));
  # lib/strings.nix:2678 isStorePath: an absolute string-like value directly under the store.
  isStorePath =
    x: isStringLike x && (let s = toString x; in substring 0 1 s == "/" && dirOf s == builtins.storeDir);
  isUnderStore = s: hasPrefix "${builtins.storeDir}/" s;

  # types.nix:302 optionDescriptionPhrase: a description in parentheses unless its class fits.
  phrase =
    fits: t: if fits (t.descriptionClass or null) then t.description else "(${t.description})";
  noun = class: class == "noun";
  nounOrComposite = class: class == "noun" || class == "composite";
  nounOrConjunction = class: class == "noun" || class == "conjunction";

  mkType =
    attrs:
    {
      _type = "option-type";
      kind = "leaf";
      # lib/options.nix mergeEqualOption: every definition the same value.
      descriptionClass = null;
    }
    // attrs;

  leaf =
    name: description: check:
    mkType {
      inherit name description check;
      descriptionClass = "noun";
    };

  # types.nix:658 pathWith.
  pathWith =
    {
      inStore ? null,
      absolute ? null,
    }:
    mkType {
      name = "path";
      descriptionClass = "noun";
      description =
        (if absolute == null then "" else if absolute then "absolute " else "relative ")
        + "path"
        + (if inStore == null then "" else if inStore then " in the Nix store" else " not in the Nix store");
      check =
        x:
        let
          s = if isStringLike x then toString x else null;
          isInStore = s != null && isUnderStore s;
          isAbsolute = s != null && hasPrefix "/" s;
          # A value that must stay out of the store has to be a string: a path literal would be
          # copied into the store once interpolated.
          expected = if inStore == null || inStore then s != null else isString x;
        in
        expected
        && (inStore == null || inStore == isInStore)
        && (absolute == null || absolute == isAbsolute);
    };

  show =
    v:
    if isString v then
      ''"${v}"''
    else if isInt v then
      toString v
    else if isBool v then
      (if v then "true" else "false")
    else
      "<${builtins.typeOf v}>";

  either =
    t1: t2:
    mkType {
      name = "either";
      kind = "either";
      inherit t1 t2;
      descriptionClass = "conjunction";
      # types.nix:1631
      description = "${phrase nounOrConjunction t1} or ${
        phrase (class: nounOrConjunction class || class == "composite") t2
      }";
      check = x: t1.check x || t2.check x;
    };
in
rec {
  anything = leaf "anything" "anything" (_: true) // {
    kind = "anything";
  };
  unspecified = leaf "unspecified" "unspecified value" (_: true) // {
    kind = "anything";
  };
  bool = leaf "bool" "boolean" isBool; # types.nix:374
  int = leaf "int" "signed integer" isInt; # types.nix:397
  str = leaf "str" "string" isString; # types.nix:517
  nonEmptyStr = leaf "nonEmptyStr" "non-empty string" (x: isString x && match "[ \t\n]*" x == null); # :525
  singleLineStr = leaf "singleLineStr" "(optionally newline-terminated) single-line string" (
    x: isString x && match "[^\n\r]*\n?" x != null
  ); # :534
  strMatching =
    pattern:
    leaf "strMatching ${pattern}" "string matching the pattern ${pattern}" (
      x: isString x && match pattern x != null
    ); # :546
  attrs = leaf "attrs" "attribute set" isAttrs; # :593
  package = leaf "package" "package" (x: isDerivation x || isStorePath x); # :620
  path = pathWith { absolute = true; }; # :645
  externalPath = pathWith {
    absolute = true;
    inStore = false;
  }; # :653
  inherit pathWith either;

  # :705
  listOf =
    elemType:
    mkType {
      name = "listOf";
      kind = "list";
      inherit elemType;
      descriptionClass = "composite";
      description = "list of ${phrase nounOrComposite elemType}";
      check = isList;
    };
  # :944 attrsOf = attrsWith { elemType }, :959
  attrsOf =
    elemType:
    mkType {
      name = "attrsOf";
      kind = "attrs";
      inherit elemType;
      descriptionClass = "composite";
      description = "attribute set of ${phrase nounOrComposite elemType}";
      check = isAttrs;
    };
  # :1212
  nullOr =
    elemType:
    mkType {
      name = "nullOr";
      kind = "nullOr";
      inherit elemType;
      descriptionClass = "conjunction";
      description = "null or ${phrase nounOrConjunction elemType}";
      check = x: x == null || elemType.check x;
    };
  # :1553
  enum =
    values:
    mkType {
      name = "enum";
      descriptionClass = if length values < 2 then "noun" else "conjunction";
      description =
        if values == [ ] then
          "impossible (empty enum)"
        else if length values == 1 then
          "value ${show (head values)} (singular enum)"
        else
          "one of ${concatStringsSep ", " (map show values)}";
      check = x: elem x values;
    };
  # :1719 oneOf = foldl' either (head ts) (tail ts)
  oneOf = ts: builtins.foldl' either (head ts) (builtins.tail ts);
  # :1729
  coercedTo =
    coercedType: coerce: finalType:
    mkType {
      name = "coercedTo";
      kind = "coercedTo";
      inherit coercedType coerce finalType;
      description = "${phrase noun finalType} or ${phrase noun coercedType} convertible to it";
      check = x: (coercedType.check x && finalType.check (coerce x)) || finalType.check x;
    };
  # :1275 submodule, :1366 submoduleWith: `options` is a set of declarations, or a function of
  # the attribute name it is merged under (the module argument `name`); freeformType the type of
  # what the declarations leave open (null: nothing is).
  submodule =
    {
      options,
      freeformType ? null,
      description ? null,
    }:
    mkType {
      name = "submodule";
      kind = "submodule";
      inherit options freeformType;
      descriptionClass = "noun";
      description =
        if description != null then
          description
        else if freeformType != null then
          "open submodule of ${phrase nounOrComposite freeformType}"
        else
          "submodule";
      check = x: isAttrs x || isFunction x || isPath x;
    };
}
