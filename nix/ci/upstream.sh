#!/usr/bin/env bash
# The upstream sources the offline checks evaluate (nix/ci/upstream.json), and the locked nixpkgs
# (flake.lock), each by its NAR hash: the store path a fetchTarball of it has.
#
#   nix/ci/upstream.sh paths [--fetch]   one line per source: NAME STORE-PATH, or NAME - when it is
#                                        not in the store (--fetch: download the upstream.json ones
#                                        from GitHub first; never the whole nixpkgs)
#   nix/ci/upstream.sh add NAME DIR      put a copy of NAME into the store, from DIR: a checkout of
#                                        its recorded revision, or a git repository holding that
#                                        revision; refused unless the tree's NAR hash is the recorded one
#
# Needs nix-store, nix-instantiate and nix (Debian's nix-bin) and node.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
export NIX_CONFIG="${NIX_CONFIG:-}"$'\nexperimental-features = nix-command flakes\n'

# NAME REPO REV NARHASH, one line per source.
sources() {
  node -e '
    const [upstream, lock] = process.argv.slice(1).map((f) => JSON.parse(require("fs").readFileSync(f, "utf8")));
    for (const [name, s] of Object.entries(upstream.sources)) console.log(name, s.repo, s.rev, s.narHash);
    const n = lock.nodes.nixpkgs.locked;
    console.log("nixpkgs", `${n.owner}/${n.repo}`, n.rev, n.narHash);
  ' "$root/nix/ci/upstream.json" "$root/flake.lock"
}

store_path() { nix-store --print-fixed-path --recursive sha256 "$1" source; }

case "${1:-}" in
  paths)
    fetch=false
    [[ ${2:-} == --fetch ]] && fetch=true
    while read -r name repo rev hash; do
      path=$(store_path "$hash")
      if nix-store --check-validity "$path" 2>/dev/null; then
        echo "$name $path"
      elif $fetch && [[ $name != nixpkgs ]] &&
        fetched=$(nix eval --raw --impure --option connect-timeout 10 --expr \
          "builtins.fetchTarball { url = \"https://github.com/$repo/archive/$rev.tar.gz\"; sha256 = \"$hash\"; }" 2>/dev/null); then
        echo "$name $fetched"
      else
        echo "$name -"
      fi
    done < <(sources)
    ;;
  add)
    name=${2:?usage: upstream.sh add NAME DIR}
    dir=${3:?usage: upstream.sh add NAME DIR}
    line=$(sources | awk -v n="$name" '$1 == n') || true
    [[ -n $line ]] || { echo "upstream: no source named $name (nix/ci/upstream.json)" >&2; exit 2; }
    read -r _ repo rev hash <<<"$line"
    work=$(mktemp -d)
    trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
    mkdir "$work/source"
    if git -C "$dir" rev-parse --verify --quiet "$rev^{commit}" >/dev/null 2>&1; then
      git -C "$dir" archive "$rev" | tar -x -C "$work/source"
    else
      tar -C "$dir" --exclude=.git -c . | tar -x -C "$work/source"
    fi
    got=$(nix hash path "$work/source")
    if [[ $got != "$hash" ]]; then
      echo "upstream: $dir is not $repo at $rev: its NAR hash is $got, the recorded one $hash" >&2
      exit 1
    fi
    added=$(nix-store --add-fixed --recursive sha256 "$work/source")
    [[ $added == "$(store_path "$hash")" ]] || { echo "upstream: added $added, expected $(store_path "$hash")" >&2; exit 1; }
    echo "$name $added"
    ;;
  *)
    echo "usage: upstream.sh paths [--fetch] | add NAME DIR" >&2
    exit 2
    ;;
esac
