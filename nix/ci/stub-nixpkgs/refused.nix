# Names nixpkgs has (or will have) that the Bridgeworks flake must not use, each with the reason
# the stand-in gives when a function asks for one (nix/ci/NIXPKGS.md, "Refused").
{
  pnpm_12 = "pnpm_12 is not in the locked nixpkgs (83199d0, 2026-08-28): nixpkgs PR #547612 added it in September 2026. The flake runs the pnpm that wrote pnpm-lock.yaml, from the lockfile (nix/workspace.nix).";
  pnpm = "the floating pnpm moves between majors; the flake runs the pnpm that wrote pnpm-lock.yaml, from the lockfile.";
  fetchPnpmDeps = "fetchPnpmDeps is not used: one aggregate hash to refresh by hand, every platform's binaries (--force), and with pnpm 12 fetcherVersion 4 runs jq over the JSONC tsconfig.json files pnpm 12 keeps in its store. The flake fetches each tarball by its lockfile integrity hash (nix/npm-tarballs.json).";
  pnpmConfigHook = "pnpmConfigHook belongs with fetchPnpmDeps, which is not used (see fetchPnpmDeps).";
}
