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
