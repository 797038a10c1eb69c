import { defaultToolGateDeadlineMs, type HttpConnectionLimits } from "@bridgeworks/control-channel";
import { defaultCliStartHoldMs } from "./cli-start-slots.js";
import { apiConnectionLimitsFrom } from "./http/connection-policy.js";
import { defaultNotifyTimeoutMs, parseNotifyCommand } from "./notify-command.js";

/** What the daemon reads from its environment, read and checked once, before it starts anything. */
export interface DaemonSettings {
  /** `FLOOT_TOOL_TIMEOUT_MS`: how long one tool call may wait (a person answering a form). */
  toolTimeoutMs: number;
  /** `FLOOT_GATE_TIMEOUT_MS`: how long the pre-tool gate waits for the daemon before it blocks the call. */
  gateTimeoutMs: number;
  /** `FLOOT_CLI_START_HOLD_MS`: how long a starting CLI may hold its start slot before it speaks. */
  cliStartHoldMs: number;
  /** `FLOOT_MAX_CONNECTIONS`, `FLOOT_MAX_IDLE_CONNECTIONS`, `FLOOT_IDLE_TIMEOUT_MS`. */
  connectionLimits: HttpConnectionLimits;
  /**
   * `FLOOT_KEEPER` (`on`, the default, or `off`): whether turns run under the keeper, which outlives the
   * daemon; off, the daemon's spawner helper starts them and they end with the daemon.
   */
  keeper: boolean;
  /**
   * `FLOOT_AFTER_CLI_LOST` (`continue`, the default, or `interrupt`): what a start does with a turn
   * that had effects and whose CLI is gone. `continue`: it carries on by itself on its conversation
   * when every tool call it started finished, else waits on a person ("may have run"); `interrupt`:
   * it ends interrupted and a person retries it.
   */
  afterCliLost: "continue" | "interrupt";
  /** `--notify-command`, else `FLOOT_NOTIFY_COMMAND`: the program (resolved) and its arguments. */
  notifyCommand?: readonly string[];
  /** `FLOOT_NOTIFY_TIMEOUT_MS`: when a notify command still running is killed. */
  notifyTimeoutMs: number;
}

/** What the command line adds to the environment's settings. */
export interface SettingFlags {
  /** `--notify-command`: wins over `FLOOT_NOTIFY_COMMAND`. */
  notifyCommand?: string;
  /** Where a relative program path is found from. */
  cwd?: string;
}

/** A setting the daemon cannot start with: `variable` names it, `problem` says what is wrong. */
export class SettingError extends Error {
  constructor(
    readonly variable: string,
    readonly problem: string,
  ) {
    super(`${variable}: ${problem}`);
  }
}

export const defaultToolTimeoutMs = 60 * 60 * 1000;

const milliseconds = {
  FLOOT_TOOL_TIMEOUT_MS: defaultToolTimeoutMs,
  FLOOT_GATE_TIMEOUT_MS: defaultToolGateDeadlineMs,
  FLOOT_CLI_START_HOLD_MS: defaultCliStartHoldMs,
  FLOOT_NOTIFY_TIMEOUT_MS: defaultNotifyTimeoutMs,
} as const;

/**
 * The daemon's settings from `env`, each its default when unset or empty. A value that is not what its
 * variable takes is refused by name (`FLOOT_TOOL_TIMEOUT_MS=1h` is not a number of milliseconds), never
 * silently replaced by the default.
 */
export function readDaemonSettings(
  env: Readonly<Record<string, string | undefined>>,
  flags: SettingFlags = {},
): DaemonSettings {
  const ms = (name: keyof typeof milliseconds): number => {
    const raw = env[name];
    if (raw === undefined || raw === "") return milliseconds[name];
    if (!/^[1-9][0-9]{0,9}$/.test(raw) || Number(raw) > 2_147_483_647)
      throw new SettingError(
        name,
        `must be a whole number of milliseconds (1 to 2147483647), got ${JSON.stringify(raw)}`,
      );
    return Number(raw);
  };
  let connectionLimits: HttpConnectionLimits;
  try {
    connectionLimits = apiConnectionLimitsFrom(env);
  } catch (error) {
    const message = (error as Error).message;
    throw new SettingError(
      /^\w+/.exec(message)?.[0] ?? "FLOOT_MAX_CONNECTIONS",
      message.replace(/^\w+ /, ""),
    );
  }
  const keeper = env.FLOOT_KEEPER ?? "";
  if (!["", "on", "off"].includes(keeper))
    throw new SettingError("FLOOT_KEEPER", `must be on or off, got ${JSON.stringify(keeper)}`);
  const afterCliLost = env.FLOOT_AFTER_CLI_LOST || "continue";
  if (afterCliLost !== "continue" && afterCliLost !== "interrupt")
    throw new SettingError(
      "FLOOT_AFTER_CLI_LOST",
      `must be continue or interrupt, got ${JSON.stringify(afterCliLost)}`,
    );
  const notifyCommand = notifyCommandOf(env, flags);
  return {
    keeper: keeper !== "off",
    afterCliLost,
    toolTimeoutMs: ms("FLOOT_TOOL_TIMEOUT_MS"),
    gateTimeoutMs: ms("FLOOT_GATE_TIMEOUT_MS"),
    cliStartHoldMs: ms("FLOOT_CLI_START_HOLD_MS"),
    connectionLimits,
    ...(notifyCommand !== undefined && { notifyCommand }),
    notifyTimeoutMs: ms("FLOOT_NOTIFY_TIMEOUT_MS"),
  };
}

function notifyCommandOf(
  env: Readonly<Record<string, string | undefined>>,
  { notifyCommand: flag, cwd = process.cwd() }: SettingFlags,
): string[] | undefined {
  const [name, value] =
    flag !== undefined ? ["--notify-command", flag] : ["FLOOT_NOTIFY_COMMAND", env.FLOOT_NOTIFY_COMMAND];
  if (value === undefined || (value === "" && flag === undefined)) return undefined;
  try {
    return parseNotifyCommand(value, env, cwd);
  } catch (error) {
    throw new SettingError(name, (error as Error).message);
  }
}
