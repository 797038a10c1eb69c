import type { UsageEvent } from "@bridgeworks/protocol";
import { contextUse, tokens } from "./format.js";

/**
 * The session's totals: the sum of its turns' usage (each turn's own `usage` event, as its line says),
 * over the turns shown, and the context as its latest turn left it; when earlier turns are not loaded, it says so rather than undercount silently.
 */
export function sessionTotals(usages: readonly (UsageEvent | undefined)[], hidden: number): string {
  const known = usages.filter((each): each is UsageEvent => each !== undefined);
  if (known.length === 0) return "";
  const sum = (pick: (usage: UsageEvent) => number | undefined) =>
    known.reduce((total, usage) => total + (pick(usage) ?? 0), 0);
  const parts = [`${tokens(sum((u) => u.input))} in`, `${tokens(sum((u) => u.output))} out`];
  if (known.some((u) => u.cacheRead)) parts.push(`${tokens(sum((u) => u.cacheRead))} cached`);
  if (known.some((u) => u.costUsd !== undefined)) parts.push(`$${sum((u) => u.costUsd).toFixed(4)}`);
  // The context is where the latest turn left it, not a sum.
  const context = contextUse(known.at(-1)!);
  if (context) parts.push(context);
  const over =
    hidden > 0
      ? `the last ${usages.length} turns`
      : `${usages.length === 1 ? "1 turn" : `${usages.length} turns`}`;
  return `Session total (${over}): ${parts.join(" · ")}`;
}
