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
  type McpToolResult,
  mcpErrorResult,
  mcpJsonResult,
  parseToolArguments,
} from "./mcp-tool-results.js";
export { type Environment, xdgRuntimeDir, xdgStateHome } from "./xdg.js";
