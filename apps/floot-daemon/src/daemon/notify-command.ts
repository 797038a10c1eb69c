import { type CliSpawner, findExecutable, type SpawnedCli } from "@bridgeworks/backend-adapters";
import type { FlootMoment } from "@bridgeworks/protocol";
import { describeError, type Logger } from "@bridgeworks/runtime";
import type { MomentSource } from "./moments.js";

export const defaultNotifyTimeoutMs = 10_000;
/** Commands running at once; the next moments wait for one of them to end. */
export const defaultNotifyConcurrency = 4;
/** Moments waiting for a free slot; past this many, a moment is dropped (and logged). */
export const defaultNotifyBacklog = 100;
/** How much of a failed command's stderr the log keeps. */
const stderrKept = 1_000;

const shellCharacters = /['"\\$`|;&<>(){}*?~]/;

/**
 * `--notify-command` (or `FLOOT_NOTIFY_COMMAND`) as the program and its arguments: split at whitespace,
 * no shell. A character a shell would interpret is refused (it would reach the program as is, which
 * is never what was meant): a pipeline goes in a script. The program is found now, as `execvp` will
 * (a path with a slash from `cwd`, a bare name on `PATH`), so a typo stops the start, not each moment.
 * Throws an `Error` whose message says what is wrong.
 */
export function parseNotifyCommand(
  value: string,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
) {
  const argv = value.trim().split(/\s+/).filter(Boolean);
  if (argv.length === 0) throw new Error("is empty; give a program and its arguments");
  const shelly = argv.find((word) => shellCharacters.test(word));
  if (shelly !== undefined) {
    throw new Error(
      `no shell runs it, so ${JSON.stringify(shelly)} would reach the program as is: quotes, \\, $, \`, |, ;, &, <, >, globs and parentheses are refused; put a pipeline in a script and name the script`,
    );
  }
  const found = findExecutable(argv[0]!, env.PATH, cwd);
  if (!found.found) {
    throw new Error(
      found.reason === "not_found"
        ? `${argv[0]}: no such program (a bare name is looked up on PATH)`
        : `${found.path}: not executable`,
    );
  }
  return [found.path, ...argv.slice(1)];
}

export interface NotifyCommandOptions {
  /** The program (resolved) and its arguments. */
  argv: readonly string[];
  spawner: CliSpawner;
  /** A command still running after this long is killed, with its whole process group. */
  timeoutMs: number;
  cwd: string;
  env: Record<string, string>;
  logger: Logger;
  concurrency?: number;
  backlog?: number;
}

/**
 * Runs the user's command once per moment, with the moment as one JSON line on its stdin. Nothing
 * waits for it: a moment is handed over and the caller goes on. The command runs in its own process
 * group, started by the daemon's spawner helper (the fork blocks the helper, not the daemon's loop), at
 * most `concurrency` at once (the rest wait, up to `backlog`); one that fails is logged with its exit
 * and the end of its stderr, one that runs past `timeoutMs` is killed with its group and logged.
 */
export class NotifyCommand {
  readonly #options: Required<NotifyCommandOptions>;
  readonly #waiting: FlootMoment[] = [];
  /** Process groups of the commands running now. */
  readonly #groups = new Set<number>();
  #starting = 0;
  #closed = false;
  #idle: (() => void) | undefined;

  constructor(options: NotifyCommandOptions) {
    this.#options = {
      concurrency: defaultNotifyConcurrency,
      backlog: defaultNotifyBacklog,
      ...options,
    };
  }

  /** Runs the command for every moment `source` hears, until `close()`. */
  follow(source: MomentSource): () => void {
    return source.subscribe((moment) => this.notify(moment));
  }

  notify(moment: FlootMoment): void {
    if (this.#closed) return;
    if (this.#busy < this.#options.concurrency) {
      void this.#run(moment);
      return;
    }
    if (this.#waiting.length < this.#options.backlog) {
      this.#waiting.push(moment);
      return;
    }
    this.#options.logger.warn("notify command: too many moments waiting; this one is dropped", {
      kind: moment.kind,
      session: moment.session,
      turn: moment.turn,
      waiting: this.#waiting.length,
    });
  }

  /** Commands started and not yet ended. */
  get running(): number {
    return this.#busy;
  }

  /** Resolves once no command runs and none waits. */
  idle(): Promise<void> {
    if (this.#busy === 0 && this.#waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const previous = this.#idle;
      this.#idle = () => {
        previous?.();
        resolve();
      };
    });
  }

  /** Drops what waits and kills every running command's process group. */
  close(): void {
    this.#closed = true;
    this.#waiting.length = 0;
    for (const group of this.#groups) killGroup(group);
  }

  get #busy(): number {
    return this.#starting + this.#groups.size;
  }

  async #run(moment: FlootMoment): Promise<void> {
    const { argv, spawner, cwd, env, logger } = this.#options;
    const about = { kind: moment.kind, session: moment.session, turn: moment.turn, program: argv[0] };
    this.#starting += 1;
    let child: SpawnedCli | undefined;
    try {
      child = await spawner.spawn({ command: argv[0]!, args: argv.slice(1), cwd, env });
    } catch (error) {
      logger.warn("notify command did not start", { ...about, error: describeError(error) });
    } finally {
      this.#starting -= 1;
    }
    if (child !== undefined) {
      this.#groups.add(child.pid);
      if (this.#closed) killGroup(child.pid);
      await this.#deliver(child, moment, about);
      this.#groups.delete(child.pid);
    }
    this.#next();
  }

  async #deliver(child: SpawnedCli, moment: FlootMoment, about: Record<string, unknown>): Promise<void> {
    const { timeoutMs, logger } = this.#options;
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-stderrKept);
    });
    child.stdout.resume();
    // A command that does not read its stdin (or exits first) must not fail the daemon with EPIPE.
    child.stdin.on("error", () => {});
    child.stdin.end(`${JSON.stringify(moment)}\n`);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, timeoutMs);
    const status = await child.exit;
    clearTimeout(timer);
    if (timedOut) {
      logger.warn("notify command timed out; its process group was killed", {
        ...about,
        timeoutMs,
        pid: child.pid,
      });
    } else if (status.code !== 0) {
      logger.warn("notify command failed", {
        ...about,
        code: status.code,
        signal: status.signal,
        stderr: stderr.trim(),
      });
    }
  }

  #next(): void {
    const moment = this.#waiting.shift();
    if (moment !== undefined && !this.#closed) {
      void this.#run(moment);
      return;
    }
    if (this.#busy > 0) return;
    const idle = this.#idle;
    this.#idle = undefined;
    idle?.();
  }
}

function killGroup(group: number): void {
  try {
    process.kill(-group, "SIGKILL");
  } catch {
    // Gone already.
  }
}

/**
 * The daemon's notify command, when its settings name one, following `moments`; the returned function
 * stops it (killing what still runs). Without one, a function that does nothing.
 */
export function startNotifyCommand(
  moments: MomentSource,
  { notifyCommand, notifyTimeoutMs }: { notifyCommand?: readonly string[]; notifyTimeoutMs: number },
  deps: Pick<NotifyCommandOptions, "spawner" | "cwd" | "logger"> & {
    env: Readonly<Record<string, string | undefined>>;
  },
): () => void {
  if (notifyCommand === undefined) return () => {};
  const env = Object.fromEntries(
    Object.entries(deps.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  const command = new NotifyCommand({ ...deps, argv: notifyCommand, timeoutMs: notifyTimeoutMs, env });
  const stop = command.follow(moments);
  deps.logger.info("notify command ready", { program: notifyCommand[0] });
  return () => {
    stop();
    command.close();
  };
}
