export const IDLE_TIMEOUT_VARIABLE = "CLAUDE_BRIDGE_STREAM_IDLE_TIMEOUT";
export const DEFAULT_IDLE_TIMEOUT_MS = 90_000;
/** The longest delay a Node timer honours; anything longer fires at once. */
export const MAX_TIMER_DELAY_MS = 2_147_483_647;

/** `timeoutMs` 0 means the watchdog is off. */
export type IdleTimeoutSetting = { readonly ok: true; readonly timeoutMs: number } | IdleTimeoutError;
export interface IdleTimeoutError {
  readonly ok: false;
  readonly error: string;
}

const durationPattern = /^(\d+(?:\.\d+)?)(ms|s|m)?$/;
const unitMs = { ms: 1, s: 1000, m: 60_000 } as const;

/**
 * A duration as the bridge's variables spell it: `45` (seconds), `45s`, `250ms`, `2m`; milliseconds,
 * rounded up. Undefined when `text` is not one.
 */
export function parseDuration(text: string): number | undefined {
  const match = durationPattern.exec(text.trim());
  if (!match) return undefined;
  return Math.ceil(Number(match[1]) * unitMs[(match[2] ?? "s") as keyof typeof unitMs]);
}

/**
 * Parses an idle timeout: `45` (seconds), `5s`, `250ms`, `2m`, `0` (off). Unset or blank gives the 90 s
 * default. A bad value is an error naming `variable`, never a silent fallback to the default.
 */
export function parseIdleTimeout(
  raw: string | undefined,
  variable: string = IDLE_TIMEOUT_VARIABLE,
): IdleTimeoutSetting {
  const text = raw?.trim() ?? "";
  if (text === "") return { ok: true, timeoutMs: DEFAULT_IDLE_TIMEOUT_MS };
  // Rounded up so a tiny positive value never turns the watchdog off by accident.
  const timeoutMs = parseDuration(text);
  if (timeoutMs === undefined) {
    return {
      ok: false,
      error: `${variable}=${JSON.stringify(raw)} is not a duration: use seconds (45 or 45s), milliseconds (250ms), minutes (2m), or 0 to turn the idle watchdog off`,
    };
  }
  if (timeoutMs > MAX_TIMER_DELAY_MS) {
    return {
      ok: false,
      error: `${variable}=${JSON.stringify(raw)} is too long: at most ${MAX_TIMER_DELAY_MS}ms (about 24 days); use 0 to turn the idle watchdog off`,
    };
  }
  return { ok: true, timeoutMs };
}

/** Reads {@link IDLE_TIMEOUT_VARIABLE} from an environment passed in (never `process.env` implicitly). */
export function idleTimeoutFromEnv(env: Readonly<Record<string, string | undefined>>): IdleTimeoutSetting {
  return parseIdleTimeout(env[IDLE_TIMEOUT_VARIABLE], IDLE_TIMEOUT_VARIABLE);
}
