import type { MatchableRequest } from "./recorded.js";
import { lastUserText, toolResultIds } from "./request-view.js";
import type { ApiName, MatchSpec, ScriptStep } from "./script.js";

export interface StepSelector {
  /** Picks and consumes (unless `repeat`) the step that answers this request; `null` if none does. */
  select(request: MatchableRequest & { api: ApiName }): number | null;
}

/**
 * Steps with `match` claim requests first, in script order; the rest are consumed in order by whatever
 * request no matching step claimed. A `repeat` step is never consumed, so a positional one stops the queue.
 */
export function createStepSelector(steps: readonly ScriptStep[]): StepSelector {
  const consumed = new Set<number>();
  const available = (index: number) => !consumed.has(index);
  const take = (index: number) => {
    if (!steps[index]!.repeat) consumed.add(index);
    return index;
  };

  return {
    select(request) {
      for (const [index, step] of steps.entries()) {
        if (step.match !== undefined && available(index) && matches(step.match, request)) return take(index);
      }
      for (const [index, step] of steps.entries()) {
        if (step.match === undefined && available(index)) return take(index);
      }
      return null;
    },
  };
}

function matches(
  match: NonNullable<ScriptStep["match"]>,
  request: MatchableRequest & { api: ApiName },
): boolean {
  if (typeof match === "function") return match(request);
  return matchesSpec(match, request);
}

function matchesSpec(spec: MatchSpec, request: MatchableRequest & { api: ApiName }): boolean {
  if (spec.api !== undefined && spec.api !== request.api) return false;
  if (spec.toolResultFor !== undefined && !toolResultIds(request.api, request.body).has(spec.toolResultFor)) {
    return false;
  }
  if (
    spec.lastUserTextIncludes !== undefined &&
    !lastUserText(request.api, request.body).includes(spec.lastUserTextIncludes)
  ) {
    return false;
  }
  return true;
}
