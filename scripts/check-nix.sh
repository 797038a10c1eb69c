#!/usr/bin/env bash
# Offline checks of the Nix packaging, for .ci/run. Nothing is built here: the locked nixpkgs cannot
# be fetched here and Debian's Nix 2.8 is too old to evaluate it. The flake is evaluated against
# nix/ci/stub-nixpkgs, a stand-in with exactly the nixpkgs names nix/ci/NIXPKGS.md lists (read
# from the locked revision's sources); its modules and meta against the module system and the
# option declarations: the upstream ones where they are in the Nix store (nix/ci/upstream.json),
# and always a model of them (nix/ci/model) that a fresh machine has. GitHub's "Nix" workflow
# builds and tests with real Nix.
#
#   scripts/check-nix.sh [--root DIR] [--require-upstream]   all checks below (DIR: a copy of the repository)
#   scripts/check-nix.sh --tarballs-only [...]                only check 1 (no Nix needed)
#   scripts/check-nix.sh --modules-only [...]                 only checks 1, 6 and 7 (Nix and node, no workspace)
#   CHECK_NIX_STORE=DIR scripts/check-nix.sh ...              evaluate in a Nix store rooted at DIR
#
#  1. nix/npm-tarballs.json is what nix/npm-tarballs.mjs makes of pnpm-lock.yaml.
#  2. flake.nix, flake.lock and nix/ are git-tracked (a flake sees only tracked files).
#  3. Every .nix file parses.
#  4. `nix flake check --no-build` against the stand-in, every system: a nixpkgs name or argument
#     the list does not have (pnpm_12, fetchPnpmDeps, ...) fails here.
#  5. The flake's packages are nix/apps.json's apps (+ default) on every system, with mainProgram.
#  6. nix/ci/meta-check.nix: nixpkgs' check-meta platform rule (lib.meta.availableOn) on every
#     package and check of every system.
#  7. nix/ci/module-eval.nix: the NixOS and home-manager modules through the module system
#     against home-manager's and NixOS's option declarations; their systemd escaping; an
#     environmentFile that refuses store paths; KillMode=process (a restart keeps the running
#     turns) and ExecStop= with endTurnsOnStop.
#     6 and 7 run twice where nix/ci/upstream.json's sources are in the Nix store: with nixpkgs'
#     own lib.evalModules and home-manager's own declarations (NixOS's too when the locked
#     nixpkgs is there), then with the model (nix/ci/model/: each fact it encodes names the
#     upstream file and revision it was read from). Without the sources (a fresh machine,
#     CHECK_NIX_STORE=<empty dir>) only the model runs, and the output says so. They are fetched
#     only with --require-upstream or GITHUB_ACTIONS=true, where a missing one is a failure
#     (--require-upstream also fails without the locked nixpkgs in the store).
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
# CHECK_NIX_STORE=DIR: evaluate in a Nix store rooted at DIR (a chroot store: the store paths
# printed are still /nix/store/...); an empty DIR is a fresh machine's store, without the upstream
# sources (packages/repo-checks runs the checks so). Without a daemon only root may write /nix;
# anyone else evaluates into a store of their own.
if [[ -n ${CHECK_NIX_STORE:-} ]]; then
  mkdir -p "$CHECK_NIX_STORE"
  NIX_CONFIG+="store = local?root=$(cd "$CHECK_NIX_STORE" && pwd)"$'\n'
elif [[ $(id -u) != 0 && ! -w /nix/var/nix/db && ! -S /nix/var/nix/daemon-socket/socket ]]; then
  NIX_CONFIG+="store = local?root=${XDG_CACHE_HOME:-$HOME/.cache}/bridgeworks-nix"$'\n'
fi

# 6 and 7: meta and modules. Two paths (nix/ci/README.md "Two paths"): the upstream rules
# themselves where nix/ci/upstream.json's sources are in the Nix store (fetched there only where
# they must be: --require-upstream, GitHub), and always the model of those rules (nix/ci/model),
# which needs nothing but this repository: on a fresh machine it is what refuses a defect.
check_modules() {
  local name path locked modules
  declare -A upstream=()
  local fetch=()
  $require_sources && fetch=(--fetch)
  while read -r name path; do
    [[ $path == - ]] || upstream[$name]=$path
  done < <(bash nix/ci/upstream.sh paths "${fetch[@]}")
  if [[ -n ${upstream[nixpkgs-lib]:-} && -n ${upstream[home-manager]:-} ]]; then
    step "meta and modules: the upstream rules (nixpkgs.lib and home-manager from the Nix store, nix/ci/upstream.json), then their model (nix/ci/model)"
    nix-instantiate --eval --strict --json nix/ci/meta-check.nix --arg nixpkgsLib "${upstream[nixpkgs-lib]}" >/dev/null ||
      die "a package or check is not available on a system the flake builds (nixpkgs' check-meta platform rule, nixpkgs' own lib; see above)"
    step "meta.platforms: every package and check evaluates on every system (nixpkgs' check-meta rule, nixpkgs' own lib)"
    locked=null
    [[ -n ${upstream[nixpkgs]:-} ]] && locked=${upstream[nixpkgs]}
    modules=$(nix-instantiate --eval --strict --json nix/ci/module-eval.nix --arg nixpkgsLib "${upstream[nixpkgs-lib]}" \
      --arg homeManager "${upstream[home-manager]}" --arg nixpkgs "$locked") ||
      die "the NixOS or home-manager module fails nixpkgs' lib.evalModules or the checks after it (see above)"
    step "NixOS and home-manager modules: nixpkgs' lib.evalModules against home-manager's declarations, systemd escaping, environmentFile outside the store"
    if [[ $(node -p 'JSON.parse(process.argv[1]).nixosDeclarations' "$modules") == freeform ]]; then
      printf '%s\n' "check-nix: NixOS's own option declarations (systemd.services.<name>) come from the locked nixpkgs (flake.lock)," \
        "  which is not in the Nix store here (after \`nix flake check\` it is: GitHub's Nix workflow runs this script then);" \
        "  here the model's reading of them (nix/ci/model/nixos.nix) checks the NixOS module."
      if $require_locked; then die "--require-upstream: the locked nixpkgs is not in the store"; fi
    fi
  else
    printf '%s\n' "check-nix: meta and modules: the model of the upstream rules only (nix/ci/model). nixpkgs.lib and home-manager" \
      "  (nix/ci/upstream.json) are not in this Nix store, as on a fresh machine:" \
      "$(bash nix/ci/upstream.sh paths | sed 's/^/    /')" \
      "  The upstream rules themselves run in GitHub's Nix workflow (scripts/check-nix.sh --modules-only --require-upstream)."
    if $require_sources; then die "the upstream sources are missing (--require-upstream, or GITHUB_ACTIONS=true)"; fi
  fi
  nix-instantiate --eval --strict --json nix/ci/meta-check.nix --arg nixpkgsLib null >/dev/null ||
    die "a package or check is not available on a system the flake builds (the model of nixpkgs' check-meta platform rule, nix/ci/model/meta.nix; see above)"
  step "meta.platforms: every package and check evaluates on every system (the model of nixpkgs' check-meta rule)"
  nix-instantiate --eval --strict --json nix/ci/module-eval.nix --arg nixpkgsLib null --arg homeManager null >/dev/null ||
    die "the NixOS or home-manager module fails the model of the module system and of the upstream declarations (nix/ci/model; see above)"
  step "NixOS and home-manager modules: the model of lib.evalModules and of home-manager's and NixOS's declarations (nix/ci/model), systemd escaping, environmentFile outside the store"
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
