# The NixOS and home-manager modules through the module system, so a misspelt option, a value of
# the wrong type or an unknown enum value fails here with the module system's own message, as it
# would for a user. Two paths (nix/ci/README.md "Two paths"; scripts/check-nix.sh says which ran):
#
#   upstream (nixpkgsLib and homeManager: store paths of nix/ci/upstream.json's sources)
#     home-manager  our module + the declarations (`options`, nothing else) of the home-manager
#                   files it sets options of (launchd, systemd, home-environment, xdg, nix,
#                   submodule-support), through nixpkgs' own lib.evalModules, for every system.
#     NixOS         our module + the declarations of nixos/modules/system/boot/systemd.nix and
#                   nixos/lib/utils.nix of the locked nixpkgs (flake.lock) when it is in the Nix
#                   store too (after `nix flake check`). Without it the rest of the configuration
#                   is freeform (`nixosDeclarations` says so) and the model checks NixOS's part.
#   model (both null: a fresh machine, whose store has none of them)
#     nix/ci/model/modules.nix, a reading of lib.evalModules, with nix/ci/model/home-manager.nix
#     and nix/ci/model/nixos.nix, readings of the declarations, each option naming the upstream
#     file and revision it was read from.
# Then what systemd and launchd would run is checked: ExecStart= and Environment= escaped the way
# systemd reads them, environmentFile refusing store paths and path literals, KillMode=process (a
# restart keeps the running turns, issue 31) and ExecStop= with endTurnsOnStop.
#   nix-instantiate --eval --strict --json nix/ci/module-eval.nix \
#     --arg nixpkgsLib '<path or null>' --arg homeManager '<path or null>' --arg nixpkgs '<path or null>'
{
  nixpkgsLib,
  homeManager,
  nixpkgs ? null,
}:
assert (nixpkgsLib == null) == (homeManager == null);
let
  inherit (import ./stand-in-flake.nix) stub flake;
  # Helpers only (getExe, genAttrs, optionalString): the stand-in's lib in both paths.
  inherit (stub) lib;
  upstream = nixpkgsLib != null;

  check = condition: message: if condition then true else throw "module-eval: ${message}";

  # Our module under its file name, so the module system's messages name the file.
  ours = file: module: {
    _file = toString file;
    imports = [ module ];
  };

  # The model: its module system, with the stand-in's types and the declarations as read; the
  # modules get the model's lib (nix/ci/model/lib.nix), as NixOS gives them nixpkgs' lib.
  modelTypes = import ./stub-nixpkgs/types.nix;
  modelLib = import ./model/lib.nix;
  model = import ./model/modules.nix { types = modelTypes; };
  modelHomeManager = import ./model/home-manager.nix { types = modelTypes; };
  modelNixos = import ./model/nixos.nix { types = modelTypes; };

  # Upstream: nixpkgs' lib, and home-manager's modules run with its extension of it (lib.hm), as
  # home-manager evaluates them.
  upstreamLib = import (nixpkgsLib + "/lib");
  hmLib = import (homeManager + "/modules/lib/stdlib-extended.nix") upstreamLib;

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

  # endTurnsOnStop with a state dir among the extra arguments, which ExecStop= must name too.
  endingTurns = {
    enable = true;
    endTurnsOnStop = true;
    extraArgs = [
      "--port"
      "0"
      "--state"
      "/srv/100% floot"
    ];
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
      modules = [
        (ours ../hm-module.nix flake.homeModules.default)
        {
          _file = "a user's home-manager configuration (nix/ci/module-eval.nix)";
          home.username = "alice";
          home.homeDirectory = home;
          xdg.stateHome = "${home}/.local/state";
          nix.useXdg = false;
          services.floot-daemon = settings;
        }
      ];
    in
    (
      if upstream then
        hmLib.evalModules {
          class = "homeManager";
          modules = modules ++ hmDeclarations ++ [ { _module.args.pkgs = pkgs; } ];
        }
      else
        model.evalModules {
          modules = modules ++ [ modelHomeManager ];
          specialArgs = {
            inherit pkgs;
            lib = modelLib;
          };
        }
    ).config;

  homeManager' =
    system:
    let
      pkgs = stub.legacyPackages.${system};
      on = hmEval system { enable = true; };
      off = hmEval system { };
      escaped = hmEval system (hostile // { enable = true; });
      ending = hmEval system endingTurns;
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
      # Issue 31: a stop or restart signals the daemon alone; its keeper's CLIs run on.
      assert check (
        (service.KillMode or null) == "process"
      ) "systemd user KillMode is ${toString (service.KillMode or "unset (control-group)")}, not process: a stop or restart would kill every running turn with the daemon";
      assert check (!(service ? ExecStop)) "systemd user ExecStop= without endTurnsOnStop";
      assert builtins.deepSeq ending.systemd.user.services.floot-daemon true;
      assert check (
        ending.systemd.user.services.floot-daemon.Service.KillMode == "process"
      ) "systemd user KillMode with endTurnsOnStop";
      assert check (
        (ending.systemd.user.services.floot-daemon.Service.ExecStop or null)
        == ''"${exe}" "daemon" "stop" "--cancel-turns" "--state" "/srv/100%% floot"''
      ) "systemd user ExecStop= with endTurnsOnStop is ${toString (ending.systemd.user.services.floot-daemon.Service.ExecStop or "unset")}, not floot daemon stop --cancel-turns on ExecStart's state dir, escaped as ExecStart";
      { systemd = service.ExecStart; };

  # Upstream: with the locked nixpkgs, its own lib, pkgs, nixos/lib/utils.nix and systemd
  # declarations, as NixOS evaluates the module; without it, the recorded lib with the stand-in's
  # pkgs and utils, and the rest of the configuration freeform.
  nixosLib = if nixpkgs == null then upstreamLib else import (nixpkgs + "/lib");
  nixosPkgs =
    if nixpkgs == null then
      stub.legacyPackages.x86_64-linux
    else
      import nixpkgs {
        system = "x86_64-linux";
        config = { };
        overlays = [ ];
      };
  nixosDeclarations =
    if nixpkgs == null then
      {
        _file = "nix/ci/module-eval.nix (no NixOS declarations: the locked nixpkgs is not in the store)";
        freeformType = nixosLib.types.lazyAttrsOf nixosLib.types.anything;
      }
    else
      declarationsOf nixosLib (nixpkgs + "/nixos/modules/system/boot/systemd.nix");

  nixosEval =
    settings:
    let
      modules = [
        (ours ../nixos-module.nix flake.nixosModules.default)
        {
          _file = "a NixOS configuration (nix/ci/module-eval.nix)";
          services.floot-daemon = settings;
        }
      ];
      # NixOS passes nixos/lib/utils.nix as the module argument `utils`.
      utilsFor =
        pkgs: lib: config:
        import (pkgs.path + "/nixos/lib/utils.nix") { inherit config lib pkgs; };
    in
    if upstream then
      nixosLib.evalModules {
        class = "nixos";
        modules = modules ++ [
          nixosDeclarations
          (
            { config, ... }:
            {
              _module.args = {
                pkgs = nixosPkgs;
                utils = utilsFor nixosPkgs nixosLib config;
              };
            }
          )
        ];
      }
    else
      model.evalModules {
        modules = modules ++ [ modelNixos ];
        specialArgs = {
          pkgs = stub.legacyPackages.x86_64-linux;
          lib = modelLib;
          # The stand-in's utils.nix reads nothing of config.
          utils = utilsFor stub.legacyPackages.x86_64-linux modelLib { };
        };
      };

  # Upstream without the locked nixpkgs, NixOS's own declarations are missing and the NixOS
  # configuration is freeform: a misspelt option would pass, so the NixOS module is left to the
  # model (check-nix.sh runs it after this), which has a reading of them.
  nixos = if upstream && nixpkgs == null then "freeform: checked by the model" else nixosChecked;

  nixosChecked =
    let
      on = nixosEval { enable = true; };
      off = nixosEval { };
      asUser = nixosEval {
        enable = true;
        user = "alice";
        environmentFile = "/run/secrets/floot.env";
      };
      escaped = nixosEval (hostile // { enable = true; });
      ending = nixosEval endingTurns;
      endingService = ending.config.systemd.services.floot-daemon;
      service = on.config.systemd.services.floot-daemon;
      escapedService = escaped.config.systemd.services.floot-daemon;
      userService = asUser.config.systemd.services.floot-daemon;
      exe = lib.getExe flake.packages.x86_64-linux.floot-daemon;
      envFileType = on.options.services.floot-daemon.environmentFile.type;
    in
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
    assert builtins.deepSeq endingService.serviceConfig true;
    assert check (off.config.systemd.services == { }) "the NixOS module declares a service while disabled";
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
    # Issue 31: a stop or restart signals the daemon alone; its keeper's CLIs run on, with the
    # runtime dir their credential files are in.
    assert check (
      (service.serviceConfig.KillMode or null) == "process"
    ) "NixOS KillMode is ${toString (service.serviceConfig.KillMode or "unset (control-group)")}, not process: a stop or restart would kill every running turn with the daemon";
    assert check (
      (service.serviceConfig.RuntimeDirectoryPreserve or null) == "yes"
    ) "NixOS RuntimeDirectoryPreserve is not yes: systemd would remove the runtime dir from under the turns KillMode=process keeps running";
    assert check (!(service.serviceConfig ? ExecStop)) "NixOS ExecStop= without endTurnsOnStop";
    assert check (
      endingService.serviceConfig.KillMode == "process"
    ) "NixOS KillMode with endTurnsOnStop";
    assert check (
      (endingService.serviceConfig.ExecStop or null)
      == ''"${exe}" "daemon" "stop" "--cancel-turns" "--state" "/srv/100%% floot"''
    ) "NixOS ExecStop= with endTurnsOnStop is ${toString (endingService.serviceConfig.ExecStop or "unset")}, not floot daemon stop --cancel-turns on ExecStart's state dir, escaped as ExecStart";
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
      ExecStop = endingService.serviceConfig.ExecStop;
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
  path = if upstream then "upstream" else "model";
  nixosDeclarations =
    if !upstream then
      "model"
    else if nixpkgs == null then
      "freeform"
    else
      "locked nixpkgs";
  homeManager = lib.genAttrs (builtins.attrNames flake.packages) homeManager';
}
