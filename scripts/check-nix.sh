#!/usr/bin/env bash
# Offline checks of the Nix packaging, for .ci/run. They check STRUCTURE ONLY: nothing is built
# here (nixpkgs cannot be fetched, and Debian's Nix 2.8 is too old for it). GitHub's "Nix"
# workflow (.github/workflows/nix.yml) builds and tests the apps with real Nix and nixpkgs.
#
#   scripts/check-nix.sh                                  all checks below
#   scripts/check-nix.sh --lockfile-only [--root DIR]     only check 1 (used by packages/repo-checks)
#
# 1. nix/pnpm-deps.json describes the current pnpm-lock.yaml (its sha256), and its hash is an SRI
#    sha256: a lockfile change must come with a refreshed dependency hash.
# 2. flake.nix, flake.lock and nix/ are git-tracked (a flake sees only tracked files).
# 3. Every .nix file parses (nix-instantiate --parse).
# 4. `nix flake check --no-build` against nix/ci/stub-nixpkgs, a stand-in that checks attribute
#    names, the files the filesets name and hash shapes (see nix/ci/README.md), for every system.
# 5. `nix eval` of every package: the names are exactly nix/apps.json's apps + pnpm-deps + default,
#    with a drvPath and the mainProgram apps.json names, on every system; pi-provider has packagePath.
# 6. nix/ci/module-shape.nix: the NixOS and home-manager modules declare the floot services.
# Installs Debian's nix-bin when nix is missing (needs root and apt-get).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
lockfile_only=false
while (($#)); do
  case "$1" in
    --lockfile-only) lockfile_only=true ;;
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

sha256_of() {
  if command -v sha256sum >/dev/null; then sha256sum "$1" | cut -d' ' -f1; else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

check_lockfile() {
  local lock="$root/pnpm-lock.yaml" pin="$root/nix/pnpm-deps.json"
  [[ -f $lock ]] || die "$lock is missing"
  [[ -f $pin ]] || die "$pin is missing"
  local fields lock_sha hash actual
  fields=$(node -e '
    const pin = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8"));
    console.log(`${pin.lockSha256 ?? ""} ${pin.hash ?? ""}`);
  ' "$pin") || die "$pin is not valid JSON"
  read -r lock_sha hash <<<"$fields"
  [[ $lock_sha =~ ^[0-9a-f]{64}$ ]] || die "nix/pnpm-deps.json: lockSha256 must be the sha256 of pnpm-lock.yaml (64 hex digits), got '$lock_sha'"
  [[ $hash =~ ^sha256-[A-Za-z0-9+/]{43}=$ ]] || die "nix/pnpm-deps.json: hash must be an SRI sha256 (sha256-<43 base64 characters>=), got '$hash'"
  actual=$(sha256_of "$lock")
  if [[ $actual != "$lock_sha" ]]; then
    die "pnpm-lock.yaml changed, but nix/pnpm-deps.json still describes the old lockfile:" \
      "sha256 of pnpm-lock.yaml:       $actual" \
      "nix/pnpm-deps.json lockSha256:  $lock_sha" \
      "Its hash is the Nix dependency store's (fetchPnpmDeps) and must be refreshed with the lockfile:" \
      "  scripts/refresh-pnpm-deps-hash.sh            on a machine with Nix: builds the store, records the new hash" \
      "  scripts/refresh-pnpm-deps-hash.sh --pending  without Nix: records the new digest with the placeholder hash;" \
      "                                               then run GitHub's \"Nix\" workflow with refresh-pnpm-deps-hash"
  fi
  if [[ $hash == "sha256-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=" ]]; then
    echo "check-nix: note: nix/pnpm-deps.json hash is the placeholder (lib.fakeHash): Nix builds of the apps fail" \
      "with a hash mismatch until GitHub's \"Nix\" workflow (refresh-pnpm-deps-hash) or" \
      "scripts/refresh-pnpm-deps-hash.sh on a machine with Nix records the real one." >&2
  fi
  step "pnpm-lock.yaml matches nix/pnpm-deps.json"
}

check_lockfile
$lockfile_only && exit 0

cd "$root"
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
if [[ $(id -u) != 0 && ! -w /nix/var/nix/db ]]; then
  NIX_CONFIG+="store = local?root=${XDG_CACHE_HOME:-$HOME/.cache}/bridgeworks-nix"$'\n'
fi

untracked=$(git ls-files --others --exclude-standard -- flake.nix flake.lock nix)
[[ -z $untracked ]] || die "a flake sees only git-tracked files; these are not tracked:" "$untracked" \
  "track them first: git add (or git add -N, intent to add) those files"
[[ -n $(git ls-files -- flake.lock) ]] || die "flake.lock is not tracked"
step "flake files are tracked"

parse_failures=0
while IFS= read -r -d '' file; do
  if ! nix-instantiate --parse "$file" >/dev/null; then
    echo "check-nix: $file does not parse" >&2
    parse_failures=$((parse_failures + 1))
  fi
done < <(git ls-files -z --cached --others --exclude-standard -- '*.nix')
((parse_failures == 0)) || die "$parse_failures .nix file(s) do not parse"
step "every .nix file parses"

stub=(--offline --no-write-lock-file --override-input nixpkgs path:./nix/ci/stub-nixpkgs)
if ! output=$(nix flake check --no-build "${stub[@]}" 2>&1); then
  printf '%s\n' "$output" >&2
  die "nix flake check failed (against the stub nixpkgs; see above)"
fi
# Expected noise: the override of nixpkgs, a dirty tree, home-manager's output names.
printf '%s\n' "$output" | grep -v -e "Git tree '.*' is dirty" -e "not writing modified lock file" -e "Updated input 'nixpkgs'" \
  -e "'github:NixOS/nixpkgs/" -e "→ 'path:./nix/ci/stub-nixpkgs" -e "^evaluating flake" \
  -e "unknown flake output 'homeModules'" -e "unknown flake output 'homeManagerModules'" >&2 || true
step "nix flake check --no-build (stub nixpkgs, all systems)"

summary=$(nix eval --json "${stub[@]}" .#packages --apply '
  builtins.mapAttrs (system: packages: builtins.mapAttrs (name: p: {
    inherit (p) drvPath name;
    mainProgram = p.meta.mainProgram or null;
    packagePath = p.passthru.packagePath or null;
  }) packages)' 2>/dev/null) || {
  nix eval --json "${stub[@]}" .#packages --apply 'ps: builtins.mapAttrs (s: p: builtins.mapAttrs (n: d: d.drvPath) p) ps' >/dev/null
  die "nix eval of the packages failed"
}
node -e '
  const { apps } = JSON.parse(require("node:fs").readFileSync("nix/apps.json", "utf8"));
  const summary = JSON.parse(process.argv[1]);
  const systems = ["x86_64-linux", "aarch64-linux", "aarch64-darwin"];
  const expected = [...Object.keys(apps), "default", "pnpm-deps"].sort();
  const problems = [];
  const seen = new Set();
  if (JSON.stringify(Object.keys(summary).sort()) !== JSON.stringify([...systems].sort())) {
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
    if (packages["pnpm-deps"]?.name !== "bridgeworks-pnpm-deps") problems.push(`${system}: pnpm-deps is named ${packages["pnpm-deps"]?.name}`);
  }
  if (problems.length) {
    console.error(problems.map((p) => `check-nix: ${p}`).join("\n"));
    process.exit(1);
  }
' "$summary" || die "the flake's packages do not match nix/apps.json"
step "packages of every system match nix/apps.json"

nix eval --json --file nix/ci/module-shape.nix >/dev/null || die "nix/ci/module-shape.nix failed (see above)"
step "NixOS and home-manager modules declare the floot services"
