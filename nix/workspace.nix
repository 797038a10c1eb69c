# The three apps and the sandbox unit tests, built from the npm tarballs pnpm-lock.yaml pins.
#
#   npm tarballs  one fetchurl per tarball, with the lockfile's own sha512 integrity hash, read from
#                 ./npm-tarballs.json (generated from pnpm-lock.yaml by ./npm-tarballs.mjs). Only
#                 this system's list is fetched: its native binaries, no other platform's. No hash
#                 of our own to keep up to date, and each tarball substitutes from the binary cache
#                 by its hash alone, whatever nixpkgs the consumer uses.
#   pnpm          the pnpm that wrote the lockfile (packageManagerDependencies), from the same list.
#   <app>         `pnpm install` from a registry on 127.0.0.1 serving those tarballs (./npm-registry.mjs),
#                 `pnpm --filter <app>... run build`, the bundle and its externals installed under
#                 $out/lib/<app> (./install-app.mjs), checked in the sandbox (./check-app.mjs).
#   unit-tests    the vitest projects ./sandbox.json names, in the sandbox (a flake check).
# The shell steps are ./build-steps.sh, which nix/ci/rehearse-sandbox.sh also runs outside Nix.
# Every nixpkgs name used here is listed, with where it was read, in nix/ci/NIXPKGS.md.
{
  lib,
  stdenv,
  fetchurl,
  nodejs_22,
  makeWrapper,
  autoPatchelfHook,
  patchelf,
  python3,
  cctools,
  xcbuild,
  runtimeShell,
}:
let
  nodejs = nodejs_22;
  inherit (stdenv.hostPlatform) system isLinux isDarwin;

  manifest = lib.importJSON ./apps.json;
  tarballs = lib.importJSON ./npm-tarballs.json;

  platform =
    tarballs.platforms.${system}
      or (throw "bridgeworks: ${system} is not a system this flake builds (nix/npm-tarballs.json platforms)");
  platformFlags = lib.concatStringsSep " " (
    [
      "--os=${platform.os}"
      "--cpu=${platform.cpu}"
    ]
    ++ lib.optionals (platform.libc != null) [ "--libc=${platform.libc}" ]
  );

  tarball =
    key:
    fetchurl {
      url = tarballs.registry + tarballs.tarballs.${key}.path;
      inherit (tarballs.tarballs.${key}) hash;
    };

  # registry path -> tarball, for ./npm-registry.mjs (passed as a file: it is too long for the
  # environment). The store paths in it make every tarball an input of the build.
  registryManifest = builtins.toJSON (
    lib.listToAttrs (
      map (key: {
        name = tarballs.tarballs.${key}.path;
        value = "${tarball key}";
      }) tarballs.systems.${system}
    )
  );

  pnpm = stdenv.mkDerivation {
    pname = "pnpm";
    inherit (tarballs.pnpm) version;
    # The wrapper package: package.json and the node-gyp pnpm runs for native addons.
    src = tarball tarballs.pnpm.wrapper;
    nativeBuildInputs = lib.optionals isLinux [ autoPatchelfHook ];
    # The Linux binary links libgcc_s beside glibc.
    buildInputs = lib.optionals isLinux [ (lib.getLib stdenv.cc.cc) ];
    dontConfigure = true;
    dontBuild = true;
    # A prebuilt release binary: stripping it gains nothing, and on darwin breaks its signature.
    dontStrip = true;
    installPhase = ''
      runHook preInstall
      mkdir -p "$out/lib/node_modules/pnpm" "$out/bin"
      cp -r . "$out/lib/node_modules/pnpm/"
      tar -xzf ${tarball tarballs.pnpm.exe.${system}} -C "$TMPDIR"
      install -m 0755 "$TMPDIR/package/pnpm" "$out/lib/node_modules/pnpm/pnpm"
      ln -s "$out/lib/node_modules/pnpm/pnpm" "$out/bin/pnpm"
      # The node-gyp shim pnpm puts on PATH for install scripts says `#!/usr/bin/env sh`, which
      # the Linux sandbox lacks: point it at this build's sh now (fixup only searches runtime inputs).
      patchShebangs --build "$out/lib/node_modules/pnpm/dist/node-gyp-bin"
      runHook postInstall
    '';
    doInstallCheck = true;
    installCheckPhase = ''
      runHook preInstallCheck
      [ "$("$out/bin/pnpm" --version)" = ${lib.escapeShellArg tarballs.pnpm.version} ]
      runHook postInstallCheck
    '';
    meta = {
      description = "pnpm ${tarballs.pnpm.version}, the version that wrote pnpm-lock.yaml";
      mainProgram = "pnpm";
    };
  };

  # Whole directories and root files: a package added later needs no change here. No scripts/:
  # nothing that runs in the sandbox may need it.
  src = lib.fileset.toSource {
    root = ../.;
    fileset = lib.fileset.unions [
      ../package.json
      ../pnpm-lock.yaml
      ../pnpm-workspace.yaml
      ../turbo.json
      ../tsconfig.base.json
      ../vitest.config.ts
      ../vitest.shared.ts
      ../packages
      ../apps
    ];
  };

  # The scripts the build runs, as one small store path (a change elsewhere in nix/ rebuilds nothing).
  buildScripts = lib.fileset.toSource {
    root = ./.;
    fileset = lib.fileset.unions [
      ./apps.json
      ./sandbox.json
      ./build-steps.sh
      ./npm-registry.mjs
      ./install-app.mjs
      ./check-app.mjs
    ];
  };

  # What the app builds and the unit-tests check share: the source, the installed workspace.
  workspaceBuild =
    extra:
    stdenv.mkDerivation (
      {
        inherit src;
        nativeBuildInputs = [
          nodejs
          pnpm
          makeWrapper
          # better-sqlite3's install script compiles its addon with pnpm's node-gyp.
          python3
        ]
        ++ lib.optionals isLinux [ patchelf ]
        ++ lib.optionals isDarwin [
          cctools
          xcbuild
        ];

        npmTarballsManifest = registryManifest;
        passAsFile = [ "npmTarballsManifest" ];

        env = {
          pnpmPlatformFlags = platformFlags;
          bridgeworksNix = "${buildScripts}";
          npm_config_nodedir = "${nodejs}";
          TURBO_TELEMETRY_DISABLED = "1";
          DO_NOT_TRACK = "1";
        };

        # ./npm-registry.mjs listens on 127.0.0.1 (the Linux sandbox has a loopback interface).
        __darwinAllowLocalNetworking = true;

        configurePhase = ''
          runHook preConfigure
          export HOME="$TMPDIR/home" npmTarballsManifest="$npmTarballsManifestPath"
          mkdir -p "$HOME"
          source "$bridgeworksNix/build-steps.sh"
          bridgeworks_install
          runHook postConfigure
        '';

        # The end-to-end suites (real claude, codex and pi, PostgreSQL, tmux, Chromium, Node 24)
        # are `npm test`'s; they never run here.
        doCheck = false;
      }
      // extra
    );

  mkApp =
    name: app:
    let
      version = (lib.importJSON (../. + "/${app.dir}/package.json")).version;
    in
    workspaceBuild {
      pname = name;
      inherit version;

      buildPhase = ''
        runHook preBuild
        bridgeworks_build_app ${lib.escapeShellArg name}
        runHook postBuild
      '';

      installPhase = ''
        runHook preInstall
        node "$bridgeworksNix/install-app.mjs" install "$bridgeworksNix/apps.json" ${name} "$out/lib/${name}"
        mkdir -p "$out/bin"
      ''
      + lib.optionalString isLinux ''
        bridgeworks_set_interpreters "$out/lib/${name}" "$(cat "$NIX_CC/nix-support/dynamic-linker")"
      ''
      + (
        if app.kind == "cli" then
          ''
            # `--` ends node's options: node reads a --env-file anywhere on its command line,
            # even among the program's own arguments, unless `--` comes first.
            makeWrapper ${lib.getExe nodejs} "$out/bin/${app.mainProgram}" \
              --add-flags "-- $out/lib/${name}/${app.entry}"
          ''
        else
          ''
            # A Pi package has no program of its own: this one prints the path to give Pi.
            printf '#!%s\necho %s\n' ${runtimeShell} "$out/lib/${name}" > "$out/bin/${app.mainProgram}"
            chmod +x "$out/bin/${app.mainProgram}"
          ''
      )
      + ''
        runHook postInstall
      '';

      # Stripping or rewriting the RPATH of the prebuilt executables (claude is Bun-compiled)
      # corrupts them; their interpreter is set in installPhase instead.
      dontStrip = true;
      dontPatchELF = true;

      # After fixup: every external resolves, every addon loads, the program answers, Pi loads it.
      doInstallCheck = true;
      installCheckPhase = ''
        runHook preInstallCheck
        node "$bridgeworksNix/install-app.mjs" verify "$bridgeworksNix/apps.json" ${name} "$out/lib/${name}"
        node "$bridgeworksNix/check-app.mjs" "$bridgeworksNix/apps.json" ${name} "$out" "$PWD"
        runHook postInstallCheck
      '';

      passthru = lib.optionalAttrs (app.kind == "pi-package") {
        # What Pi's settings.packages takes: a directory holding package.json with pi.extensions.
        packagePath = "${apps.${name}}/lib/${name}";
      };

      meta = {
        inherit (app) description mainProgram;
        homepage = "https://github.com/bridgeworks/bridgeworks";
        license = lib.licenses.mit;
        platforms = builtins.attrNames tarballs.systems;
      };
    };

  apps = lib.mapAttrs mkApp manifest.apps;

  unit-tests = workspaceBuild {
    pname = "bridgeworks-unit-tests";
    version = "0";
    buildPhase = ''
      runHook preBuild
      bridgeworks_unit_tests
      runHook postBuild
    '';
    installPhase = ''
      touch "$out"
    '';
    dontFixup = true;
  };
in
apps
// {
  inherit pnpm unit-tests;
}
