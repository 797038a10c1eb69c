# STRUCTURE CHECK ONLY (see nix/ci/README.md): the packages and builders the Bridgeworks flake
# names, for one system. Every derivation's builder exits 1: instantiating works, building never does.
{ lib, system }:
let
  isDerivation = v: builtins.isAttrs v && (v.type or null) == "derivation";

  neverBuilds =
    { name, env ? { } }:
    builtins.derivation (
      {
        inherit name system;
        builder = "/bin/sh";
        args = [
          "-c"
          "echo 'stub nixpkgs: structure check only, nothing here builds' >&2; exit 1"
        ];
      }
      // env
    );

  tool =
    name: extra:
    neverBuilds { name = "${name}-stub"; }
    // {
      pname = name;
      version = "0-stub";
      meta.mainProgram = name;
    }
    // extra;

  checkInputs =
    name: field: attrs:
    let
      value = attrs.${field} or [ ];
    in
    lib.assertMsg (builtins.isList value) "stdenv.mkDerivation ${name}: ${field} must be a list"
    && lib.assertMsg (builtins.all isDerivation value) "stdenv.mkDerivation ${name}: ${field} holds something that is not a package";

  # Phases and hooks end up in the derivation's environment, so every interpolation in them is
  # evaluated (an unknown attribute inside a build script fails here too).
  scriptAttrs = [
    "preBuild"
    "buildPhase"
    "checkPhase"
    "installPhase"
    "installCheckPhase"
    "postInstall"
    "shellHook"
  ];

  mkDerivation =
    fnOrAttrs:
    let
      attrs = if builtins.isFunction fnOrAttrs then fnOrAttrs (attrs // { finalPackage = result; }) else fnOrAttrs;
      name = attrs.name or "${attrs.pname}-${attrs.version}";
      scripts = builtins.intersectAttrs (lib.genAttrs scriptAttrs (_: null)) attrs;
      drv = neverBuilds {
        inherit name;
        env =
          scripts
          // (attrs.env or { })
          // {
            src = toString (attrs.src or "");
            pnpmDeps = attrs.pnpmDeps or "";
          };
      };
      result =
        assert checkInputs name "nativeBuildInputs" attrs;
        assert checkInputs name "buildInputs" attrs;
        attrs
        // (attrs.passthru or { })
        // drv
        // {
          meta = attrs.meta or { };
          passthru = attrs.passthru or { };
        };
    in
    result;

  pnpm =
    version:
    tool "pnpm" {
      inherit version;
      name = "pnpm-${version}";
    };

  hostPlatform = {
    inherit system;
    isLinux = lib.hasSuffix "-linux" system;
    isDarwin = lib.hasSuffix "-darwin" system;
  };

  bash = tool "bash" { };

  pkgs = {
    inherit lib;

    stdenv = {
      inherit hostPlatform mkDerivation;
      cc = tool "gcc-wrapper" { cc = tool "gcc" { lib = tool "gcc-lib" { }; }; };
    };

    callPackage =
      fn: overrides:
      let
        f = if builtins.isFunction fn then fn else import fn;
      in
      f (builtins.intersectAttrs (builtins.functionArgs f) pkgs // overrides);

    mkShell =
      {
        packages ? [ ],
        env ? { },
        shellHook ? "",
        ...
      }@args:
      assert checkInputs "mkShell" "packages" args;
      neverBuilds {
        name = args.name or "nix-shell";
        env = env // { inherit shellHook; };
      };

    # pnpm majors built by nixpkgs; the floating `pnpm` is deliberately absent: pin a major.
    pnpm_10 = pnpm "10.34.9";
    pnpm_12 = pnpm "12.4.2";

    fetchPnpmDeps =
      {
        pname,
        src,
        pnpm ? throw "fetchPnpmDeps ${pname}: pass pnpm explicitly (pnpm_12); the default pnpm moves between majors",
        hash ? "",
        fetcherVersion ? null,
        ...
      }:
      assert lib.assertMsg (fetcherVersion != null) "fetchPnpmDeps: `fetcherVersion` is not set";
      assert lib.assertMsg (builtins.elem fetcherVersion [
        1
        2
        3
        4
      ]) "fetchPnpmDeps: fetcherVersion ${toString fetcherVersion} is not a supported value (1, 2, 3, 4)";
      assert lib.assertMsg (
        lib.versionAtLeast pnpm.version "11" -> fetcherVersion >= 4
      ) "fetchPnpmDeps: `fetcherVersion = ${toString fetcherVersion}` is no longer supported for pnpm ${pnpm.version}; use 4";
      assert lib.assertMsg (
        builtins.match "sha256-[A-Za-z0-9+/]{43}=" hash != null
      ) "fetchPnpmDeps ${pname}: hash '${hash}' is not an SRI sha256 (sha256-<43 base64 characters>=)";
      builtins.derivation {
        name = "${pname}-pnpm-deps";
        inherit system;
        builder = "/bin/sh";
        args = [
          "-c"
          "exit 1"
        ];
        src = toString src;
        outputHashMode = "recursive";
        outputHash = hash;
      }
      // {
        inherit fetcherVersion;
      };

    pnpmConfigHook = tool "pnpm-config-hook" { };
    makeWrapper = tool "make-wrapper" { };
    autoPatchelfHook = tool "auto-patchelf-hook" { };
    runtimeShell = "${bash}/bin/bash";

    nodejs_22 = tool "nodejs" {
      version = "22.0.0-stub";
      meta.mainProgram = "node";
    };
    python3 = tool "python3" { };
    node-gyp = tool "node-gyp" { };
    cctools = tool "cctools" { };
    xcbuild = tool "xcbuild" { };
    git = tool "git" { };
    ripgrep = tool "ripgrep" { meta.mainProgram = "rg"; };
    procps = tool "procps" { meta.mainProgram = "ps"; };
  };
in
pkgs
