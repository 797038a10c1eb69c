#!/usr/bin/env bash
# Runs a command with the Nix of a fresh machine, as CI's is: /nix hidden behind an empty tmpfs in
# a mount namespace of its own (no store paths, no Nix database: none of nix/ci/upstream.json's
# sources, nothing a session added by hand), and an empty XDG cache (Nix's fetcher cache). The rest
# of the machine is as it is (Debian's nix-bin in /usr/bin, node, the npm registry).
# Needs root (unshare, mount).
#   nix/ci/fresh-machine.sh bash scripts/check-nix.sh
#   nix/ci/fresh-machine.sh node scripts/bootstrap.mjs test --project repo-checks
set -euo pipefail
(($# > 0)) || {
  echo "usage: nix/ci/fresh-machine.sh COMMAND [ARG...]" >&2
  exit 2
}
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
unshare --mount --propagation private -- env XDG_CACHE_HOME="$cache" bash -c '
  mount -t tmpfs -o mode=0755 fresh-machine-nix /nix
  echo "fresh-machine: /nix is an empty tmpfs, XDG_CACHE_HOME=$XDG_CACHE_HOME" >&2
  "$@"' fresh-machine "$@"
