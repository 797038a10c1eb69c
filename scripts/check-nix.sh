#!/usr/bin/env bash
# Offline checks of the Nix packaging, for .ci/run. Nothing is built here: the locked nixpkgs cannot
# be fetched here and Debian's Nix 2.8 is too old to evaluate it. The flake is evaluated against
# nix/ci/stub-nixpkgs, a stand-in with exactly the nixpkgs names nix/ci/NIXPKGS.md lists (read
# from the locked revision's sources); its modules and meta against the real module system and
# option declarations (nix/ci/upstream.json). GitHub's "Nix" workflow builds and tests with real Nix.
#
#   scripts/check-nix.sh [--root DIR] [--require-upstream]   all checks below (DIR: a copy of the repository)
#   scripts/check-nix.sh --tarballs-only [...]                only check 1 (no Nix needed)
#   scripts/check-nix.sh --modules-only [...]                 only checks 1, 6 and 7 (Nix and node, no workspace)
#
#  1. nix/npm-tarballs.json is what nix/npm-tarballs.mjs makes of pnpm-lock.yaml.
#  2. flake.nix, flake.lock and nix/ are git-tracked (a flake sees only tracked files).
#  3. Every .nix file parses.
#  4. `nix flake check --no-build` against the stand-in, every system: a nixpkgs name or argument
#     the list does not have (pnpm_12, fetchPnpmDeps, ...) fails here.
#  5. The flake's packages are nix/apps.json's apps (+ default) on every system, with mainProgram.
#  6. nix/ci/meta-check.nix: nixpkgs' check-meta platform rule (lib.meta.availableOn) on every
#     package and check of every system.
#  7. nix/ci/module-eval.nix: the NixOS and home-manager modules through nixpkgs' lib.evalModules
#     against home-manager's own option declarations (and NixOS's, from the locked nixpkgs when it
#     is in the store); their systemd escaping; an environmentFile that refuses store paths.
#     6 and 7 need nix/ci/upstream.json's sources: in the store, or fetched from GitHub. Without
#     them they are reported NOT CHECKED (a failure with GITHUB_ACTIONS=true or --require-upstream;
#     --require-upstream also fails without the locked nixpkgs in the store).
#  8. nix/ci/build-shape.nix: no build runs a test suite in the sandbox (doCheck, `run test`).
#  9. The unit-tests check's vitest arguments (nix/build-steps.sh) select no file nix/sandbox.json
#     excludes, and every project it names (`vitest list`, the workspace's own vitest).
# 10. nix/ci/check-repo.mjs: the sandbox unit tests need nothing but node and their packages'
#     tsconfig references; the systems the flake, the workflow and the README name agree;
#     nixConfig names the workflow's Cachix cache and key.
# Installs Debian's nix-bin when nix is missing (needs root and apt-get).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
tarballs_only=false
modules_only=false
# On GitHub the upstream sources can be fetched, so a missing one is a failure there.
require_sources=${GITHUB_ACTIONS:-false}
require_locked=false
while (($#)); do
  case "$1" in
    --tarballs-only) tarballs_only=true ;;
    --require-upstream)
      require_sources=true
      require_locked=true
      ;;
    --modules-only) modules_only=true ;;
    --root)
      root="$(cd "$2" && pwd)"
      shift
      ;;
    *)
      echo "check-nix: unknown argument $1" >&2
      exit 2
      ;;
  esac
  shift
done

started=$(date +%s)
step() { printf 'check-nix: %s (%ss)\n' "$1" "$(($(date +%s) - started))"; }
die() {
  printf 'check-nix: %s\n' "$1" >&2
  shift
  (($# == 0)) || printf '  %s\n' "$@" >&2
  exit 1
}

cd "$root"
node nix/npm-tarballs.mjs --check --root "$root" || die "nix/npm-tarballs.json is stale (see above)"
step "nix/npm-tarballs.json describes pnpm-lock.yaml"
$tarballs_only && exit 0

export NIX_CONFIG=$'experimental-features = nix-command flakes\nbuild-users-group =\nsubstituters =\n'

if ! command -v nix-instantiate >/dev/null; then
  if [[ $(id -u) == 0 ]]; then
    as_root=()
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  else
    die "nix is not installed, and installing Debian's nix-bin needs root (apt-get install nix-bin)"
  fi
  command -v apt-get >/dev/null || die "nix is not installed (Debian/Ubuntu: apt-get install nix-bin)"
  step "installing Debian's nix-bin"
  "${as_root[@]}" apt-get update -qq >/dev/null
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nix-bin >/dev/null
fi
# Without a daemon only root may write /nix; anyone else evaluates into a store of their own
# (a chroot store: the store paths printed are still /nix/store/...).
if [[ $(id -u) != 0 && ! -w /nix/var/nix/db && ! -S /nix/var/nix/daemon-socket/socket ]]; then
  NIX_CONFIG+="store = local?root=${XDG_CACHE_HOME:-$HOME/.cache}/bridgeworks-nix"$'\n'
fi

# 6 and 7: meta and modules against nix/ci/upstream.json's sources.
check_modules() {
  local name path locked modules
  declare -A upstream=()
  while read -r name path; do
    [[ $path == - ]] || upstream[$name]=$path
  done < <(bash nix/ci/upstream.sh paths --fetch)
  if [[ -n ${upstream[nixpkgs-lib]:-} && -n ${upstream[home-manager]:-} ]]; then
    nix-instantiate --eval --strict --json nix/ci/meta-check.nix --arg nixpkgsLib "${upstream[nixpkgs-lib]}" >/dev/null ||
      die "a package or check is not available on a system the flake builds (nixpkgs' check-meta platform rule, see above)"
    step "meta.platforms: every package and check evaluates on every system (nixpkgs' check-meta rule)"
    locked=null
    [[ -n ${upstream[nixpkgs]:-} ]] && locked=${upstream[nixpkgs]}
    modules=$(nix-instantiate --eval --strict --json nix/ci/module-eval.nix --arg nixpkgsLib "${upstream[nixpkgs-lib]}" \
      --arg homeManager "${upstream[home-manager]}" --arg nixpkgs "$locked") ||
      die "the NixOS or home-manager module fails the module system (lib.evalModules) or its checks (see above)"
    step "NixOS and home-manager modules: lib.evalModules against home-manager's declarations, systemd escaping, environmentFile outside the store"
    if [[ $(node -p 'JSON.parse(process.argv[1]).nixosDeclarations' "$modules") == freeform ]]; then
      printf '%s\n' "check-nix: NOT CHECKED: NixOS's own option declarations (systemd.services.<name>: a misspelt or mistyped option)." \
        "  They come from the locked nixpkgs (flake.lock), which is not in the Nix store here; after \`nix flake check\` it is" \
        "  (GitHub's Nix workflow runs this script then). The NixOS module was evaluated with a freeform configuration." >&2
      if $require_locked; then die "--require-upstream: the locked nixpkgs is not in the store"; fi
    fi
  else
    printf '%s\n' "check-nix: NOT CHECKED: meta.platforms (nixpkgs' check-meta rule) and the NixOS and home-manager modules" \
      "  (lib.evalModules against home-manager's option declarations, systemd escaping, environmentFile)." \
      "  They need nix/ci/upstream.json's sources, which are not in the Nix store and could not be fetched:" \
      "$(bash nix/ci/upstream.sh paths | sed 's/^/    /')" \
      "  With network they are fetched by hash; offline, add a checkout: nix/ci/upstream.sh add NAME DIR." >&2
    if $require_sources; then die "the upstream sources are missing (--require-upstream, or GITHUB_ACTIONS=true)"; fi
  fi
}

if $modules_only; then
  check_modules
  exit 0
fi

untracked=$(git ls-files --others --exclude-standard -- flake.nix flake.lock nix)
[[ -z $untracked ]] || die "a flake sees only git-tracked files; these are not tracked:" "$untracked" \
  "track them first: git add (or git add -N, intent to add) those files"
[[ -n $(git ls-files -- flake.lock) ]] || die "flake.lock is not tracked"
step "flake files are tracked"

mapfile -d '' nix_files < <(git ls-files -z --cached --others --exclude-standard -- '*.nix')
# One nix-instantiate for all of them; its error names the file and line.
nix-instantiate --parse "${nix_files[@]}" >/dev/null || die "a .nix file does not parse (see above)"
step "every .nix file parses"

stand_in=(--offline --no-write-lock-file --override-input nixpkgs path:./nix/ci/stub-nixpkgs)
if ! output=$(nix flake check --no-build "${stand_in[@]}" 2>&1); then
  printf '%s\n' "$output" >&2
  die "nix flake check failed against the stand-in for the locked nixpkgs (see above; the names it has: nix/ci/NIXPKGS.md)"
fi
# Expected noise: the override of nixpkgs, a dirty tree, nixConfig (not trusted here), module outputs.
printf '%s\n' "$output" | grep -v -e "Git tree '.*' is dirty" -e "not writing modified lock file" -e "Updated input 'nixpkgs'" \
  -e "'github:NixOS/nixpkgs/" -e "→ 'path:./nix/ci/stub-nixpkgs" -e "^evaluating flake" \
  -e "ignoring untrusted flake configuration setting" \
  -e "unknown flake output 'homeModules'" -e "unknown flake output 'homeManagerModules'" >&2 || true
step "nix flake check --no-build (stand-in nixpkgs, all systems)"

eval_log=$(mktemp)
trap 'rm -f "$eval_log"' EXIT
summary=$(nix eval --json "${stand_in[@]}" .#packages --apply '
  builtins.mapAttrs (system: packages: builtins.mapAttrs (name: p: {
    inherit (p) drvPath name;
    mainProgram = p.meta.mainProgram or null;
    packagePath = p.passthru.packagePath or null;
  }) packages)' 2>"$eval_log") || die "nix eval of the packages failed:" "$(cat "$eval_log")"
node -e '
  const { apps } = JSON.parse(require("node:fs").readFileSync("nix/apps.json", "utf8"));
  const systems = Object.keys(JSON.parse(require("node:fs").readFileSync("nix/npm-tarballs.json", "utf8")).platforms).sort();
  const summary = JSON.parse(process.argv[1]);
  const expected = [...Object.keys(apps), "default"].sort();
  const problems = [];
  const seen = new Set();
  if (JSON.stringify(Object.keys(summary).sort()) !== JSON.stringify(systems)) {
    problems.push(`packages are defined for ${Object.keys(summary).join(", ")}, not ${systems.join(", ")}`);
  }
  for (const system of systems) {
    const packages = summary[system] ?? {};
    const names = Object.keys(packages).sort();
    if (JSON.stringify(names) !== JSON.stringify(expected)) {
      problems.push(`${system}: packages are ${names.join(", ")}; nix/apps.json says ${expected.join(", ")}`);
    }
    for (const [name, app] of Object.entries(apps)) {
      const p = packages[name];
      if (!p) continue;
      if (!/^\/nix\/store\/.+\.drv$/.test(p.drvPath)) problems.push(`${system}.${name}: no drvPath`);
      if (seen.has(p.drvPath)) problems.push(`${system}.${name}: drvPath shared with another system or app`);
      seen.add(p.drvPath);
      if (p.mainProgram !== app.mainProgram) problems.push(`${system}.${name}: mainProgram ${p.mainProgram}, apps.json says ${app.mainProgram}`);
      const wantsPath = app.kind === "pi-package";
      if (wantsPath && !String(p.packagePath).endsWith(`/lib/${name}`)) problems.push(`${system}.${name}: passthru.packagePath is ${p.packagePath}`);
      if (!wantsPath && p.packagePath !== null) problems.push(`${system}.${name}: unexpected passthru.packagePath`);
    }
  }
  if (problems.length) {
    console.error(problems.map((p) => `check-nix: ${p}`).join("\n"));
    process.exit(1);
  }
' "$summary" || die "the flake's packages do not match nix/apps.json"
step "packages of every system match nix/apps.json"

check_modules

nix eval --json --file nix/ci/build-shape.nix >/dev/null || die "nix/ci/build-shape.nix failed (see above)"
step "no build runs a test suite in the sandbox"

# What the unit-tests check runs: its own vitest arguments (nix/build-steps.sh), listed by the
# workspace's vitest. A file nix/sandbox.json excludes must not be among them.
[[ -x node_modules/.bin/vitest ]] ||
  die "the unit-test selection is listed by the workspace's vitest: install the workspace first (node scripts/bootstrap.mjs check)"
if ! selected=$(bridgeworksNix="$root/nix" bash -c 'set -euo pipefail; source nix/build-steps.sh; list=$(bridgeworks_unit_test_args)
  mapfile -t args <<<"$list"; node_modules/.bin/vitest list --filesOnly --json "${args[@]}"' 2>"$eval_log"); then
  die "vitest could not list the unit-tests check's files:" "$(cat "$eval_log")"
fi
node -e '
  const [root, json] = process.argv.slice(1);
  const { unitTests } = require(`${root}/nix/sandbox.json`);
  const files = JSON.parse(json);
  const problems = [];
  for (const excluded of unitTests.exclude) {
    if (files.some((f) => f.file === `${root}/${excluded}`))
      problems.push(`the unit-tests check runs ${excluded}, which nix/sandbox.json excludes (nix/build-steps.sh bridgeworks_unit_test_args: vitest matches --exclude against each project root)`);
  }
  for (const project of unitTests.projects) {
    if (!files.some((f) => f.projectName === project))
      problems.push(`the unit-tests check runs no file of vitest project ${project}, which nix/sandbox.json names`);
  }
  if (problems.length) {
    console.error(problems.map((p) => `check-nix: ${p}`).join("\n"));
    process.exit(1);
  }
' "$root" "$selected" || die "the unit-tests check's files are not what nix/sandbox.json says"
step "the unit-tests check runs nix/sandbox.json's projects, none of the files it excludes"

nix_config=$(nix eval --json --file flake.nix --apply 'flake: flake.nixConfig or null') ||
  die "cannot read flake.nix nixConfig"
node nix/ci/check-repo.mjs "$root" "$nix_config" || die "the Nix packaging's files disagree (see above)"
step "sandbox unit tests, tsconfig references, systems and binary cache agree across flake, workflow and README"
