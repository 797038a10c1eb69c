import { defineCommand, integer, UsageError } from "@bridgeworks/cli";
import { maxCliNice, minCliNice } from "@bridgeworks/protocol";
import { createLogger, streamSink } from "@bridgeworks/runtime";
import { defaultCliNice } from "../daemon/cli-nice.js";
import { resolveStateDir } from "../state-dir.js";
import type { FlootContext } from "./context.js";
import { daemonOptions } from "./daemon-connection.js";
import { printSignInLink } from "./sign-in-link.js";
import { onStopSignal } from "./signals.js";

export const daemonCommand = defineCommand<FlootContext>()({
  name: "daemon",
  summary: "run the daemon in the foreground until SIGINT or SIGTERM; `daemon stop` stops it",
  description:
    "Without --port the daemon takes its previous port when it is free, so an open web UI finds it again.\n" +
    "A second daemon on the same state dir exits 75.\n" +
    "A stopping daemon leaves its running turns to their keeper: the next start goes on with them.\n" +
    "`floot daemon stop --cancel-turns` cancels them first, then ends the keeper (also with no daemon running).",
  positionals: [
    {
      name: "action",
      summary: "stop: stop the running daemon of the state dir",
      optional: true,
      choices: ["stop"],
    },
  ],
  options: {
    state: daemonOptions.state,
    port: {
      type: "string",
      placeholder: "N",
      summary: "the port on 127.0.0.1 (0: any free one)",
      parse: integer(0, 65_535),
    },
    "cli-nice": {
      type: "string",
      placeholder: "N",
      summary: `the nice value (${minCliNice}-${maxCliNice}) of the CLIs the daemon starts; 0: the daemon's own (default ${defaultCliNice})`,
      parse: integer(minCliNice, maxCliNice),
    },
    "cli-starts": {
      type: "string",
      placeholder: "N",
      summary:
        "how many CLIs may be starting at once; a turn waits, accepted, for one of them to speak (default: the cores)",
      parse: integer(1, 1_000),
    },
    "sign-in-link": {
      type: "boolean",
      summary: "print a one-time web UI sign-in link to the controlling terminal (never to stderr or a log)",
    },
    "notify-command": {
      type: "string",
      placeholder: "CMD",
      summary:
        "run CMD (split at spaces, no shell) for each approval or secret asked and each turn ended, one JSON line on its stdin (default: $FLOOT_NOTIFY_COMMAND)",
    },
    "cancel-turns": {
      type: "boolean",
      summary: "with stop: cancel every running turn and end the keeper, instead of leaving them running",
    },
  },
  examples: [
    { command: "floot daemon --state ~/floot", summary: "a daemon on its own state dir" },
    { command: "floot daemon stop --cancel-turns", summary: "stop it and end its running turns" },
    {
      command: "floot daemon --notify-command ~/bin/floot-notify",
      summary: "run a script of yours for each moment that needs you (docs/notifications.md)",
    },
  ],
  async run({ options, args }, context) {
    const stateDir = resolveStateDir({ flag: options.state, env: context.env, cwd: context.cwd });
    if (args.action === "stop") {
      if (options["notify-command"] !== undefined)
        throw new UsageError("--notify-command", "is for running the daemon, not for `floot daemon stop`");
      const { stopDaemon } = await import("./daemon-stop.js");
      const stopped = await stopDaemon(context, stateDir, options["cancel-turns"] === true);
      context.stdout.write(
        `${stopped.stoppedPid === undefined ? "no daemon was running" : `daemon ${stopped.stoppedPid} stopped`}` +
          `${stopped.cancelledTurns.length > 0 ? `; ${stopped.cancelledTurns.length} turn(s) cancelled` : ""}` +
          `${stopped.keeperEnded ? "; the keeper ended" : ""}\n`,
      );
      return 0;
    }
    if (options["cancel-turns"]) throw new UsageError("--cancel-turns", "is for `floot daemon stop`");
    const { readDaemonSettings, SettingError } = await import("../daemon/settings.js");
    const settings = (() => {
      try {
        return readDaemonSettings(context.env, {
          ...(options["notify-command"] !== undefined && { notifyCommand: options["notify-command"] }),
          cwd: context.cwd,
        });
      } catch (error) {
        if (error instanceof SettingError) throw new UsageError(error.variable, error.problem);
        throw error;
      }
    })();
    // The journal holds prompts and transcripts of work: nothing the daemon creates is for other users.
    process.umask(0o077);
    const logger = createLogger({ component: "floot-daemon", write: streamSink(context.stderr) });
    // Heard from before the start: a client takes the daemon for ready once `daemon.json` is written,
    // before the start returns, and a SIGTERM then (a restart right after a start) must still stop it
    // cleanly, its turns left to the keeper, not end it where it stands. It stops once started.
    let stopListening = () => {};
    const stopAsked = new Promise<NodeJS.Signals>((resolve) => {
      stopListening = onStopSignal(context.signals, resolve);
    });
    // Loaded here, not by the command table: no other command pays for the daemon (or SQLite).
    const { startDaemon } = await import("../daemon/daemon.js");
    const daemon = await startDaemon({
      stateDir,
      ...(options.port !== undefined && { port: options.port }),
      ...(options["cli-nice"] !== undefined && { cliNice: options["cli-nice"] }),
      ...(options["cli-starts"] !== undefined && { cliStarts: options["cli-starts"] }),
      env: context.env,
      settings,
      logger,
      ...(context.uiDir !== undefined && { uiDir: context.uiDir }),
    }).catch((error: unknown) => {
      stopListening();
      throw error;
    });
    context.stderr.write(
      `floot daemon listening on http://127.0.0.1:${daemon.port} (state: ${stateDir}, generation ${daemon.generation})\n`,
    );
    if (options["sign-in-link"]) printSignInLink(daemon.signInLink, context.stderr);
    const signal = await stopAsked;
    logger.info("stopping", { signal });
    await daemon.stop();
    return 0;
  },
});
