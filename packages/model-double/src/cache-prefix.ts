import type { RecordedRequest } from "./recorded.js";

type Json = Record<string, unknown>;

/**
 * One step of an Anthropic request's prompt-cache prefix, in the order the cache reads them: the
 * settings a cache entry is keyed by (model, thinking, tool choice), each tool, each system block,
 * then each content block of each message. `key` is the step's canonical JSON without its
 * `cache_control`; `breakpoint` says whether it carried one.
 */
export interface PrefixUnit {
  readonly key: string;
  readonly breakpoint: boolean;
}

/** Where one request stands against the previous request of its conversation. */
export interface CachePrefixEntry {
  /** The request's index in `ModelDouble.requests`. */
  readonly index: number;
  readonly conversation: string;
  readonly units: number;
  /** Units up to and including the request's last `cache_control` breakpoint (0 without one). */
  readonly cachedPrefix: number;
  /** Units it shares with the previous request of its conversation; null for the first one. */
  readonly commonWithPrevious: number | null;
  /** The cached prefix this request had to reuse (the previous request's); null for the first one. */
  readonly previousCachedPrefix: number | null;
  /** The previous request's cached prefix was cut: that part of the cache is written again. */
  readonly rebuild: boolean;
  /** Characters of the previous cached prefix past the common part (what is re-cached), 0 unless a rebuild. */
  readonly rebuiltChars: number;
}

export interface CacheStability {
  readonly requests: readonly CachePrefixEntry[];
  readonly rebuilds: number;
}

export interface CacheStabilityOptions {
  /**
   * Which conversation a request belongs to; `undefined` leaves it out (e.g. a one-shot summary).
   * Default: every Anthropic Messages request is one conversation.
   */
  readonly conversationOf?: (request: RecordedRequest) => string | undefined;
}

/** An Anthropic Messages body as prefix units (see `PrefixUnit`); anything else has none. */
export function promptPrefixUnits(body: unknown): PrefixUnit[] {
  if (!isObject(body)) return [];
  const units: PrefixUnit[] = [
    unit({ model: body.model, thinking: body.thinking ?? null, tool_choice: body.tool_choice ?? null }),
  ];
  for (const tool of arrayOf(body.tools)) units.push(unit({ tool }));
  const system =
    typeof body.system === "string" ? [{ type: "text", text: body.system }] : arrayOf(body.system);
  for (const block of system) units.push(unit({ system: block }));
  for (const message of arrayOf(body.messages)) {
    if (!isObject(message)) continue;
    const content =
      typeof message.content === "string"
        ? [{ type: "text", text: message.content }]
        : arrayOf(message.content);
    content.forEach((block, position) => {
      units.push(unit({ role: message.role, opensMessage: position === 0, block }));
    });
  }
  return units;
}

/**
 * The prompt-cache stability of a run: for each Anthropic request, the longest common prefix with
 * the previous request of the same conversation, and whether it cut that request's cached prefix
 * (a **rebuild**: the cache from that point on is written again).
 */
export function cacheStability(
  requests: readonly RecordedRequest[],
  options: CacheStabilityOptions = {},
): CacheStability {
  const conversationOf = options.conversationOf ?? (() => "all");
  const previous = new Map<string, { units: PrefixUnit[]; cachedPrefix: number }>();
  const entries: CachePrefixEntry[] = [];
  for (const request of requests) {
    if (request.api !== "anthropic") continue;
    const conversation = conversationOf(request);
    if (conversation === undefined) continue;
    const units = promptPrefixUnits(request.body);
    const cachedPrefix = units.findLastIndex((step) => step.breakpoint) + 1;
    const before = previous.get(conversation);
    const common = before ? commonPrefix(before.units, units) : null;
    const rebuild = before !== undefined && common !== null && common < before.cachedPrefix;
    entries.push({
      index: request.index,
      conversation,
      units: units.length,
      cachedPrefix,
      commonWithPrevious: common,
      previousCachedPrefix: before?.cachedPrefix ?? null,
      rebuild,
      rebuiltChars: rebuild
        ? before.units.slice(common ?? 0, before.cachedPrefix).reduce((sum, step) => sum + step.key.length, 0)
        : 0,
    });
    previous.set(conversation, { units, cachedPrefix });
  }
  return { requests: entries, rebuilds: entries.filter((entry) => entry.rebuild).length };
}

function commonPrefix(a: readonly PrefixUnit[], b: readonly PrefixUnit[]): number {
  let length = 0;
  while (length < a.length && length < b.length && a[length]!.key === b[length]!.key) length += 1;
  return length;
}

function unit(value: Json): PrefixUnit {
  let breakpoint = false;
  const key = JSON.stringify(value, (name, inner: unknown) => {
    if (name === "cache_control") {
      breakpoint = true;
      return undefined;
    }
    return isObject(inner) && !Array.isArray(inner) ? sortedKeys(inner) : inner;
  });
  return { key, breakpoint };
}

function sortedKeys(value: Json): Json {
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, value[key]]),
  );
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
