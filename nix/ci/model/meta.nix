# MODEL, NOT NIXPKGS (nix/ci/README.md "Two paths"): nixpkgs' check-meta platform rule for a
# platform given by its system string, where nixpkgs' lib is not in the Nix store.
#   nixpkgs.lib de42d44 lib/meta.nix:367 availableOn = platform: pkg:
#     (no meta.platforms, or one of them matches) and (no meta.badPlatforms, or none matches)
#   nixpkgs.lib de42d44 lib/meta.nix:317 platformMatch: a string pattern matches when it equals
#     platform.system; an attribute-set pattern is matched against lib.systems.elaborate of the
#     platform, which the model does not have: it refuses such a pattern instead of guessing.
#   check-meta.nix refuses a package for which `availableOn hostPlatform` is false
#   (nix/ci/NIXPKGS.md "check-meta" says which versions of it were read).
let
  matches =
    system: pkg: pattern:
    if builtins.isString pattern then
      pattern == system
    else
      throw "nix/ci/model/meta.nix: ${pkg.name or "a package"} names a platform by an attribute set in meta.platforms or meta.badPlatforms; lib.meta.platformMatch matches it against lib.systems.elaborate, which the model does not have (GitHub's Nix workflow checks it with nixpkgs' lib)";
in
{
  availableOn =
    system: pkg:
    (!(pkg ? meta.platforms) || builtins.any (matches system pkg) pkg.meta.platforms)
    && (!(pkg ? meta.badPlatforms) || !(builtins.any (matches system pkg) pkg.meta.badPlatforms));
}
