# STRUCTURE CHECK ONLY (see nix/ci/README.md). `nix flake check` on Nix 2.8 only checks that a
# module is a function; this evaluates the flake's outputs function against the stub nixpkgs, calls
# the NixOS and home-manager modules with a made-up config, and asserts on the services they
# declare. It runs no module system: mkIf/mkMerge are resolved by the few lines below.
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

  # Calls a module twice: once for its options, then with services.floot-daemon = defaults // settings.
  evalModule =
    {
      module,
      system,
      settings,
      extraConfig ? { },
    }:
    let
      pkgs = stub.legacyPackages.${system};
      call =
        config:
        module {
          inherit config lib pkgs;
        };
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

  hmConfig = {
    home = {
      homeDirectory = "/home/alice";
      profileDirectory = "/home/alice/.nix-profile";
    };
    xdg.stateHome = "/home/alice/.local/state";
  };

  nixos =
    let
      on = evalModule {
        module = flake.nixosModules.default;
        system = "x86_64-linux";
        settings.enable = true;
      };
      asUser = evalModule {
        module = flake.nixosModules.default;
        system = "x86_64-linux";
        settings = {
          enable = true;
          user = "alice";
          environmentFile = "/run/secrets/floot.env";
        };
      };
      off = evalModule {
        module = flake.nixosModules.default;
        system = "x86_64-linux";
        settings = { };
      };
      service = on.config.systemd.services.floot-daemon;
      exe = lib.getExe flake.packages.x86_64-linux.floot-daemon;
    in
    assert check (off.config == { }) "the NixOS module declares something while disabled";
    assert check (
      service.serviceConfig.ExecStart == "${lib.escapeShellArg exe} 'daemon'"
    ) "NixOS ExecStart is ${service.serviceConfig.ExecStart}";
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
    {
      ExecStart = service.serviceConfig.ExecStart;
      StateDirectory = service.serviceConfig.StateDirectory;
    };

  hm =
    system:
    let
      pkgs = stub.legacyPackages.${system};
      on = evalModule {
        module = flake.homeModules.default;
        inherit system;
        settings.enable = true;
        extraConfig = hmConfig;
      };
      off = evalModule {
        module = flake.homeModules.default;
        inherit system;
        settings = { };
        extraConfig = hmConfig;
      };
      exe = lib.getExe flake.packages.${system}.floot-daemon;
      systemd = on.config.systemd or { };
      launchd = on.config.launchd or { };
    in
    assert check (off.config == { }) "the home-manager module declares something while disabled (${system})";
    assert check (builtins.elem flake.packages.${system}.floot-daemon on.config.home.packages) "home.packages (${system})";
    if pkgs.stdenv.hostPlatform.isDarwin then
      assert check (systemd == { }) "home-manager declares a systemd unit on darwin";
      assert check (
        launchd.agents.floot-daemon.config.ProgramArguments == [
          exe
          "daemon"
        ]
      ) "launchd ProgramArguments (${system})";
      assert check (launchd.agents.floot-daemon.enable) "launchd agent not enabled";
      { launchd = launchd.agents.floot-daemon.config.ProgramArguments; }
    else
      assert check (launchd == { }) "home-manager declares a launchd agent on linux";
      assert check (
        systemd.user.services.floot-daemon.Service.ExecStart == "${lib.escapeShellArg exe} 'daemon'"
      ) "systemd user ExecStart (${system})";
      assert check (
        systemd.user.services.floot-daemon.Install.WantedBy == [ "default.target" ]
      ) "systemd user WantedBy (${system})";
      { systemd = systemd.user.services.floot-daemon.Service.ExecStart; };

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
    assert check (lib.hasSuffix "/lib/pi-provider" packagePath) "pi-provider packagePath is ${packagePath}";
    assert check (
      builtins.length example.imports == 1 && builtins.isFunction (builtins.head example.imports)
    ) "the Pi example does not import the home module";
    { inherit packagePath; };
in
{
  inherit nixos piExample;
  homeManager = lib.genAttrs [
    "x86_64-linux"
    "aarch64-linux"
    "aarch64-darwin"
  ] hm;
}
