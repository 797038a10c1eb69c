import { UsageError } from "./usage-error.js";

// Value parsers for string options (`parse`): each checks before `run`, so a bad value is a usage
// error (exit 2) that names the option, and no daemon or board is looked up first.

/** A whole number from `min` to `max`. */
export function integer(min: number, max: number): (raw: string, option: string) => number {
  return (raw, option) => {
    if (!/^[0-9]{1,15}$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      throw new UsageError(option, `must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}`);
    }
    return Number(raw);
  };
}

/** `KEY=VALUE`, the key not empty; the value may hold further `=`. */
export function keyValue(raw: string, option: string): [string, string] {
  const at = raw.indexOf("=");
  if (at < 1) throw new UsageError(option, `takes KEY=VALUE, got ${JSON.stringify(raw)}`);
  return [raw.slice(0, at), raw.slice(at + 1)];
}

const durationUnits: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** A duration with its unit, `500ms`, `30s`, `5m` or `2h`, as whole milliseconds from 1 to `maxMs`. */
export function duration(maxMs: number): (raw: string, option: string) => number {
  return (raw, option) => {
    const match = /^([0-9]{1,10})(ms|s|m|h)$/.exec(raw);
    const ms = match ? Number(match[1]) * durationUnits[match[2]!]! : Number.NaN;
    if (!(ms >= 1 && ms <= maxMs)) {
      throw new UsageError(
        option,
        `must be a duration from 1ms to ${maxMs} ms with its unit (500ms, 30s, 5m, 2h), got ${JSON.stringify(raw)}`,
      );
    }
    return ms;
  };
}
