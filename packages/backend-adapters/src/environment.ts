export type EnvironmentSource = Readonly<Record<string, string | undefined>>;

/** Later layers win; unset variables of the base (process.env style) are dropped. */
export function mergeEnvironment(
  base: EnvironmentSource,
  ...layers: ReadonlyArray<Readonly<Record<string, string>> | undefined>
): Record<string, string> {
  const merged: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) if (value !== undefined) merged[name] = value;
  for (const layer of layers) Object.assign(merged, layer);
  return merged;
}
