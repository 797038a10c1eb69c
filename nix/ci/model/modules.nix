# MODEL, NOT NIXPKGS (nix/ci/README.md "Two paths"): the module system of nixpkgs' lib/modules.nix
# at nixpkgs.lib de42d44, as read, for what the Floot service modules and the declarations of
# nix/ci/model use. scripts/check-nix.sh always evaluates the modules with it, and on a fresh machine
# (`.ci/run`: nixpkgs' lib is not in its Nix store) only with it; where nixpkgs' lib is in the
# store, the real lib.evalModules runs first.
#
# What it does as the real one does (file:line at de42d44):
#   - modules are sets or functions of { config, options, lib, ... } with `options`, `config`
#     (or config given directly: the shorthand), `imports` and `_file`;
#   - mkIf and mkMerge are pushed down into attribute sets before any condition is evaluated
#     (pushDownProperties, modules.nix:1335) and discharged at each option (dischargeProperties,
#     :1375), so a condition may read config;
#   - a definition no declaration and no freeformType covers fails: "The option `…' does not
#     exist." (:349); a definition its type's check refuses fails: "A definition for option `…'
#     is not of type `…'." (:1259), with the type descriptions of lib/types.nix (stub-nixpkgs/
#     types.nix); an option with neither definition nor default: "… was accessed but has no
#     value defined" (:1266); definitions of a leaf option must agree (options.nix:512);
#   - listOf concatenates, attrsOf merges per name, nullOr, either, coercedTo and submodule merge
#     as lib/types.nix does (a submodule under attrsOf gets the attribute name as `name`);
#     an option's `apply` is applied to the merged value.
# What it does not have, and refuses instead of guessing: mkOverride (mkDefault, mkForce), mkOrder,
# mkBefore/mkAfter, declarations of one option in two modules, submodules given as functions or
# paths, and types it does not know (`unmodelled`: a definition of such an option fails here;
# GitHub's Nix workflow checks it with the real module system).
{ types }:
let
  inherit (builtins)
    all
    attrNames
    concatLists
    concatMap
    concatStringsSep
    elem
    filter
    foldl'
    genList
    head
    isAttrs
    isBool
    isFunction
    isInt
    isList
    isString
    length
    listToAttrs
    mapAttrs
    match
    toJSON
    ;

  unique = foldl' (seen: x: if elem x seen then seen else seen ++ [ x ]) [ ];
  imap1 = f: list: genList (i: f (i + 1) (builtins.elemAt list i)) (length list);

  isOption = v: isAttrs v && (v._type or null) == "option";
  property = v: if isAttrs v then v._type or "" else "";
  mkIf = condition: content: {
    _type = "if";
    inherit condition content;
  };

  # options.nix:817 showOption: a part that is not a Nix identifier is quoted.
  showOption =
    loc:
    concatStringsSep "." (
      map (part: if match "[A-Za-z_][A-Za-z0-9_'-]*" part != null then part else toJSON part) loc
    );
  # options.nix:834 showDefs prints each value with lib.generators.toPretty; the model prints the
  # plain values (strings, numbers, booleans, null, lists of them) as JSON and leaves others out.
  plain = v: isString v || isInt v || isBool v || v == null || (isList v && all plain v);
  showDefs = concatMapStrings (
    def: "\n- In `${def.file}'" + (if plain def.value then ": ${toJSON def.value}" else "")
  );
  concatMapStrings = f: list: concatStringsSep "" (map f list);
  note = "\n(the model of the module system and of the upstream declarations, nix/ci/model: where a declaration it lacks exists upstream, add it there with the file and revision it was read from)";
  fail = message: throw (message + note);

  unsupported =
    loc: what:
    fail "nix/ci/model does not model ${what} (at `${showOption loc}'); the real module system does (GitHub's Nix workflow)";

  # modules.nix:1335 pushDownProperties.
  pushDown =
    loc: cfg:
    let
      kind = property cfg;
    in
    if kind == "merge" then
      concatMap (pushDown loc) cfg.contents
    else if kind == "if" then
      map (v: if isAttrs v then mapAttrs (_: mkIf cfg.condition) v else v) (pushDown loc cfg.content)
    else if kind == "override" || kind == "order" || kind == "definition" then
      unsupported loc "a ${kind} property (mkDefault, mkForce, mkOrder)"
    else
      [ cfg ];

  # modules.nix:1375 dischargeProperties.
  discharge =
    loc: def:
    let
      kind = property def;
    in
    if kind == "merge" then
      concatMap (discharge loc) def.contents
    else if kind == "if" then
      if isBool def.condition then
        (if def.condition then discharge loc def.content else [ ])
      else
        throw "‘mkIf’ called with a non-Boolean condition"
    else if kind == "override" || kind == "order" || kind == "definition" then
      unsupported loc "a ${kind} property (mkDefault, mkForce, mkOrder)"
    else
      [ def ];

  dischargeDefs =
    loc: defs:
    concatMap (
      d:
      map (value: {
        inherit (d) file;
        inherit value;
      }) (discharge loc d.value)
    ) defs;

  defsAt =
    name: defs:
    concatMap (
      d:
      if d.value ? ${name} then
        [
          {
            inherit (d) file;
            value = d.value.${name};
          }
        ]
      else
        [ ]
    ) defs;

  notOfType =
    loc: type: bad:
    fail "A definition for option `${showOption loc}' is not of type `${type.description}'. Definition values:${showDefs bad}";

  # The merge of lib/types.nix for each kind; defs are discharged and non-empty.
  mergeValue =
    loc: type: defs:
    let
      bad = filter (d: !type.check d.value) defs;
      values = map (d: d.value) defs;
    in
    if type.kind == "unmodelled" then
      unsupported loc "the type of this option (declared by ${type.source})"
    else if bad != [ ] then
      notOfType loc type bad
    else if type.kind == "leaf" then
      # options.nix:512 mergeEqualOption
      if all (v: v == head values) values then
        head values
      else
        fail "The option `${showOption loc}' has conflicting definition values:${showDefs defs}"
    else if type.kind == "anything" then
      if all isList values then
        concatLists values
      else
        mergeValue loc (types.unspecified // { kind = "leaf"; }) defs
    else if type.kind == "list" then
      concatLists (
        imap1 (
          i: d:
          imap1 (
            j: v:
            mergeValue (loc ++ [ "[definition ${toString i}-entry ${toString j}]" ]) type.elemType [
              {
                inherit (d) file;
                value = v;
              }
            ]
          ) d.value
        ) defs
      )
    else if type.kind == "attrs" then
      mergeAttrs loc (_: type.elemType) (unique (concatMap (d: attrNames d.value) defs)) defs
    else if type.kind == "nullOr" then
      let
        nulls = filter (v: v == null) values;
      in
      if nulls == [ ] then
        mergeValue loc type.elemType defs
      else if length nulls == length values then
        null
      else
        fail "The option `${showOption loc}` is defined both null and not null"
    else if type.kind == "either" then
      if all type.t1.check values then
        mergeValue loc type.t1 defs
      else if all type.t2.check values then
        mergeValue loc type.t2 defs
      else
        fail "The option `${showOption loc}` is neither a value of type `${type.t1.description}` nor `${type.t2.description}`, Definition values: ${showDefs defs}"
    else if type.kind == "coercedTo" then
      mergeValue loc type.finalType (
        map (d: d // { value = if type.coercedType.check d.value then type.coerce d.value else d.value; }) defs
      )
    else if type.kind == "submodule" then
      if all isAttrs values then
        evalTree loc (submoduleOptions loc type) type.freeformType defs
      else
        unsupported loc "a submodule definition that is a function or a path"
    else
      unsupported loc "the type kind ${type.kind}";

  submoduleOptions =
    loc: type:
    if isFunction type.options then type.options { name = if loc == [ ] then "" else lastOf loc; } else type.options;
  lastOf = list: builtins.elemAt list (length list - 1);

  # attrsOf (types.nix:959): each name merged by its own definitions; a name whose definitions
  # all discharge to nothing (mkIf false) is left out.
  mergeAttrs =
    loc: typeAt: names: defs:
    listToAttrs (
      concatMap (
        name:
        let
          values = dischargeDefs (loc ++ [ name ]) (defsAt name defs);
        in
        if values == [ ] then
          [ ]
        else
          [
            {
              inherit name;
              value = mergeValue (loc ++ [ name ]) (typeAt name) values;
            }
          ]
      ) names
    );

  # modules.nix:1185 mergeDefinitions, for one declared option.
  mergeOption =
    loc: option: defs:
    let
      type = if option.type or null == null then types.unspecified else option.type;
      values = dischargeDefs loc defs;
      merged =
        if values != [ ] then
          mergeValue loc type values
        else if option ? default then
          (
            if type.kind == "unmodelled" then
              option.default
            else
              mergeValue loc type [
                {
                  file = option.declaredIn or "a declaration";
                  value = option.default;
                }
              ]
          )
        else if elem type.kind [
          "nullOr"
          "list"
          "attrs"
        ] then
          # types.nix: the emptyValue of nullOr, listOf and attrsOf.
          (
            if type.kind == "nullOr" then
              null
            else if type.kind == "list" then
              [ ]
            else
              { }
          )
        else if type.kind == "submodule" then
          evalTree loc (submoduleOptions loc type) type.freeformType [ ]
        else
          throw "The option `${showOption loc}' was accessed but has no value defined. Try setting the option.";
    in
    if option.apply or null != null then option.apply merged else merged;

  # The configuration under `loc`: `declarations` its declared options (a tree whose leaves are
  # options), `freeform` null or the attrsOf type of what they leave open, `defs` its definitions.
  evalTree =
    loc: declarations: freeform: defs:
    let
      pushed = concatMap (
        d:
        map (value: {
          inherit (d) file;
          inherit value;
        }) (pushDown loc d.value)
      ) defs;
      notSets = filter (d: !isAttrs d.value) pushed;
      defined = unique (concatMap (d: attrNames d.value) pushed);
      unknown = filter (name: !(declarations ? ${name})) defined;
      inner = if freeform == null then null else freeform.elemType;
      value =
        name:
        let
          declaration = declarations.${name};
        in
        if isOption declaration then
          mergeOption (loc ++ [ name ]) declaration (defsAt name pushed)
        else if inner == null || inner.kind == "attrs" then
          evalTree (loc ++ [ name ]) declaration inner (defsAt name pushed)
        else
          unsupported (loc ++ [ name ]) "a freeformType that is not an attribute set of attribute sets here";
    in
    if notSets != [ ] then
      notOfType loc {
        description = "attribute set of option definitions";
      } notSets
    else if freeform == null && unknown != [ ] then
      fail "The option `${showOption (loc ++ [ (head unknown) ])}' does not exist. Definition values:${
        showDefs (defsAt (head unknown) pushed)
      }"
    else
      mapAttrs (name: _: value name) declarations // mergeAttrs loc (_: inner) unknown pushed;

  # Option declarations of several modules, merged into one tree.
  mergeDeclarations =
    loc: a: b:
    a
    // mapAttrs (
      name: v:
      if !(a ? ${name}) then
        v
      else if isOption v || isOption a.${name} then
        unsupported (loc ++ [ name ]) "an option declared in two modules"
      else
        mergeDeclarations (loc ++ [ name ]) a.${name} v
    ) b;

  # Each option under its declaring file, for the default's definition.
  annotate =
    file: tree:
    mapAttrs (
      _: v:
      if isOption v then
        { declaredIn = file; } // v
      else if isAttrs v then
        annotate file v
      else
        v
    ) tree;
in
{
  inherit showOption;

  # lib.evalModules { modules; specialArgs }: { config, options } as the real one returns them.
  evalModules =
    {
      modules,
      specialArgs ? { },
    }:
    let
      args = specialArgs // {
        inherit config options;
      };
      # A module without `_file` is named by the module importing it, as the real one does.
      load =
        parentFile: module:
        let
          m = if isFunction module then module args else module;
          file = m._file or parentFile;
          known = [
            "_file"
            "imports"
            "options"
            "config"
          ];
          shorthand = !(m ? options || m ? config);
        in
        assert
          !(m ? _module)
          || unsupported [ "_module" ] "_module (give module arguments as specialArgs)";
        [
          {
            inherit file;
            options = annotate file (m.options or { });
            config = if shorthand then removeAttrs m known else m.config or { };
          }
        ]
        ++ concatMap (load file) (m.imports or [ ]);
      loaded = concatMap (load "<unknown-file>") modules;
      options = foldl' (mergeDeclarations [ ]) { } (map (m: m.options) loaded);
      config = evalTree [ ] options null (
        map (m: {
          inherit (m) file;
          value = m.config;
        }) loaded
      );
    in
    {
      inherit config options;
    };
}
