export { describeError, toError } from "./describe-error.js";
export { sendJson } from "./json-response.js";
export {
  createLogger,
  type LogFields,
  type Logger,
  type LoggerOptions,
  silentLogger,
  streamSink,
} from "./logger.js";
export {
  type ArgumentsResult,
  type McpToolContent,
  type McpToolResult,
  mcpErrorResult,
  mcpJsonResult,
  parseToolArguments,
} from "./mcp-tool-results.js";
export {
  type ForeignToolInput,
  foreignToolInput,
  type JsonObjectSchema,
  type McpTool,
  type McpToolAnnotations,
  type McpToolListing,
  McpToolTable,
  type McpToolTableOptions,
  mcpTool,
  mcpToolJsonSchema,
} from "./mcp-tool-table.js";
export { type Environment, xdgRuntimeDir, xdgStateHome } from "./xdg.js";
