/**
 * `build()` run on the first call, its result returned by every call. For schemas a process may never
 * use: a daemon that runs no turn of a backend does not build that backend's line schemas at start.
 */
export function builtOnce<T>(build: () => T): () => T {
  let built: { value: T } | undefined;
  return () => {
    built ??= { value: build() };
    return built.value;
  };
}
