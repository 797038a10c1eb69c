#!/usr/bin/env bash
# Refreshes nix/pnpm-deps.json after pnpm-lock.yaml changed: {"lockSha256": <sha256 of
# pnpm-lock.yaml>, "hash": <SRI hash of the fetchPnpmDeps store, read by nix/workspace.nix>}.
#
#   scripts/refresh-pnpm-deps-hash.sh            on a machine whose Nix can build the flake (real nixpkgs,
#                                                npm registry access): sets the hash to lib.fakeHash, builds
#                                                .#pnpm-deps, takes the "got: sha256-..." Nix reports, writes
#                                                it, and builds again to confirm. This is the usual Nix
#                                                recipe (hash = lib.fakeHash or ""; build; copy `got:`) in one step.
#   scripts/refresh-pnpm-deps-hash.sh --pending  without Nix: records the new lockfile digest with the
#                                                placeholder hash, so the offline check passes and says the
#                                                hash is pending; GitHub's "Nix" workflow, run by hand with
#                                                refresh-pnpm-deps-hash, then commits the real hash.
# The hash is the same on every system (fetchPnpmDeps fetches every platform's optional packages).
# A nixpkgs update that changes pnpm_12 or fetchPnpmDeps can change it too: the Nix workflow then
# fails with a hash mismatch, and this script refreshes it.
set -euo pipefail
cd "$(dirname "$0")/.."

placeholder='sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' # lib.fakeHash
pin=nix/pnpm-deps.json
if command -v sha256sum >/dev/null; then digest=$(sha256sum pnpm-lock.yaml | cut -d' ' -f1); else digest=$(shasum -a 256 pnpm-lock.yaml | cut -d' ' -f1); fi
write_pin() { printf '{\n  "lockSha256": "%s",\n  "hash": "%s"\n}\n' "$digest" "$1" >"$pin"; }

if [[ ${1:-} == --pending ]]; then
  write_pin "$placeholder"
  echo "refresh-pnpm-deps-hash: $pin now records pnpm-lock.yaml $digest with the placeholder hash;"
  echo "refresh-pnpm-deps-hash: run GitHub's \"Nix\" workflow with refresh-pnpm-deps-hash to fill in the real one."
  exit 0
fi
[[ $# -eq 0 ]] || {
  echo "usage: $0 [--pending]" >&2
  exit 2
}
command -v nix >/dev/null || {
  echo "refresh-pnpm-deps-hash: needs Nix; without it use --pending" >&2
  exit 1
}

nix=(nix --extra-experimental-features 'nix-command flakes')
backup=$(mktemp)
log=$(mktemp)
trap 'rm -f "$backup" "$log"' EXIT
cp "$pin" "$backup"

write_pin "$placeholder"
if "${nix[@]}" build --no-link -L .#pnpm-deps 2>&1 | tee "$log"; then
  cp "$backup" "$pin"
  echo "refresh-pnpm-deps-hash: .#pnpm-deps built with the placeholder hash, which cannot be right" >&2
  exit 1
fi
got=$(grep -oE 'got: +sha256-[A-Za-z0-9+/]{43}=' "$log" | tail -n1 | awk '{print $2}')
if [[ -z $got ]]; then
  cp "$backup" "$pin"
  echo "refresh-pnpm-deps-hash: the build failed without reporting a hash (see above); $pin is unchanged" >&2
  exit 1
fi
write_pin "$got"
"${nix[@]}" build --no-link -L .#pnpm-deps
echo "refresh-pnpm-deps-hash: $pin: hash $got for pnpm-lock.yaml $digest"
