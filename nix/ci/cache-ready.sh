#!/usr/bin/env bash
# GitHub's Nix workflow, before anything uses the Cachix cache: is it set up (README "Install",
# one-time setup)? Writes ready=true or ready=false to $GITHUB_OUTPUT. A cache that does not exist
# yet is not an error: cachix-action (which runs `cachix use` and fails on it), the push and the
# key comparison are skipped with a notice, and every build still runs.
#   nix/ci/cache-ready.sh <cache name>      (CACHE_URL overrides https://<cache name>.cachix.org,
#                                           CACHE_RETRIES curl's 3 retries)
set -euo pipefail
cache=${1:?usage: cache-ready.sh <cache name>}
url=${CACHE_URL:-https://$cache.cachix.org}
output=${GITHUB_OUTPUT:-/dev/stdout}

# nix-cache-info is what every Nix binary cache serves at its root; Cachix answers 404 (or not at
# all) for a cache nobody created.
if curl --fail --silent --show-error --location --max-time 30 --retry "${CACHE_RETRIES:-3}" --retry-all-errors \
  "$url/nix-cache-info" >/dev/null; then
  echo "ready=true" >>"$output"
  echo "$url is set up: this run substitutes from it (and pushes with CACHIX_AUTH_TOKEN)"
else
  echo "ready=false" >>"$output"
  echo "::notice title=Binary cache not set up::$url does not answer, so this run substitutes nothing from it and pushes nothing; everything is built. One-time setup: README \"Install\" (create the cache, add CACHIX_AUTH_TOKEN, commit its public key)."
fi
