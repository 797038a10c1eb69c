# MODEL, NOT HOME-MANAGER (nix/ci/README.md "Two paths"): the option declarations of
# home-manager at ec1a8fdf74ed3f276148ee106299a2ba0e65d51f (nix/ci/upstream.json) that the Floot
# home-manager module sets or reads, as read there: each option names the file and line it is
# declared at (`source`; packages/repo-checks checks that every one does, at a revision
# nix/ci/NIXPKGS.md lists). Its types are the stand-in's reading of lib/types.nix
# (stub-nixpkgs/types.nix). A type the model does not read is `unmodelled`: defining that option
# fails here, not silently passes. scripts/check-nix.sh always evaluates the module against it
# (nix/ci/module-eval.nix, through nix/ci/model/modules.nix); where home-manager is in the Nix
# store, against its own declarations first.
{ types }:
let
  inherit (import ./declare.nix) declare unmodelled;
  rev = "home-manager ec1a8fd";
  at = line: file: "${rev} modules/${file}:${toString line}";
  launchd = line: at line "launchd/launchd.nix";
  inherit (types)
    attrsOf
    bool
    either
    enum
    int
    listOf
    nullOr
    oneOf
    path
    str
    submodule
    ;
  # Most launchd plist keys: `nullOr T`, default null.
  plistKey =
    line: type:
    declare (launchd line) {
      type = nullOr type;
      default = null;
    };
  complexKey = line: declare (launchd line) {
    type = unmodelled (launchd line);
    default = null;
  };
  nullOrBool = nullOr bool;

  # launchd/launchd.nix: the plist of one agent (freeformType attrsOf anything, :34).
  plist = agentName: {
    options = {
      # launchd/default.nix:78 sets it with mkDefault "org.nix-community.home.${name}"; the model
      # has no mkDefault, so that is the declaration's default here.
      Label = declare (launchd 37) {
        type = str;
        default = "org.nix-community.home.${agentName}";
      };
      Disabled = plistKey 42 bool;
      UserName = plistKey 65 str;
      GroupName = plistKey 74 str;
      inetdCompatibility = complexKey 84;
      LimitLoadToHosts = plistKey 109 (listOf str);
      LimitLoadFromHosts = plistKey 118 (listOf str);
      LimitLoadToSessionType = plistKey 127 (oneOf [
        str
        (listOf str)
      ]);
      Program = plistKey 141 path;
      ProgramArguments = plistKey 151 (listOf str);
      EnableGlobbing = plistKey 172 bool;
      EnableTransactions = plistKey 180 bool;
      OnDemand = plistKey 191 bool;
      KeepAlive = plistKey 201 (
        either bool (submodule {
          options = {
            SuccessfulExit = plistKey 207 bool;
            NetworkState = plistKey 217 bool;
            PathState = plistKey 227 (attrsOf bool);
            OtherJobEnabled = plistKey 238 (attrsOf bool);
            Crashed = plistKey 249 bool;
            AfterInitialDemand = plistKey 259 bool;
          };
        })
      );
      RunAtLoad = plistKey 285 bool;
      RootDirectory = plistKey 294 str;
      WorkingDirectory = plistKey 302 str;
      EnvironmentVariables = plistKey 310 (attrsOf str);
      Umask = plistKey 319 int;
      TimeOut = plistKey 328 int;
      ExitTimeOut = plistKey 337 int;
      ThrottleInterval = plistKey 346 int;
      InitGroups = plistKey 358 bool;
      WatchPaths = plistKey 367 (listOf path);
      QueueDirectories = plistKey 375 (listOf str);
      StartOnMount = plistKey 384 bool;
      StartInterval = plistKey 392 int;
      StartCalendarInterval = complexKey 402;
      StandardInPath = plistKey 428 path;
      StandardOutPath = plistKey 437 path;
      StandardErrorPath = plistKey 445 path;
      Debug = plistKey 453 bool;
      WaitForDebugger = plistKey 462 bool;
      SoftResourceLimits = complexKey 471;
      HardResourceLimits = complexKey 564;
      Nice = plistKey 660 int;
      ProcessType = plistKey 668 (enum [
        "Background"
        "Standard"
        "Adaptive"
        "Interactive"
      ]);
      AbandonProcessGroup = plistKey 703 bool;
      LowPriorityIO = plistKey 712 bool;
      LowPriorityBackgroundIO = plistKey 721 bool;
      LaunchOnlyOnce = plistKey 730 bool;
      MachServices = complexKey 739;
      LaunchEvents = complexKey 787;
      ServiceIPC = plistKey 812 bool;
      SessionCreate = plistKey 822 bool;
      Sockets = complexKey 832;
    };
    freeformType = attrsOf types.anything;
  };

  # launchd/default.nix:17 launchdConfig: one agent.
  agent =
    { name }:
    {
      enable = declare (at 20 "launchd/default.nix") {
        type = bool;
        default = false;
      };
      domain = declare (at 21 "launchd/default.nix") {
        type = enum [
          "gui"
          "user"
        ];
        default = "gui";
      };
      waitForNixStore = declare (at 37 "launchd/default.nix") {
        type = bool;
        default = true;
      };
      config = declare (at 55 "launchd/default.nix") {
        type = submodule (plist name);
        default = { };
      };
    };

  # systemd.nix:96 unitBaseType: a submodule whose freeformType is
  # attrsOf (attrsOf (either primitive (listOf primitive))), primitive = oneOf [ bool int str path ].
  # Of Service it declares only Environment and ExecStart: KillMode, ExecStop and the rest are
  # freeform, written as given (toSystemdIni, :33).
  primitive = oneOf [
    bool
    int
    str
    path
  ];
  toList = x: if builtins.isList x then x else [ x ];
  service = {
    options = {
      Unit = {
        Description = declare (at 114 "systemd.nix") {
          type = nullOr str;
          default = null;
        };
        Documentation = declare (at 121 "systemd.nix") {
          type = types.coercedTo str toList (listOf str);
          default = [ ];
        };
        # systemd.nix:136 serviceType adds these.
        X-Reload-Triggers = declare (at 140 "systemd.nix") {
          type = listOf (either types.package str);
          default = [ ];
        };
        X-Restart-Triggers = declare (at 150 "systemd.nix") {
          type = listOf (either types.package str);
          default = [ ];
        };
        X-SwitchMethod = declare (at 160 "systemd.nix") {
          type = enum [
            null
            "reload"
            "restart"
            "stop-start"
            "keep-old"
          ];
          default = null;
        };
      };
      Service = {
        Environment = declare (at 178 "systemd.nix") {
          type = types.coercedTo str toList (listOf str);
          default = [ ];
        };
        ExecStart = declare (at 188 "systemd.nix") {
          type =
            let
              primitive' = either types.package str;
            in
            either primitive' (listOf primitive');
          apply = toList;
          default = [ ];
        };
      };
    };
    freeformType = attrsOf (attrsOf (either primitive (listOf primitive))) // {
      description = "systemd service unit configuration";
    };
  };
in
{ config, ... }:
{
  _file = "nix/ci/model/home-manager.nix (home-manager ec1a8fd's declarations, as read)";
  options = {
    home = {
      username = declare (at 186 "home-environment.nix") { type = types.nonEmptyStr; };
      homeDirectory = declare (at 213 "home-environment.nix") {
        type = path;
        apply = toString;
      };
      profileDirectory = declare (at 229 "home-environment.nix") {
        type = path;
        default =
          if config.submoduleSupport.enable && config.submoduleSupport.externalPackageInstall then
            "/etc/profiles/per-user/${config.home.username}"
          else if config.nix.useXdg then
            "${config.xdg.stateHome}/nix/profile"
          else
            config.home.homeDirectory + "/.nix-profile";
      };
      packages = declare (at 402 "home-environment.nix") {
        type = listOf types.package;
        default = [ ];
      };
    };
    xdg.stateHome = declare (at 138 "misc/xdg/default.nix") {
      type = path;
      apply = toString;
    };
    nix.useXdg = declare (at 315 "misc/nix/default.nix") { type = bool; };
    submoduleSupport = {
      enable = declare (at 7 "misc/submodule-support.nix") {
        type = bool;
        default = false;
      };
      externalPackageInstall = declare (at 17 "misc/submodule-support.nix") {
        type = bool;
        default = false;
      };
    };
    launchd.agents = declare (at 184 "launchd/default.nix") {
      type = attrsOf (submodule { options = agent; });
      default = { };
    };
    systemd.user.services = declare (at 279 "systemd.nix") {
      type = attrsOf (submodule service);
      default = { };
    };
  };
}
