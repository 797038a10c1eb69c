// Values for `codex -c key=value`, where the value is parsed as TOML (and silently taken as a raw
// string when it does not parse, so a quoting mistake would not even fail).

/** A TOML basic string. */
export function tomlString(value: string): string {
  if (/[\uD800-\uDFFF]/.test(value.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, "")))
    throw new Error(`cannot write a lone UTF-16 surrogate into TOML: ${JSON.stringify(value)}`);
  // JSON string escapes (\" \\ \b \f \n \r \t \uXXXX) are all valid TOML basic-string escapes.
  return JSON.stringify(value);
}

export function tomlStringArray(values: readonly string[]): string {
  return `[${values.map(tomlString).join(", ")}]`;
}

export function tomlInlineTable(entries: Readonly<Record<string, string>>): string {
  const pairs = Object.entries(entries).map(([key, value]) => `${tomlKey(key)} = ${tomlString(value)}`);
  return `{ ${pairs.join(", ")} }`;
}

function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : tomlString(key);
}
