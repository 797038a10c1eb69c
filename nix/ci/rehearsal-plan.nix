# What nix/ci/rehearse-sandbox.sh runs: for each of one system's checks (the apps and unit-tests),
# the derivation's own phases, environment and source file set, read from the flake evaluated
# against the stand-in nixpkgs (so the rehearsal runs exactly what the derivation says, not a copy
# of it). The stand-in's fileset.toSource is replaced here by one that records the file set.
#   nix eval --json --file nix/ci/rehearsal-plan.nix --argstr repo <exported tree> --argstr system x86_64-linux
{ repo, system }:
let
  repoPath = /. + repo;
  stubLib = import ./stub-nixpkgs/lib.nix;
  lib = stubLib // {
    fileset = stubLib.fileset // {
      toSource =
        { root, fileset }:
        let
          checked = stubLib.fileset.toSource { inherit root fileset; };
          relative =
            p:
            if toString p == repo then "." else builtins.substring (builtins.stringLength repo + 1) (-1) (toString p);
        in
        # A marker the rehearsal recognises wherever the store path of the copy would be.
        builtins.seq checked (
          "rehearsal-fileset:"
          + builtins.toJSON {
            root = relative root;
            paths = map relative fileset.paths;
          }
        );
    };
  };
  pkgs = import ./stub-nixpkgs/pkgs.nix { inherit lib system; };
  nixpkgs = {
    inherit lib;
    legacyPackages.${system} = pkgs;
  };
  flake = (import (repoPath + "/flake.nix")).outputs {
    self = flake // {
      outPath = repo;
    };
    inherit nixpkgs;
  };

  phaseNames = [
    "configurePhase"
    "buildPhase"
    "checkPhase"
    "installPhase"
    "installCheckPhase"
  ];

  describe = drv: {
    inherit (drv) name;
    # File sets (`src`, and an env value naming one) are "rehearsal-fileset:" + JSON of their
    # root and paths, relative to the repository.
    src = drv.src or (throw "rehearsal-plan: ${drv.name} has no src");
    phases = lib.genAttrs phaseNames (phase: drv.${phase} or null);
    doCheck = drv.doCheck or false;
    doInstallCheck = drv.doInstallCheck or false;
    dontFixup = drv.dontFixup or false;
    env = builtins.mapAttrs (_: toString) (drv.env or { });
    passAsFile = drv.passAsFile or [ ];
    # The registry paths the loopback registry serves (the tarballs are the rehearsal's own copies).
    npmTarballsManifestKeys = builtins.attrNames (
      builtins.fromJSON (builtins.unsafeDiscardStringContext (drv.npmTarballsManifest or "{}"))
    );
    darwinAllowLocalNetworking = drv.__darwinAllowLocalNetworking or false;
  };
in
{
  derivations = builtins.mapAttrs (_: describe) flake.checks.${system};
  # The stand-in store paths the phases may name, and what the rehearsal puts there.
  storePaths = {
    ${builtins.unsafeDiscardStringContext "${pkgs.nodejs_22}"} = "nodejs";
    ${builtins.unsafeDiscardStringContext pkgs.runtimeShell} = "runtimeShell";
  };
}
