import {
  chmodSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { connectKeeper, fenceCli } from "@bridgeworks/backend-adapters";
import {
  type ModelDouble,
  type ScriptInput,
  type ScriptStep,
  startModelDouble,
} from "@bridgeworks/model-double";
import {
  type Backend,
  type FlootDaemonFile,
  FlootDaemonFile as FlootDaemonFileSchema,
  type FlootSession,
  type SecretRequest,
  type ToolAdmission,
  type TurnEventEnvelope,
  type TurnRecord,
} from "@bridgeworks/protocol";
import {
  createIsolatedEnvironment,
  type FaultHit,
  type FaultPlan,
  faultInjection,
  type IsolatedEnvironment,
  isProcessAlive,
  readFaultLog,
  type TrackedProcess,
  waitUntil,
} from "@bridgeworks/test-harness";
import { openJournal } from "@bridgeworks/turn-journal";
import Database from "better-sqlite3";
import { FlootClient } from "../src/client/api-client.js";
import { keeperPlaces, readKeeperKey, shutDownKeeper } from "../src/daemon/keeper-link.js";
import { resolveRuntimeDir } from "../src/daemon/runtime-dir.js";
import { type TracePoint, traceChannelPrefix } from "../src/daemon/trace.js";
import { journalFileName } from "../src/state-dir.js";

export const appDir = dirname(dirname(fileURLToPath(import.meta.url)));
export const bundlePath = join(appDir, "bundle", "floot.mjs");
export const shimPath = join(appDir, "bundle", "shim.mjs");

/** A copy of checkout files another uid runs, in a fresh 0755 dir under the system temp dir. */
export interface StagedForOtherUsers {
  root: string;
  remove(): void;
}

/**
 * Copies `copies` (destination relative to the copy's root -> source) where every uid can reach them:
 * the checkout itself may sit under a 0700 directory (a home, `mktemp -d`), out of another uid's reach.
 */
export function stageForOtherUsers(copies: Record<string, string>): StagedForOtherUsers {
  const root = mkdtempSync(join(tmpdir(), "floot-other-uid-"));
  chmodSync(root, 0o755);
  for (const [to, from] of Object.entries(copies)) {
    cpSync(from, join(root, to), { recursive: true, dereference: true });
  }
  for (let dir = root; dir !== dirname(dir); dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) throw new Error(`${dir} is not searchable by other users`);
  }
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}

/**
 * The built bundle as another uid runs it: `bundle/` and its one runtime dependency, better-sqlite3
 * (its JavaScript and native addon) with what it loads.
 */
export function stageBundleForOtherUsers(): StagedForOtherUsers & { bundlePath: string } {
  const packageDir = (name: string, from: string) =>
    dirname(createRequire(join(from, "package.json")).resolve(`${name}/package.json`));
  const sqlite = packageDir("better-sqlite3", appDir);
  const bindings = packageDir("bindings", sqlite);
  const staged = stageForOtherUsers({
    bundle: join(appDir, "bundle"),
    "node_modules/better-sqlite3/package.json": join(sqlite, "package.json"),
    "node_modules/better-sqlite3/lib": join(sqlite, "lib"),
    "node_modules/better-sqlite3/build/Release/better_sqlite3.node": join(
      sqlite,
      "build/Release/better_sqlite3.node",
    ),
    "node_modules/bindings": bindings,
    "node_modules/file-uri-to-path": packageDir("file-uri-to-path", bindings),
  });
  return { ...staged, bundlePath: join(staged.root, "bundle", "floot.mjs") };
}

export const modelFor: Record<Backend, string> = { claude: "claude-sonnet-4-5", codex: "gpt-5.1-codex" };

/** A request the double answers once the secret `name` reached the turn (the tool result names it). */
export const providedSecret =
  (name = "API_TOKEN") =>
  (request: { body: unknown }): boolean =>
    JSON.stringify(request.body).includes(`provided ${name}`);

/** A script step: a user prompt holding `trigger` is answered with a `requestSecret` call for `name`. */
export function requestSecretStep(
  trigger: string,
  name = "API_TOKEN",
  prompt = "the deploy token",
): ScriptStep {
  return {
    match: { lastUserTextIncludes: trigger },
    repeat: true,
    response: {
      events: [{ type: "tool_use", nameFrom: { endsWith: "requestSecret" }, input: { name, prompt } }],
    },
  };
}

/** Faults to inject into a daemon, by trace point (see src/daemon/trace.ts). */
export type DaemonFaults = Partial<Record<TracePoint, FaultPlan[string]>>;

export function faultPlanOf(faults: DaemonFaults): FaultPlan {
  return Object.fromEntries(
    Object.entries(faults).map(([point, rule]) => [`${traceChannelPrefix}${point}`, rule]),
  );
}

export interface DaemonProcess {
  process: TrackedProcess;
  file: FlootDaemonFile;
  client: FlootClient;
}

/**
 * One isolated world per test: the model double, a temp HOME pointed at it, a state dir, and the
 * daemon (the built bundle) as a process the test can SIGKILL and start again.
 */
export class FlootWorld {
  readonly backend: Backend;
  readonly double: ModelDouble;
  readonly env: IsolatedEnvironment;
  readonly stateDir: string;
  readonly runtimeDir: string;
  readonly faultLog: string;
  /** Every daemon this world started, in order: their logs outlive them (a torture trial's record). */
  readonly daemonsSpawned: TrackedProcess[] = [];
  daemon: DaemonProcess | undefined;

  private constructor(backend: Backend, double: ModelDouble, env: IsolatedEnvironment) {
    this.backend = backend;
    this.double = double;
    this.env = env;
    this.stateDir = join(env.root, "state");
    this.runtimeDir = join(env.root, "run");
    this.faultLog = join(env.root, "faults.jsonl");
  }

  static async create(backend: Backend, script: ScriptInput): Promise<FlootWorld> {
    const double = await startModelDouble(script);
    const env = createIsolatedEnvironment({ modelUrl: double.url, model: modelFor[backend] });
    return new FlootWorld(backend, double, env);
  }

  get client(): FlootClient {
    if (!this.daemon) throw new Error("no daemon is running");
    return this.daemon.client;
  }

  /** Spawns a daemon (with `faults` injected through the test-only preload); resolves once it is ready. */
  async startDaemon(
    extraEnv: Record<string, string> = {},
    faults: DaemonFaults = {},
    extraArgs: string[] = [],
  ): Promise<DaemonProcess> {
    const previous = this.readDaemonFile();
    const process = this.spawnDaemon(extraEnv, faults, extraArgs);
    let exit: unknown;
    void process.exited.then((status) => {
      exit = status;
    });
    await waitUntil(
      () => {
        if (exit !== undefined)
          throw new Error(`daemon ${process.pid} exited before it was ready: ${JSON.stringify(exit)}`);
        const file = this.readDaemonFile();
        return file !== undefined && file.pid === process.pid && file.generation !== previous?.generation;
      },
      30_000,
      `daemon ${process.pid} ready\n${process.stderr()}`,
    ).catch(async (error: unknown) => {
      throw new Error(`${(error as Error).message}\nstderr:\n${process.stderr()}`);
    });
    const file = this.readDaemonFile()!;
    this.daemon = { process, file, client: new FlootClient(file) };
    return this.daemon;
  }

  spawnDaemon(
    extraEnv: Record<string, string> = {},
    faults: DaemonFaults = {},
    extraArgs: string[] = [],
  ): TrackedProcess {
    const injected =
      Object.keys(faults).length > 0 ? faultInjection(faultPlanOf(faults), this.faultLog) : undefined;
    const daemon = this.env.spawn(
      process.execPath,
      [...(injected?.nodeArgs ?? []), bundlePath, "daemon", "--state", this.stateDir, ...extraArgs],
      {
        env: {
          FLOOT_RUNTIME_DIR: this.runtimeDir,
          // The recovery tests show what becomes of a turn a person must retry; the default, continuing
          // it when that is provably safe, has its own tests (cli-lost.test.ts), which set `continue`.
          FLOOT_AFTER_CLI_LOST: "interrupt",
          ...injected?.env,
          ...extraEnv,
        },
      },
    );
    this.daemonsSpawned.push(daemon);
    return daemon;
  }

  /** The faults that fired in this world's daemons, in order. */
  faultHits(): FaultHit[] {
    return readFaultLog(this.faultLog);
  }

  /** Waits for the running daemon to end on its own (e.g. killed by an injected fault). */
  async daemonExited(timeoutMs = 60_000): Promise<void> {
    const daemon = this.daemon;
    if (!daemon) throw new Error("no daemon is running");
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      daemon.process.exited,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`daemon still running after ${timeoutMs} ms`)), timeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
    this.daemon = undefined;
  }

  readDaemonFile(): FlootDaemonFile | undefined {
    try {
      return FlootDaemonFileSchema.parse(
        JSON.parse(readFileSync(join(this.stateDir, "daemon.json"), "utf8")),
      );
    } catch {
      return undefined;
    }
  }

  /** A turn's journal row read beside the daemon (even a blocked one): phase, pid and spawn marker. */
  readTurnRow(
    turnId: string,
  ): { phase: string; pid: number | null; spawnMarker: string | null; effects: number } | undefined {
    const db = new Database(join(this.stateDir, journalFileName), { readonly: true, fileMustExist: true });
    try {
      return db
        .prepare("SELECT phase, pid, spawn_marker AS spawnMarker, effects FROM turns WHERE id = ?")
        .get(turnId) as
        | { phase: string; pid: number | null; spawnMarker: string | null; effects: number }
        | undefined;
    } finally {
      db.close();
    }
  }

  /** SIGKILL from outside: no shutdown code of the daemon runs. */
  async killDaemon(): Promise<number> {
    const daemon = this.daemon;
    if (!daemon) throw new Error("no daemon is running");
    const killedAt = Date.now();
    process.kill(daemon.process.pid, "SIGKILL");
    await daemon.process.exited;
    this.daemon = undefined;
    return killedAt;
  }

  /** SIGTERM, as a service manager's stop or restart sends it: the daemon's own shutdown runs. */
  async stopDaemon(): Promise<void> {
    const daemon = this.daemon;
    if (!daemon) throw new Error("no daemon is running");
    process.kill(daemon.process.pid, "SIGTERM");
    await daemon.process.exited;
    this.daemon = undefined;
  }

  async restartAfterKill(extraEnv: Record<string, string> = {}): Promise<DaemonProcess> {
    await this.killDaemon();
    return this.startDaemon(extraEnv);
  }

  /** Runs the built `floot` CLI on this world's state dir; resolves with its exit and output. */
  async floot(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const cli = this.env.spawn(process.execPath, [bundlePath, ...args, "--state", this.stateDir], {
      env: { FLOOT_RUNTIME_DIR: this.runtimeDir },
    });
    const exit = await cli.exited;
    return { code: exit.code, stdout: cli.stdout(), stderr: cli.stderr() };
  }

  /** This state dir's runtime dir, where its keeper's socket and key are. */
  get stateRuntimeDir(): string {
    return resolveRuntimeDir(this.stateDir, { FLOOT_RUNTIME_DIR: this.runtimeDir }).path;
  }

  /** The keeper's pid, proven with the state dir's key; undefined when none answers. */
  async keeperPid(): Promise<number | undefined> {
    const places = keeperPlaces(this.stateRuntimeDir);
    const key = readKeeperKey(places.keyPath);
    if (key === undefined) return undefined;
    try {
      const keeper = await connectKeeper(places.socketPath, key);
      keeper.close();
      return keeper.pid;
    } catch {
      return undefined;
    }
  }

  /**
   * SIGKILL to the keeper; with `clis`, as a reboot would, to every process under it too (each CLI in
   * its own group), so no CLI of this world outlives it. Without, its CLIs are left running, orphaned
   * (the next daemon fences them). Resolves with how many processes were killed.
   */
  async killKeeper(options: { clis: boolean } = { clis: true }): Promise<number> {
    const pid = await this.keeperPid();
    if (pid === undefined) throw new Error("no keeper answers");
    const killed = [pid, ...(options.clis ? descendantsOf(pid) : [])];
    for (const each of killed) {
      try {
        process.kill(each, "SIGKILL");
      } catch {
        // Gone already.
      }
    }
    await waitUntil(() => killed.every((each) => !isProcessAlive(each)), 10_000, "keeper gone");
    return killed.length;
  }

  /** SIGKILL of the daemon and of its keeper alone: its CLIs are left running, orphaned, and no daemon adopts them. */
  async killDaemonAndKeeper(): Promise<number> {
    const killedAt = await this.killDaemon();
    await this.killKeeper({ clis: false });
    return killedAt;
  }

  /** SIGKILL of the daemon and of its keeper alone (its CLIs left running, orphaned), then a new daemon. */
  async restartAfterKeeperKill(extraEnv: Record<string, string> = {}): Promise<DaemonProcess> {
    await this.killDaemon();
    await this.killKeeper({ clis: false });
    return this.startDaemon(extraEnv);
  }

  /** SIGKILL of the daemon and its keeper with every CLI (a reboot), then a new daemon. */
  async restartAfterReboot(extraEnv: Record<string, string> = {}): Promise<DaemonProcess> {
    await this.killDaemon();
    await this.killKeeper();
    return this.startDaemon(extraEnv);
  }

  async createSession(options: Record<string, unknown> = {}): Promise<FlootSession> {
    return this.client.request<FlootSession>("POST", "/v1/sessions", {
      backend: this.backend,
      ...(this.backend === "claude" && { allowedTools: ["Bash"], permissionMode: "dontAsk" }),
      ...options,
    });
  }

  async send(sessionId: string, prompt: string): Promise<TurnRecord> {
    return this.client.request<TurnRecord>("POST", `/v1/sessions/${sessionId}/turns`, { prompt });
  }

  async turn(turnId: string): Promise<TurnRecord> {
    return this.client.request<TurnRecord>("GET", `/v1/turns/${turnId}`);
  }

  async turns(sessionId: string): Promise<TurnRecord[]> {
    return (await this.client.request<{ turns: TurnRecord[] }>("GET", `/v1/sessions/${sessionId}/turns`))
      .turns;
  }

  async events(turnId: string): Promise<TurnEventEnvelope[]> {
    return (await this.client.request<{ events: TurnEventEnvelope[] }>("GET", `/v1/turns/${turnId}/events`))
      .events;
  }

  async secretRequests(): Promise<SecretRequest[]> {
    return (await this.client.request<{ requests: SecretRequest[] }>("GET", "/v1/secret-requests")).requests;
  }

  async waitForTurn(
    turnId: string,
    predicate: (turn: TurnRecord) => boolean,
    what: string,
    timeoutMs = 60_000,
  ): Promise<TurnRecord> {
    let last: TurnRecord | undefined;
    await waitUntil(
      async () => {
        last = await this.turn(turnId);
        return predicate(last);
      },
      timeoutMs,
      what,
    ).catch((error: unknown) => {
      throw new Error(
        `${(error as Error).message}; turn is ${JSON.stringify(last)}\ndaemon stderr:\n${this.daemon?.process.stderr()}`,
      );
    });
    return last!;
  }

  waitForEnd(turnId: string, timeoutMs = 60_000): Promise<TurnRecord> {
    return this.waitForTurn(
      turnId,
      (turn) => ["completed", "failed", "cancelled", "interrupted"].includes(turn.phase),
      `turn ${turnId} ends`,
      timeoutMs,
    );
  }

  /** Requests the double saw whose latest user text carries `marker`. */
  requestsWith(marker: string): number {
    return this.double.requests.filter((request) => JSON.stringify(request.body).includes(marker)).length;
  }

  /** The gate's record of a turn's tool calls, read from the journal beside the running daemon. */
  toolAdmissions(turnId: string): ToolAdmission[] {
    const journal = openJournal({ path: join(this.stateDir, journalFileName) });
    try {
      return journal.gate.listToolAdmissions(turnId);
    } finally {
      journal.maintenance.close();
    }
  }

  /**
   * Stops the daemon (SIGTERM), ends every CLI any daemon of this world recorded (by pid and start
   * time), checks the journal is consistent, then removes everything.
   */
  async dispose(): Promise<string[]> {
    if (this.daemon) {
      process.kill(this.daemon.process.pid, "SIGTERM");
      await this.daemon.process.exited;
      this.daemon = undefined;
    }
    // A stopped daemon leaves its turns' CLIs to the keeper: end them and it, as `floot stop
    // --cancel-turns` would once no daemon runs.
    if (existsSync(this.runtimeDir)) await shutDownKeeper(this.stateRuntimeDir).catch(() => false);
    let problems: string[] = [];
    if (existsSync(join(this.stateDir, journalFileName))) {
      const journal = openJournal({ path: join(this.stateDir, journalFileName) });
      try {
        for (const session of journal.sessions.listSessions()) {
          for (const turn of journal.turns.listTurns(session.id)) {
            if (turn.process) await fenceCli(turn.process).catch(() => undefined);
          }
        }
        problems = journal.maintenance.checkConsistency().map((problem) => JSON.stringify(problem));
      } finally {
        journal.maintenance.close();
      }
    }
    await this.env.dispose();
    await this.double.close();
    return problems;
  }
}

/** Pids of every live descendant of `pid`, from /proc. */
export function descendantsOf(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      parentOf.set(Number(name), Number(fields[1]));
    } catch {
      // Exited meanwhile.
    }
  }
  const found: number[] = [];
  let frontier = [pid];
  while (frontier.length > 0) {
    const next = [...parentOf].filter(([, parent]) => frontier.includes(parent)).map(([child]) => child);
    found.push(...next);
    frontier = next;
  }
  return found;
}

export function commandLineOf(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
  } catch {
    return [];
  }
}

/** Every file under `dir`, recursively (symlinks not followed). */
export function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stats = statSync(path, { throwIfNoEntry: false });
    if (!stats) continue;
    if (stats.isDirectory()) found.push(...filesUnder(path));
    else if (stats.isFile()) found.push(path);
  }
  return found;
}

/** Files under `dirs` whose bytes contain `needle`, searched byte for byte. */
export function filesContaining(dirs: readonly string[], needle: string): string[] {
  const bytes = Buffer.from(needle, "utf8");
  return dirs.flatMap(filesUnder).filter((path) => {
    try {
      return readFileSync(path).includes(bytes);
    } catch {
      return false;
    }
  });
}
