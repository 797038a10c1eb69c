export {
  type CachePrefixEntry,
  type CacheStability,
  type CacheStabilityOptions,
  cacheStability,
  type PrefixUnit,
  promptPrefixUnits,
} from "./cache-prefix.js";
export type { IdGenerator } from "./plan.js";
export { type CacheUsage, PromptCacheModel } from "./prompt-cache.js";
export type {
  MatchableRequest,
  RecordedRequest,
  RecordedResponse,
  RecordedToolCall,
  RequestKind,
} from "./recorded.js";
export type { WaitOptions } from "./request-log.js";
export {
  lastUserText,
  type OfferedTool,
  offeredTools,
  type ToolResultView,
  toolResult,
  toolResultIds,
  toolResultText,
} from "./request-view.js";
export {
  ApiName,
  InvalidScriptError,
  MatchSpec,
  PromptCacheSpec,
  parseScript,
  type RequestPredicate,
  Script,
  ScriptError,
  ScriptEvent,
  type ScriptInput,
  ScriptStep,
  ScriptUsage,
  StepResponse,
  StopReason,
  ToolNameSelector,
} from "./script.js";
export { loadScriptFile } from "./script-file.js";
export { type ModelDouble, type ModelDoubleOptions, startModelDouble } from "./server.js";
export { type ScriptedToolCall, textReply, toolTurnScript } from "./tool-turn.js";
