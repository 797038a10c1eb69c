# The NixOS and home-manager modules, evaluated by the real module system: nixpkgs' own
# lib.evalModules (the recorded nixpkgs lib, nix/ci/upstream.json) against the option declarations
# of the pinned sources, so a misspelt option, a value of the wrong type or an unknown enum value
# fails here with the module system's own message, as it would for a user.
#
#   home-manager  our module + the declarations (`options`, nothing else) of the home-manager files
#                 it sets options of (launchd, systemd, home-environment, xdg, nix,
#                 submodule-support) at the recorded revision, evaluated for every system.
#   NixOS         our module + the declarations of nixos/modules/system/boot/systemd.nix and
#                 nixos/lib/utils.nix of the locked nixpkgs (flake.lock) when it is in the Nix store
#                 (after `nix flake check`, or fetched). Without it, NixOS's own options are not
#                 declared: the rest of the configuration is freeform (lib.types.lazyAttrsOf lib.types.anything) and
#                 `nixosDeclarations` says "freeform" (scripts/check-nix.sh prints it).
# Then what systemd and launchd would run is checked: ExecStart= and Environment= escaped the way
# systemd reads them, environmentFile refusing store paths and path literals.
#   nix-instantiate --eval --strict --json nix/ci/module-eval.nix \
#     --arg nixpkgsLib <path> --arg homeManager <path> --arg nixpkgs '<path or null>'
{
  nixpkgsLib,
  homeManager,
  nixpkgs ? null,
}:
let
  lib = import (nixpkgsLib + "/lib");
  # home-manager's modules run with its extension of lib (lib.hm), as home-manager evaluates them.
  hmLib = import (homeManager + "/modules/lib/stdlib-extended.nix") lib;
  stub = (import ./stub-nixpkgs/flake.nix).outputs { self = stub; };
  flake = (import ../../flake.nix).outputs {
    self = flake // {
      outPath = toString ../..;
    };
    nixpkgs = stub;
  };

  check = condition: message: if condition then true else throw "module-eval: ${message}";

  # Our module under its file name, so the module system's messages name the file.
  ours = file: module: {
    _file = toString file;
    imports = [ module ];
  };

  # Only what a module declares: its `options`, called with the module arguments it asks for.
  declarationsOf =
    l: file:
    let
      module = import file;
    in
    l.setFunctionArgs (args: {
      _file = toString file;
      options = (module args).options;
    }) (l.functionArgs module);

  # Arguments and environment values systemd would otherwise expand (%h, $HOME), a quote, a space.
  hostile = {
    extraArgs = [
      "--label"
      "100% \"mine\" $HOME %h"
    ];
    environment.FLOOT_GREETING = "50% off for $USER";
  };

  hmDeclarations = map (path: declarationsOf hmLib (homeManager + "/modules/${path}")) [
    "launchd/default.nix"
    "systemd.nix"
    "home-environment.nix"
    "misc/xdg/default.nix"
    "misc/nix/default.nix"
    "misc/submodule-support.nix"
  ];

  hmEval =
    system: settings:
    let
      pkgs = stub.legacyPackages.${system};
      home = if pkgs.stdenv.hostPlatform.isDarwin then "/Users/alice" else "/home/alice";
    in
    (hmLib.evalModules {
      class = "homeManager";
      modules = [
        (ours ../hm-module.nix flake.homeModules.default)
      ]
      ++ hmDeclarations
      ++ [
        {
          _file = "a user's home-manager configuration (nix/ci/module-eval.nix)";
          _module.args.pkgs = pkgs;
          home.username = "alice";
          home.homeDirectory = home;
          xdg.stateHome = "${home}/.local/state";
          nix.useXdg = false;
          services.floot-daemon = settings;
        }
      ];
    }).config;

  homeManager' =
    system:
    let
      pkgs = stub.legacyPackages.${system};
      on = hmEval system { enable = true; };
      off = hmEval system { };
      escaped = hmEval system (hostile // { enable = true; });
      exe = lib.getExe flake.packages.${system}.floot-daemon;
      agents = escaped.launchd.agents;
      services = escaped.systemd.user.services;
    in
    assert check (
      off.launchd.agents == { } && off.systemd.user.services == { } && off.home.packages == [ ]
    ) "the home-manager module declares something while disabled (${system})";
    assert check (builtins.elem flake.packages.${system}.floot-daemon on.home.packages) "home.packages (${system})";
    if pkgs.stdenv.hostPlatform.isDarwin then
      # Every option the agent sets, forced: its type checked by home-manager's declaration.
      assert builtins.deepSeq agents.floot-daemon true;
      assert check (services == { }) "home-manager declares a systemd unit on darwin";
      assert check (
        agents.floot-daemon.config.ProgramArguments == [
          exe
          "daemon"
          "--label"
          "100% \"mine\" $HOME %h"
        ]
      ) "launchd ProgramArguments must be the argument vector as is (${system})";
      assert check agents.floot-daemon.enable "launchd agent not enabled";
      { launchd = agents.floot-daemon.config.ProgramArguments; }
    else
      let
        service = services.floot-daemon.Service;
      in
      assert builtins.deepSeq services.floot-daemon true;
      assert check (agents == { }) "home-manager declares a launchd agent on linux";
      assert check (
        on.systemd.user.services.floot-daemon.Service.ExecStart == [ ''"${exe}" "daemon"'' ]
      ) "systemd user ExecStart (${system}) is not nixpkgs' escapeSystemdExecArgs of [ floot daemon ]";
      assert check (
        service.ExecStart == [ ''"${exe}" "daemon" "--label" "100%% \"mine\" $$HOME %%h"'' ]
      ) "systemd user ExecStart leaves % or $ for systemd to expand: ${toString service.ExecStart}";
      # home-manager writes Environment= entries verbatim: each must be one quoted assignment.
      assert check (builtins.elem ''"FLOOT_GREETING=50%% off for $USER"'' service.Environment) "systemd user Environment= is not one quoted assignment with % doubled: ${toString service.Environment}";
      assert check (builtins.elem ''"FLOOT_STATE_DIR=/home/alice/.local/state/floot"'' service.Environment) "systemd user Environment FLOOT_STATE_DIR";
      assert check (
        services.floot-daemon.Install.WantedBy == [ "default.target" ]
      ) "systemd user WantedBy (${system})";
      { systemd = service.ExecStart; };

  nixosDeclarations =
    if nixpkgs == null then
      [
        {
          _file = "nix/ci/module-eval.nix (no NixOS declarations: the locked nixpkgs is not in the store)";
          freeformType = nixosLib.types.lazyAttrsOf nixosLib.types.anything;
        }
      ]
    else
      [ (declarationsOf nixosLib (nixpkgs + "/nixos/modules/system/boot/systemd.nix")) ];

  # With the locked nixpkgs: its own lib, pkgs and nixos/lib/utils.nix, as NixOS evaluates the
  # module. Without: the recorded lib, the stand-in's pkgs and utils (nix/ci/NIXPKGS.md).
  nixosLib = if nixpkgs == null then lib else import (nixpkgs + "/lib");
  nixosPkgs =
    if nixpkgs == null then
      stub.legacyPackages.x86_64-linux
    else
      import nixpkgs {
        system = "x86_64-linux";
        config = { };
        overlays = [ ];
      };

  nixosEval =
    settings:
    nixosLib.evalModules {
      class = "nixos";
      modules = [
        (ours ../nixos-module.nix flake.nixosModules.default)
      ]
      ++ nixosDeclarations
      ++ [
        (
          { config, ... }:
          {
            _file = "a NixOS configuration (nix/ci/module-eval.nix)";
            _module.args = {
              pkgs = nixosPkgs;
              # NixOS passes nixos/lib/utils.nix as the module argument `utils`.
              utils = import (nixosPkgs.path + "/nixos/lib/utils.nix") {
                inherit config;
                lib = nixosLib;
                pkgs = nixosPkgs;
              };
            };
            services.floot-daemon = settings;
          }
        )
      ];
    };

  nixos =
    let
      on = nixosEval { enable = true; };
      off = nixosEval { };
      asUser = nixosEval {
        enable = true;
        user = "alice";
        environmentFile = "/run/secrets/floot.env";
      };
      escaped = nixosEval (hostile // { enable = true; });
      service = on.config.systemd.services.floot-daemon;
      escapedService = escaped.config.systemd.services.floot-daemon;
      userService = asUser.config.systemd.services.floot-daemon;
      exe = lib.getExe flake.packages.x86_64-linux.floot-daemon;
      envFileType = on.options.services.floot-daemon.environmentFile.type;
      # What the module sets on the service. With NixOS's declarations each exists anyway (a
      # misspelt one is refused by the module system when the service is forced, below); freeform,
      # a misspelt name is all there is to see, so it is named here.
      sets = [
        "description"
        "wantedBy"
        "after"
        "path"
        "environment"
        "serviceConfig"
      ];
      unset = builtins.filter (name: !(escapedService ? ${name})) sets;
      unknown = builtins.filter (name: !(builtins.elem name sets)) (builtins.attrNames escapedService);
    in
    assert check (unset == [ ]) (
      "the NixOS service does not set ${builtins.concatStringsSep ", " unset}"
      + lib.optionalString (unknown != [ ]) " (it sets ${builtins.concatStringsSep ", " unknown}: misspelt?)"
      + "; NixOS's own declarations, which refuse any option they do not declare, are checked where the locked nixpkgs is in the store"
    );
    # The service forced (an option NixOS does not declare is refused here), then every value it
    # sets (each checked against its declared type); not the whole environment (PATH is NixOS's).
    assert builtins.deepSeq [
      escapedService.serviceConfig
      escapedService.wantedBy
      escapedService.after
      escapedService.description
      (map (name: escapedService.environment.${name}) [
        "FLOOT_STATE_DIR"
        "HOME"
        "FLOOT_GREETING"
      ])
    ] true;
    # Freeform (no NixOS declarations): a disabled module leaves `systemd` with no value at all.
    assert check (
      let
        services = builtins.tryEval (off.config.systemd.services or { });
      in
      !services.success || services.value == { }
    ) "the NixOS module declares a service while disabled";
    assert check (
      service.serviceConfig.ExecStart == ''"${exe}" "daemon"''
    ) "NixOS ExecStart is ${service.serviceConfig.ExecStart}, not nixpkgs' escapeSystemdExecArgs of [ floot daemon ]";
    assert check (
      escapedService.serviceConfig.ExecStart == ''"${exe}" "daemon" "--label" "100%% \"mine\" $$HOME %%h"''
    ) "NixOS ExecStart leaves % or $ for systemd to expand: ${escapedService.serviceConfig.ExecStart}";
    assert check (
      escapedService.environment.FLOOT_GREETING == "50%% off for $USER"
    ) "NixOS Environment= leaves % for systemd to expand (NixOS writes the value as given)";
    assert check (service.serviceConfig.StateDirectory == "floot-daemon") "NixOS StateDirectory";
    assert check (service.serviceConfig.DynamicUser or false) "NixOS: no DynamicUser without `user`";
    assert check (service.wantedBy == [ "multi-user.target" ]) "NixOS wantedBy";
    assert check (
      userService.serviceConfig.User == "alice" && !(userService.serviceConfig ? DynamicUser)
    ) "NixOS: `user` does not replace DynamicUser";
    assert check (
      userService.serviceConfig.EnvironmentFile == "/run/secrets/floot.env"
    ) "NixOS EnvironmentFile";
    # The keys in an environment file must never reach the world-readable store.
    assert check (envFileType.check "/run/secrets/floot.env") "environmentFile refuses /run/secrets/floot.env";
    assert check (
      !envFileType.check ./module-eval.nix
    ) "environmentFile accepts a path literal (./floot.env), which is copied into the world-readable store";
    assert check (
      !envFileType.check "${builtins.storeDir}/0000000000000000000000000000000a-floot.env"
    ) "environmentFile accepts a store path, which is world-readable";
    assert check (!envFileType.check "floot.env") "environmentFile accepts a relative path";
    {
      ExecStart = escapedService.serviceConfig.ExecStart;
      environmentFile = envFileType.description;
    };

  piExample =
    let
      system = "aarch64-darwin";
      example = import ../examples/home-manager-pi.nix {
        inherit lib;
        pkgs = stub.legacyPackages.${system};
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
  nixosDeclarations = if nixpkgs == null then "freeform" else "locked nixpkgs";
  homeManager = lib.genAttrs (builtins.attrNames flake.packages) homeManager';
}
