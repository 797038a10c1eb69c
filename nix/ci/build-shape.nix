# STRUCTURE CHECK (see nix/ci/README.md): what the flake's builds would run in the Nix sandbox,
# read from their derivations against the stand-in nixpkgs, for every system. The sandbox has no
# PostgreSQL, tmux, Chromium, Node 24, network or scripts/: no build may run a package's test
# script or a whole vitest suite. The one test run is the unit-tests check's `bridgeworks_unit_tests`
# (the projects nix/sandbox.json names; scripts/check-nix.sh checks that list).
#   nix eval --json --file nix/ci/build-shape.nix
let
  inherit (import ./stand-in-flake.nix) stub flake;
  inherit (stub) lib;

  phases = [
    "configurePhase"
    "buildPhase"
    "checkPhase"
    "installPhase"
    "installCheckPhase"
  ];

  # Lines that start a test suite: a package's test script, or vitest/turbo/npm test directly.
  suiteLine =
    line:
    builtins.match ".*(run[ \t]+test([ \t:]|$)|(pnpm|npm|yarn)[ \t]+(-[^ ]+[ \t]+)*test([ \t]|$)|vitest([ \t]+run)?([ \t]|$)|turbo[ \t].*test).*" line
    != null;

  lines = text: builtins.filter builtins.isString (builtins.split "\n" text);

  problems =
    system: name: drv:
    lib.optionals (drv.doCheck or false) [
      "${system}.${name}: doCheck is on, so its checkPhase runs in the sandbox (no PostgreSQL, tmux, Chromium, Node 24, network, scripts/)"
    ]
    ++ builtins.concatMap (
      phase:
      map (line: "${system}.${name}: ${phase} starts a test suite in the sandbox: ${line}") (
        builtins.filter suiteLine (lines (drv.${phase} or ""))
      )
    ) phases;

  outputs = system: flake.packages.${system} // flake.checks.${system};
  found = builtins.concatMap (
    system:
    let
      drvs = outputs system;
    in
    builtins.concatMap (name: problems system name drvs.${name}) (builtins.attrNames drvs)
  ) (builtins.attrNames flake.packages);
  unitTests = builtins.mapAttrs (_: checks: checks.unit-tests.buildPhase or null) flake.checks;
in
if found != [ ] then
  throw "build-shape:\n  ${builtins.concatStringsSep "\n  " found}"
else if builtins.any (phase: phase == null) (builtins.attrValues unitTests) then
  throw "build-shape: a system has no unit-tests check"
else
  {
    systems = builtins.attrNames flake.packages;
    inherit unitTests;
  }
