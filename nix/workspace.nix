# The three apps, built from one pnpm dependency fetch.
#
#   pnpmDeps      one fixed-output derivation: every package in pnpm-lock.yaml, fetched from the npm
#                 registry at the lockfile's integrity hashes. `fetchPnpmDeps` installs with `--force`,
#                 so it holds every platform's optional packages and its hash is the same on every
#                 system. The hash lives in ./pnpm-deps.json (see scripts/refresh-pnpm-deps-hash.sh).
#   <app>         offline `pnpm install` from that store (pnpmConfigHook), `pnpm --filter <app>... build`,
#                 the app's own `test` script in checkPhase, then only the app's bundle (plus the native
#                 packages it leaves external) installed under $out/lib/<app>, run by Node through a
#                 makeWrapper wrapper.
#
# The list of apps is ./apps.json; the nix workflow and packages/repo-checks read the same file.
{
  lib,
  stdenv,
  runtimeShell,
  nodejs_22,
  # The pnpm major that wrote pnpm-lock.yaml, pinned: the floating `pnpm` moves between majors.
  # A locked nixpkgs without pnpm_12 would need pnpm_10 here plus
  # `npm_config_manage_package_manager_versions = "false"`; pnpm 10 reads this lockfile (v9.0).
  pnpm_12,
  fetchPnpmDeps,
  pnpmConfigHook,
  makeWrapper,
  python3,
  node-gyp,
  autoPatchelfHook,
  cctools,
  xcbuild,
}:
let
  nodejs = nodejs_22;
  pnpm = pnpm_12;

  manifest = lib.importJSON ./apps.json;
  pnpmDepsPin = lib.importJSON ./pnpm-deps.json;

  # Whole directories and root files: an app or package added later needs no change here.
  # `apps` may be absent while the apps are being written; a missing app fails its build below.
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
      (lib.fileset.maybeMissing ../apps)
    ];
  };

  pnpmDeps = fetchPnpmDeps {
    # No version: the store path then depends only on this name and the hash, so a host whose
    # nixpkgs differs still substitutes it from the cache instead of reaching the npm registry.
    pname = "bridgeworks";
    inherit src pnpm;
    fetcherVersion = 4;
    inherit (pnpmDepsPin) hash;
  };

  appVersion =
    app:
    let
      packageJson = ../. + "/${app.dir}/package.json";
    in
    if builtins.pathExists packageJson then (lib.importJSON packageJson).version or "0.0.0" else "0.0.0";

  isLinux = stdenv.hostPlatform.isLinux;
  isDarwin = stdenv.hostPlatform.isDarwin;

  mkApp =
    name: app:
    stdenv.mkDerivation (finalAttrs: {
      pname = name;
      version = appVersion app;
      inherit src pnpmDeps;

      nativeBuildInputs = [
        nodejs
        pnpm
        pnpmConfigHook
        makeWrapper
        # better-sqlite3 compiles its addon with node-gyp against these Node headers.
        python3
        node-gyp
      ]
      # Prebuilt ELF files from npm (native addons, the claude binary the e2e tests run) expect an
      # FHS system; autoPatchelf points them at the store.
      ++ lib.optionals isLinux [ autoPatchelfHook ]
      ++ lib.optionals isDarwin [
        cctools
        xcbuild
      ];
      buildInputs = lib.optionals isLinux [ (lib.getLib stdenv.cc.cc) ];
      # Musl variants of optional packages may be installed beside the glibc ones; nothing loads them.
      autoPatchelfIgnoreMissingDeps = [ "libc.musl-*" ];

      env = {
        npm_config_nodedir = "${nodejs}";
        npm_config_build_from_source = "true";
        TURBO_TELEMETRY_DISABLED = "1";
        DO_NOT_TRACK = "1";
      };

      # Stripping corrupts Bun-compiled executables such as the claude binary the Agent SDK ships
      # (pi-provider installs it); the bundles have nothing else worth stripping.
      dontStrip = true;

      # The e2e tests bind loopback ports.
      __darwinAllowLocalNetworking = true;

      # pnpmConfigHook installs with --ignore-scripts; run exactly the install scripts the workspace
      # allows (pnpm-workspace.yaml allowBuilds, mirrored in apps.json and compared by repo-checks).
      preBuild = ''
        if [ ! -f ${lib.escapeShellArg "${app.dir}/package.json"} ]; then
          echo "bridgeworks: ${app.dir}/package.json is not in the source; is ${app.workspace} committed?" >&2
          exit 1
        fi
        pnpm rebuild --recursive ${lib.escapeShellArgs manifest.allowBuilds}
      ''
      + lib.optionalString isLinux ''
        autoPatchelf node_modules/.pnpm
      '';

      buildPhase = ''
        runHook preBuild
        pnpm --filter ${lib.escapeShellArg "${app.workspace}..."} run build
        if [ ! -f ${lib.escapeShellArg "${app.dir}/${app.entry}"} ]; then
          echo "bridgeworks: ${app.workspace}'s build script did not produce ${app.dir}/${app.entry}" >&2
          exit 1
        fi
        runHook postBuild
      '';

      doCheck = true;
      checkPhase = ''
        runHook preCheck
        pnpm --filter ${lib.escapeShellArg app.workspace} run test
        runHook postCheck
      '';

      installPhase = ''
        runHook preInstall
        node ${./install-app.mjs} install ${./apps.json} ${name} "$out/lib/${name}"
        mkdir -p "$out/bin"
      ''
      + (
        if app.kind == "cli" then
          ''
            makeWrapper ${lib.getExe nodejs} "$out/bin/${app.mainProgram}" \
              --add-flags "$out/lib/${name}/${app.entry}"
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

      # After fixup (patchelf, strip): every external still resolves and every native addon loads.
      doInstallCheck = true;
      installCheckPhase = ''
        runHook preInstallCheck
        node ${./install-app.mjs} verify ${./apps.json} ${name} "$out/lib/${name}"
        runHook postInstallCheck
      '';

      passthru = {
        inherit pnpmDeps;
      }
      // lib.optionalAttrs (app.kind == "pi-package") {
        # What Pi's settings.packages takes: a directory holding package.json with pi.extensions.
        packagePath = "${finalAttrs.finalPackage}/lib/${name}";
      };

      meta = {
        inherit (app) description mainProgram;
        homepage = "https://github.com/bridgeworks/bridgeworks";
        license = lib.licenses.mit;
        platforms = [
          "x86_64-linux"
          "aarch64-linux"
          "aarch64-darwin"
        ];
      };
    });
in
lib.mapAttrs mkApp manifest.apps
// {
  inherit pnpmDeps;
}
