# shellcheck shell=bash
# The steps of the Nix build, as shell functions: nix/workspace.nix sources this file in its phases,
# and nix/ci/rehearse-sandbox.sh runs the same functions outside Nix (network namespace with
# loopback only) to rehearse the build here. Run from the workspace root.
#
# Expects: node, pnpm (the lockfile's own pnpm 12), a writable HOME and TMPDIR, and
#   bridgeworksNix        the directory holding npm-registry.mjs, install-app.mjs, check-app.mjs,
#                         apps.json and sandbox.json
#   npmTarballsManifest   a JSON file: registry path -> tarball file (this system's tarballs)
#   pnpmPlatformFlags     pnpm's --os/--cpu/--libc for this system (word-split on purpose)

# pnpm 12 would check the lockfile against supply-chain policies (registry metadata the sandbox
# does not have: integrity is what fetchurl and pnpm check), re-verify the install before every
# `pnpm run`, and look for updates.
export pnpm_config_verify_deps_before_run=false
export pnpm_config_update_notifier=false
export npm_config_update_notifier=false
# better-sqlite3's install script: no prebuilt download, node-gyp against npm_config_nodedir.
export npm_config_build_from_source=true

bridgeworks_json() {
  node -e 'const v = process.argv[2].split(".").reduce((o, k) => o?.[k], require(process.argv[1]));
    if (v === undefined) { console.error(`bridgeworks: ${process.argv[1]} has no ${process.argv[2]}`); process.exit(1); }
    for (const x of [].concat(v)) console.log(x)' "$1" "$2"
}

# `pnpm --filter` arguments that leave out nix/sandbox.json installExclude.
bridgeworks_exclude_filters() {
  local name
  while IFS= read -r name; do
    printf '%s\n' --filter "!$name"
  done < <(bridgeworks_json "$bridgeworksNix/sandbox.json" installExclude)
}

# pnpm install of the workspace from the tarballs Nix fetched, served on 127.0.0.1.
bridgeworks_install() {
  local portFile="$TMPDIR/npm-registry.port" registryPid port waited=0 status=0
  local -a filters
  mapfile -t filters < <(bridgeworks_exclude_filters)
  rm -f "$portFile"
  node "$bridgeworksNix/npm-registry.mjs" "$npmTarballsManifest" "$portFile" &
  registryPid=$!
  while [[ ! -s $portFile ]]; do
    if ! kill -0 "$registryPid" 2>/dev/null || ((waited >= 300)); then
      echo "bridgeworks: the loopback npm registry did not start" >&2
      return 1
    fi
    sleep 0.1
    waited=$((waited + 1))
  done
  port=$(<"$portFile")
  # shellcheck disable=SC2086 # pnpmPlatformFlags is a list of flags
  pnpm install --frozen-lockfile --trust-lockfile --reporter=append-only \
    --registry="http://127.0.0.1:$port/" --store-dir="$TMPDIR/pnpm-store" \
    $pnpmPlatformFlags "${filters[@]}" || status=$?
  kill "$registryPid"
  wait "$registryPid" || true
  if ((status != 0)); then
    echo "bridgeworks: pnpm install failed; a tarball it wanted that this system's list lacks is named above (npm-registry: 404 ...): regenerate nix/npm-tarballs.json with node nix/npm-tarballs.mjs" >&2
    return "$status"
  fi
  # The packages' own scripts (tsc -b, tsdown, vitest) come from the workspace root.
  export PATH="$PWD/node_modules/.bin:$PATH"
}

# Builds one app and the workspace packages it uses (not the ones `pnpm install` left out).
bridgeworks_build_app() {
  local app=$1 workspace dir entry
  local -a filters
  workspace=$(bridgeworks_json "$bridgeworksNix/apps.json" "apps.$app.workspace")
  dir=$(bridgeworks_json "$bridgeworksNix/apps.json" "apps.$app.dir")
  entry=$(bridgeworks_json "$bridgeworksNix/apps.json" "apps.$app.entry")
  if [[ ! -f $dir/package.json ]]; then
    echo "bridgeworks: $dir/package.json is not in the source; is $workspace committed?" >&2
    return 1
  fi
  mapfile -t filters < <(bridgeworks_exclude_filters)
  pnpm --filter "$workspace..." "${filters[@]}" run build
  if [[ ! -f $dir/$entry ]]; then
    echo "bridgeworks: $workspace's build script did not produce $dir/$entry" >&2
    return 1
  fi
}

# The vitest arguments of the unit-tests check, one a line: the projects nix/sandbox.json names,
# minus its exclude list. vitest matches an --exclude glob against each project's own root, so a
# path from the workspace root (packages/x/test/y.test.ts) excludes nothing: each excluded file is
# given by its absolute path. scripts/check-nix.sh lists what these arguments select.
bridgeworks_unit_test_args() {
  local projects excluded name path
  projects=$(bridgeworks_json "$bridgeworksNix/sandbox.json" unitTests.projects) || return 1
  excluded=$(bridgeworks_json "$bridgeworksNix/sandbox.json" unitTests.exclude) || return 1
  while IFS= read -r name; do
    if [[ -n $name ]]; then printf '%s\n' --project "$name"; fi
  done <<<"$projects"
  while IFS= read -r path; do
    if [[ -n $path ]]; then printf '%s\n' --exclude "$PWD/$path"; fi
  done <<<"$excluded"
}

# The unit tests nix/sandbox.json names: vitest projects that need no program but node.
# Arguments are passed on to vitest (the derivation passes none; a repo test passes file filters).
bridgeworks_unit_tests() {
  local list
  local -a args
  list=$(bridgeworks_unit_test_args) || return 1
  mapfile -t args <<<"$list"
  vitest run "${args[@]}" "$@"
}

# Linux: the prebuilt executables an app ships (apps.json nativeExecutables, e.g. the Agent SDK's
# claude) expect /lib64/ld-linux*. Only their interpreter is changed: they need nothing but libc,
# and rewriting their RPATH (autoPatchelf) corrupts Bun-compiled executables such as claude.
bridgeworks_set_interpreters() {
  local libDir=$1 interpreter=$2 name file
  while IFS= read -r name; do
    while IFS= read -r -d '' file; do
      if patchelf --print-interpreter "$file" >/dev/null 2>&1; then
        patchelf --set-interpreter "$interpreter" "$file"
      fi
    done < <(find "$libDir/node_modules" -type f -name "$name" -print0)
  done < <(bridgeworks_json "$bridgeworksNix/apps.json" "apps.$(basename "$libDir").nativeExecutables")
}
