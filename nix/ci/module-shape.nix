# STRUCTURE CHECK (see nix/ci/README.md). `nix flake check` on Nix 2.8 only checks that a module
# is a function; this calls the NIXOS and home-manager modules with a made-up config against the
# stand-in nixpkgs and asserts on the services they declare: systemd lines escaped as systemd
# reads them, and an environment file that can never be a store path. It runs no module system:
# mkIf/mkMerge are resolved by the few lines below, and an option's type check is called directly.
#   nix eval --json --file nix/ci/module-shape.nix
let
  stub = (import ./stub-nixpkgs/flake.nix).outputs { self = stub; };
  inherit (stub) lib;
  flake = (import ../../flake.nix).outputs {
    self = flake // {
      outPath = toString ../..;
    };
    nixpkgs = stub;
  };

  check = condition: message: if condition then true else throw "module-shape: ${message}";

  # Like the module system's merge for what these modules declare: attrsets merge, lists concatenate.
  merge =
    a: b:
    a
    // builtins.mapAttrs (
      name: value:
      if !(a ? ${name}) then
        value
      else if builtins.isAttrs value && builtins.isAttrs a.${name} then
        merge a.${name} value
      else if builtins.isList value && builtins.isList a.${name} then
        a.${name} ++ value
      else
        throw "module-shape: ${name} is defined twice"
    ) b;

  # mkIf / mkMerge records -> plain attrsets (enough for asserting on what the module declares).
  resolve =
    v:
    if builtins.isAttrs v && (v._type or null) == "if" then
      (if v.condition then resolve v.content else { })
    else if builtins.isAttrs v && (v._type or null) == "merge" then
      builtins.foldl' merge { } (map resolve v.contents)
    else if builtins.isAttrs v && (v.type or null) != "derivation" then
      builtins.mapAttrs (_: resolve) v
    else
      v;

  optionDefaults = options: builtins.mapAttrs (_: o: o.default) options;

  # nixpkgs passes NixOS modules `utils` (nixos/lib/utils.nix); the stand-in's has what is listed.
  utilsFor =
    pkgs: config:
    import (pkgs.path + "/nixos/lib/utils.nix") {
      inherit lib config pkgs;
    };

  # Calls a module twice: once for its options, then with services.floot-daemon = defaults // settings.
  evalModule =
    {
      module,
      system,
      settings,
      extraConfig ? { },
      withUtils ? false,
    }:
    let
      pkgs = stub.legacyPackages.${system};
      call =
        config:
        module (
          {
            inherit config lib pkgs;
          }
          // lib.optionalAttrs withUtils { utils = utilsFor pkgs config; }
        );
      options = (call { }).options.services.floot-daemon;
      typeErrors = builtins.filter (name: !(options.${name}.type.check options.${name}.default)) (
        builtins.attrNames options
      );
      cfg = optionDefaults options // settings;
      result = call ({ services.floot-daemon = cfg; } // extraConfig);
    in
    assert check (typeErrors == [ ]) "option defaults do not match their types: ${toString typeErrors}";
    {
      inherit options cfg;
      config = resolve result.config;
    };

  # Arguments and environment values systemd would otherwise expand (%h, $HOME), a quote, a space.
  hostile = {
    extraArgs = [
      "--label"
      "100% \"mine\" $HOME %h"
    ];
    environment.FLOOT_GREETING = "50% off for $USER";
  };

  hmConfig = {
    home = {
      homeDirectory = "/home/alice";
      profileDirectory = "/home/alice/.nix-profile";
    };
    xdg.stateHome = "/home/alice/.local/state";
  };

  nixos =
    let
      eval =
        settings:
        evalModule {
          module = flake.nixosModules.default;
          system = "x86_64-linux";
          inherit settings;
          withUtils = true;
        };
      on = eval { enable = true; };
      off = eval { };
      asUser = eval {
        enable = true;
        user = "alice";
        environmentFile = "/run/secrets/floot.env";
      };
      escaped = eval (hostile // { enable = true; });
      service = on.config.systemd.services.floot-daemon;
      exe = lib.getExe flake.packages.x86_64-linux.floot-daemon;
      envFileType = on.options.environmentFile.type;
    in
    assert check (off.config == { }) "the NixOS module declares something while disabled";
    assert check (
      service.serviceConfig.ExecStart == ''"${exe}" "daemon"''
    ) "NixOS ExecStart is ${service.serviceConfig.ExecStart}, not nixpkgs' escapeSystemdExecArgs of [ floot daemon ]";
    assert check (
      escaped.config.systemd.services.floot-daemon.serviceConfig.ExecStart
      == ''"${exe}" "daemon" "--label" "100%% \"mine\" $$HOME %%h"''
    ) "NixOS ExecStart leaves % or $ for systemd to expand: ${escaped.config.systemd.services.floot-daemon.serviceConfig.ExecStart}";
    assert check (
      escaped.config.systemd.services.floot-daemon.environment.FLOOT_GREETING == "50%% off for $USER"
    ) "NixOS Environment= leaves % for systemd to expand (NixOS writes the value as given)";
    assert check (service.serviceConfig.StateDirectory == "floot-daemon") "NixOS StateDirectory";
    assert check (service.serviceConfig.DynamicUser or false) "NixOS: no DynamicUser without `user`";
    assert check (service.wantedBy == [ "multi-user.target" ]) "NixOS wantedBy";
    assert check (
      asUser.config.systemd.services.floot-daemon.serviceConfig.User == "alice"
      && !(asUser.config.systemd.services.floot-daemon.serviceConfig ? DynamicUser)
    ) "NixOS: `user` does not replace DynamicUser";
    assert check (
      asUser.config.systemd.services.floot-daemon.serviceConfig.EnvironmentFile == "/run/secrets/floot.env"
    ) "NixOS EnvironmentFile";
    # The keys in an environment file must never reach the world-readable store.
    assert check (envFileType.check "/run/secrets/floot.env") "environmentFile refuses /run/secrets/floot.env";
    assert check (
      !envFileType.check ./module-shape.nix
    ) "environmentFile accepts a path literal (./floot.env), which is copied into the world-readable store";
    assert check (
      !envFileType.check "${builtins.storeDir}/0000000000000000000000000000000a-floot.env"
    ) "environmentFile accepts a store path, which is world-readable";
    assert check (!envFileType.check "floot.env") "environmentFile accepts a relative path";
    {
      ExecStart = escaped.config.systemd.services.floot-daemon.serviceConfig.ExecStart;
      environmentFile = envFileType.name;
    };

  hm =
    system:
    let
      pkgs = stub.legacyPackages.${system};
      eval =
        settings:
        evalModule {
          module = flake.homeModules.default;
          inherit system settings;
          extraConfig = hmConfig;
        };
      on = eval { enable = true; };
      off = eval { };
      escaped = eval (hostile // { enable = true; });
      exe = lib.getExe flake.packages.${system}.floot-daemon;
      systemd = on.config.systemd or { };
      launchd = on.config.launchd or { };
    in
    assert check (off.config == { }) "the home-manager module declares something while disabled (${system})";
    assert check (builtins.elem flake.packages.${system}.floot-daemon on.config.home.packages) "home.packages (${system})";
    if pkgs.stdenv.hostPlatform.isDarwin then
      assert check (systemd == { }) "home-manager declares a systemd unit on darwin";
      assert check (
        escaped.config.launchd.agents.floot-daemon.config.ProgramArguments == [
          exe
          "daemon"
          "--label"
          "100% \"mine\" $HOME %h"
        ]
      ) "launchd ProgramArguments must be the argument vector as is (${system})";
      assert check (launchd.agents.floot-daemon.enable) "launchd agent not enabled";
      { launchd = launchd.agents.floot-daemon.config.ProgramArguments; }
    else
      let
        service = escaped.config.systemd.user.services.floot-daemon.Service;
      in
      assert check (launchd == { }) "home-manager declares a launchd agent on linux";
      assert check (
        systemd.user.services.floot-daemon.Service.ExecStart == ''"${exe}" "daemon"''
      ) "systemd user ExecStart (${system}) is not nixpkgs' escapeSystemdExecArgs of [ floot daemon ]";
      assert check (
        service.ExecStart == ''"${exe}" "daemon" "--label" "100%% \"mine\" $$HOME %%h"''
      ) "systemd user ExecStart leaves % or $ for systemd to expand: ${service.ExecStart}";
      # home-manager writes Environment= entries verbatim: each must be one quoted assignment.
      assert check (builtins.elem ''"FLOOT_GREETING=50%% off for $USER"'' service.Environment) "systemd user Environment= is not one quoted assignment with % doubled: ${toString service.Environment}";
      assert check (builtins.elem ''"FLOOT_STATE_DIR=/home/alice/.local/state/floot"'' service.Environment) "systemd user Environment FLOOT_STATE_DIR";
      assert check (
        systemd.user.services.floot-daemon.Install.WantedBy == [ "default.target" ]
      ) "systemd user WantedBy (${system})";
      { systemd = service.ExecStart; };

  piExample =
    let
      system = "aarch64-darwin";
      pkgs = stub.legacyPackages.${system};
      example = import ../examples/home-manager-pi.nix {
        inherit pkgs lib;
        config = { };
        bridgeworks = flake;
      };
      packagePath = flake.packages.${system}.pi-provider.passthru.packagePath;
    in
    assert check (
      example.programs.pi-coding-agent.settings.packages == [ packagePath ]
    ) "the Pi example does not put pi-provider's packagePath in settings.packages";
    assert check (
      builtins.match ".*/lib/pi-provider" packagePath != null
    ) "pi-provider packagePath is ${packagePath}";
    assert check (
      builtins.length example.imports == 1 && builtins.isFunction (builtins.head example.imports)
    ) "the Pi example does not import the home module";
    { inherit packagePath; };
in
{
  inherit nixos piExample;
  homeManager = lib.genAttrs (builtins.attrNames flake.packages) hm;
}
