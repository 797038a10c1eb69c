#!/usr/bin/env bash
# GitHub's Nix workflow, after cachix/cachix-action configured the cache: does flake.nix's
# nixConfig trust the key Cachix serves the cache with? Users accepting the flake's config rely on
# it. A mismatch is a warning with the lines to commit (the key exists only once the cache does:
# README "Install", one-time setup), not a failure: builds and the cache are right either way, and
# a key nobody holds the secret half of vouches for nothing.
#   nix/ci/cache-key.sh <cache name>
set -euo pipefail
cache=${1:?usage: cache-key.sh <cache name>}
prefix="$cache.cachix.org-1:"

effective=$(nix config show trusted-public-keys 2>/dev/null || nix show-config 2>/dev/null | sed -n 's/^trusted-public-keys = //p')
served=$(tr ' ' '\n' <<<"$effective" | grep -F "$prefix" | head -n1 || true)
trusted=$(nix eval --raw --file flake.nix --apply \
  'f: builtins.concatStringsSep "\n" (f.nixConfig.extra-trusted-public-keys or [ ])' | grep -F "$prefix" || true)

summary=${GITHUB_STEP_SUMMARY:-/dev/stderr}
if [[ -z $served ]]; then
  echo "::warning file=flake.nix::cachix-action did not configure a key for $cache.cachix.org; is the cache public and does it exist?"
elif [[ $served != "$trusted" ]]; then
  echo "::warning file=flake.nix::flake.nix nixConfig trusts '${trusted:-no key}' for $cache.cachix.org, but the cache is signed with '$served'. Put '$served' in flake.nix nixConfig.extra-trusted-public-keys and in README.md."
  {
    echo "### Binary cache key"
    echo "flake.nix trusts \`${trusted:-no key}\`; $cache.cachix.org signs with \`$served\`. Commit:"
    echo '```nix'
    echo "extra-trusted-public-keys = [ \"$served\" ];"
    echo '```'
  } >>"$summary"
else
  echo "flake.nix trusts $served, the key $cache.cachix.org signs with"
fi
