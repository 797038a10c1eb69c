# STAND-IN, NOT NIXPKGS (see nix/ci/README.md): for one system, exactly the packages and
# builders nix/ci/NIXPKGS.md lists, with the arguments read there. Every derivation's builder
# exits 1: instantiating works, building never does. A name the list does not have is missing
# (so `callPackage` refuses a function asking for it), and a builder refuses arguments the list
# does not name.
{ lib, system }:
let
  inherit (builtins)
    all
    attrNames
    concatStringsSep
    elem
    filter
    functionArgs
    intersectAttrs
    isAttrs
    isBool
    isFunction
    isInt
    isList
    isString
    ;

  assertMsg = condition: message: condition || throw message;
  isDerivation = v: isAttrs v && (v.type or null) == "derivation";
  listed = "nix/ci/NIXPKGS.md";

  # Names nixpkgs has (or will have) that this flake must not use, with the reason.
  refused = import ./refused.nix;

  # Names of the arguments a function asks for that neither the caller nor the list supplies.
  unmet =
    f: supplied:
    let
      formals = functionArgs f;
    in
    filter (name: !formals.${name} && !(supplied ? ${name})) (attrNames formals);

  neverBuilds =
    { name, env ? { } }:
    builtins.derivation (
      {
        inherit name system;
        builder = "/bin/sh";
        args = [
          "-c"
          "echo 'stand-in nixpkgs: structure check only, nothing here builds' >&2; exit 1"
        ];
      }
      // env
    );

  tool =
    pname: extra:
    neverBuilds { name = "${pname}-stand-in"; }
    // {
      inherit pname;
      version = "0-stand-in";
      meta.mainProgram = pname;
    }
    // extra;

  checkInputs =
    name: field: attrs:
    let
      value = attrs.${field} or [ ];
    in
    assertMsg (isList value) "${name}: ${field} must be a list"
    && assertMsg (all isDerivation value) "${name}: ${field} holds something that is not a package";

  # The stdenv.mkDerivation arguments this flake uses (pkgs/stdenv/generic/make-derivation.nix
  # and setup.sh); any other name is refused, as are the attributes passAsFile names.
  mkDerivationArgs = import ./mk-derivation-args.nix;
  # Their values end up in the build's environment, so every interpolation in them is evaluated.
  scriptArgs = [
    "configurePhase"
    "buildPhase"
    "installPhase"
    "checkPhase"
    "installCheckPhase"
  ];

  mkDerivation =
    fnOrAttrs:
    let
      attrs = if isFunction fnOrAttrs then fnOrAttrs (attrs // { finalPackage = result; }) else fnOrAttrs;
      name = attrs.name or "${attrs.pname}-${attrs.version}";
      passed = attrs.passAsFile or [ ];
      unknown = filter (n: !(elem n mkDerivationArgs) && !(elem n passed)) (attrNames attrs);
      env = attrs.env or { };
      overlapping = attrNames (intersectAttrs env attrs);
      badEnv = filter (
        n: !(isString env.${n} || isBool env.${n} || isInt env.${n} || isDerivation env.${n})
      ) (attrNames env);
      scripts = intersectAttrs (lib.genAttrs scriptArgs (_: null)) attrs;
      drv = neverBuilds {
        inherit name;
        env =
          scripts
          // intersectAttrs (lib.genAttrs passed (_: null)) attrs
          // env
          // {
            src = toString (attrs.src or "");
          };
      };
      result =
        assert assertMsg (
          unknown == [ ]
        ) "stdenv.mkDerivation ${name}: ${concatStringsSep ", " unknown} not among the arguments ${listed} lists";
        assert assertMsg (
          overlapping == [ ]
        ) "stdenv.mkDerivation ${name}: env cannot contain arguments passed to the derivation (${concatStringsSep ", " overlapping})";
        assert assertMsg (
          badEnv == [ ]
        ) "stdenv.mkDerivation ${name}: env can only hold derivations, strings, booleans or integers (${concatStringsSep ", " badEnv})";
        assert assertMsg (all isString passed) "stdenv.mkDerivation ${name}: passAsFile names attributes";
        assert checkInputs name "nativeBuildInputs" attrs;
        assert checkInputs name "buildInputs" attrs;
        attrs
        // (attrs.passthru or { })
        // drv
        // {
          meta = attrs.meta or { };
          passthru = attrs.passthru or { };
          doCheck = attrs.doCheck or false;
          doInstallCheck = attrs.doInstallCheck or false;
        };
    in
    result;

  hostPlatform = {
    inherit system;
    isLinux = builtins.match ".*-linux" system != null;
    isDarwin = builtins.match ".*-darwin" system != null;
  };

  bash = tool "bash" { };

  pkgs = {
    inherit lib;

    # nixpkgs' own source, for files read from it (nixos/lib/utils.nix, by the home-manager module).
    path = ./.;

    stdenv = {
      inherit hostPlatform mkDerivation;
      cc = tool "gcc-wrapper" { cc = tool "gcc" { lib = tool "gcc-lib" { }; }; };
    };

    callPackage =
      fn: overrides:
      let
        f = if isFunction fn then fn else import fn;
        missing = unmet f (pkgs // overrides);
        reasons = map (n: refused.${n} or "not in ${listed}") missing;
      in
      if missing != [ ] then
        throw "callPackage ${toString fn}: asks for ${concatStringsSep ", " missing}: ${concatStringsSep " / " reasons}"
      else
        f (intersectAttrs (functionArgs f) pkgs // overrides);

    # pkgs/build-support/fetchurl: url and an SRI hash (here: exactly those).
    fetchurl =
      { url, hash }:
      assert assertMsg (isString url && builtins.match "https://.+" url != null) "fetchurl: url ${toString url} is not https";
      assert assertMsg (
        builtins.match "(sha256-[A-Za-z0-9+/]{43}=|sha512-[A-Za-z0-9+/]{86}==)" hash != null
      ) "fetchurl ${url}: hash ${hash} is not an SRI sha256 or sha512";
      builtins.derivation {
        name = baseNameOf url;
        inherit system url;
        builder = "builtin:fetchurl";
        outputHashMode = "flat";
        outputHash = hash;
      };

    # pkgs/build-support/mkshell: the arguments used here.
    mkShell =
      {
        packages ? [ ],
        env ? { },
        shellHook ? "",
      }@args:
      assert checkInputs "mkShell" "packages" args;
      neverBuilds {
        name = "nix-shell";
        env = env // {
          inherit shellHook;
        };
      };

    makeWrapper = tool "make-shell-wrapper-hook" { };
    autoPatchelfHook = tool "auto-patchelf-hook" { };
    patchelf = tool "patchelf" { };
    runtimeShell = "${bash}/bin/bash";

    nodejs_22 = tool "nodejs" {
      version = "22-stand-in";
      meta.mainProgram = "node";
    };
    python3 = tool "python3" { };
    cctools = tool "cctools" { };
    xcbuild = tool "xcbuild" { };
    git = tool "git" { };
    ripgrep = tool "ripgrep" { meta.mainProgram = "rg"; };
    procps = tool "procps" { meta.mainProgram = "ps"; };
  };
in
pkgs
