# Every option the model declares (nix/ci/model/home-manager.nix, nixos.nix) with the upstream
# file and revision it names as its source, for packages/repo-checks (nix-model.test.ts).
#   nix-instantiate --eval --strict --json nix/ci/model/sources.nix
let
  inherit (builtins)
    attrNames
    concatMap
    concatStringsSep
    elem
    isAttrs
    isFunction
    ;
  types = import ../stub-nixpkgs/types.nix;
  homeManager = (import ./home-manager.nix { inherit types; }) { config = { }; };
  nixos = import ./nixos.nix { inherit types; };

  isOption = v: isAttrs v && (v._type or null) == "option";
  # The declarations inside an option's type: a submodule's, wherever the type nests one.
  inner =
    type:
    let
      kind = type.kind or null;
    in
    if kind == "submodule" then
      [ (if isFunction type.options then type.options { name = "<name>"; } else type.options) ]
    else if
      elem kind [
        "list"
        "attrs"
        "nullOr"
      ]
    then
      inner type.elemType
    else if kind == "either" then
      inner type.t1 ++ inner type.t2
    else if kind == "coercedTo" then
      inner type.finalType
    else
      [ ];
  walk =
    loc: tree:
    concatMap (
      name:
      let
        v = tree.${name};
        here = loc ++ [ name ];
      in
      if isOption v then
        [
          {
            option = concatStringsSep "." here;
            inherit (v) source;
          }
        ]
        ++ concatMap (walk here) (inner (v.type or { }))
      else
        walk here v
    ) (attrNames tree);
in
{
  homeManager = walk [ ] homeManager.options;
  nixos = walk [ ] nixos.options;
}
