import { toJSONSchema, type z } from "zod";
import { type McpToolResult, mcpErrorResult, parseToolArguments } from "./mcp-tool-results.js";

/** A JSON Schema for an object, as MCP's `tools/list` carries a tool's input and output schemas. */
export interface JsonObjectSchema {
  [key: string]: unknown;
  type: "object";
}

/** MCP's tool annotations: hints a client may act on (Claude Code runs `readOnlyHint` calls concurrently). */
export interface McpToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/**
 * The input of a tool another program owns and validates (Pi's tools, served to Claude Code): its JSON
 * Schema is listed byte for byte and the call's arguments are handed over unread.
 */
export interface ForeignToolInput {
  readonly foreignJsonSchema: JsonObjectSchema;
}

export function foreignToolInput(schema: JsonObjectSchema): ForeignToolInput {
  return { foreignJsonSchema: schema };
}

type ToolInput = z.ZodType | ForeignToolInput;
type ArgumentsOf<Input extends ToolInput> = Input extends z.ZodType
  ? z.output<Input>
  : Record<string, unknown>;

/**
 * One MCP tool: what `tools/list` shows and what `tools/call` runs. `Call` is what the app's server hands
 * every handler beside the validated arguments (its abort signal, the request's `_meta`, a progress sink).
 */
export interface McpTool<Call, Input extends ToolInput = ToolInput> {
  name: string;
  description: string;
  /** Listed as its JSON Schema (zod's `toJSONSchema`, input side) and validating every call. */
  input: Input;
  /** Listed as its JSON Schema (output side); the MCP client then checks `structuredContent` against it. */
  output?: z.ZodType;
  annotations?: McpToolAnnotations;
  /** The tool's `_meta` in `tools/list` (Claude Code's `anthropic/alwaysLoad`). */
  meta?: Record<string, unknown>;
  /** The answer to arguments the schema refuses; by default an `isError` result naming each argument. */
  refuse?: (problem: string) => McpToolResult;
  // A method, so a tool of any input type fits a table of tools.
  handler(args: ArgumentsOf<Input>, call: Call): Promise<McpToolResult>;
}

/** One entry of `tools/list`. */
export interface McpToolListing {
  name: string;
  description: string;
  inputSchema: JsonObjectSchema;
  outputSchema?: JsonObjectSchema;
  annotations?: McpToolAnnotations;
  _meta?: Record<string, unknown>;
}

/** A tool with its handler's argument type checked against its input schema. */
export function mcpTool<Call, Input extends ToolInput>(tool: McpTool<Call, Input>): McpTool<Call> {
  return tool as McpTool<Call>;
}

export interface McpToolTableOptions<Call> {
  /** A call to a tool the table does not hold; by default an `isError` result naming it. */
  unknownTool?: (name: string, args: Record<string, unknown>, call: Call) => Promise<McpToolResult>;
}

/**
 * An MCP server's tools in one table: `list()` answers `tools/list` with each tool's schemas generated
 * from the zod schema that validates it, and `call()` answers `tools/call`, validating the arguments
 * with that same schema first. It loads no MCP SDK: each server wires these two into its own handlers.
 */
export class McpToolTable<Call> {
  readonly #tools: ReadonlyMap<string, McpTool<Call>>;
  readonly #unknownTool: NonNullable<McpToolTableOptions<Call>["unknownTool"]>;
  #listing: McpToolListing[] | undefined;

  constructor(tools: readonly McpTool<Call>[], options: McpToolTableOptions<Call> = {}) {
    const byName = new Map<string, McpTool<Call>>();
    for (const tool of tools) {
      if (byName.has(tool.name)) throw new Error(`two MCP tools are called ${JSON.stringify(tool.name)}`);
      byName.set(tool.name, tool);
    }
    this.#tools = byName;
    this.#unknownTool =
      options.unknownTool ?? (async (name) => mcpErrorResult(`name: no tool called ${JSON.stringify(name)}`));
  }

  /** The `tools` of a `tools/list` answer, in the table's order (built once, on the first list). */
  list(): McpToolListing[] {
    this.#listing ??= [...this.#tools.values()].map(listingOf);
    return this.#listing;
  }

  /** A `tools/call`: the named tool's handler with its validated arguments, or the refusal. */
  async call(name: string, args: unknown, call: Call): Promise<McpToolResult> {
    const tool = this.#tools.get(name);
    if (tool === undefined) return this.#unknownTool(name, objectOrEmpty(args), call);
    if (isForeign(tool.input)) return tool.handler(objectOrEmpty(args), call);
    const parsed = parseToolArguments(tool.input, args);
    if (!parsed.ok) return (tool.refuse ?? mcpErrorResult)(parsed.message);
    return tool.handler(parsed.value, call);
  }
}

/** A zod schema as the JSON Schema a tool lists for it. */
export function mcpToolJsonSchema(schema: z.ZodType, io: "input" | "output"): JsonObjectSchema {
  // Without the 2020-12 `$schema` zod writes, as the bee bridge always listed them: a draft-07 validator
  // may not know that URI (the MCP SDK 1.32 client's ajv, with validateSchema off, compiles either way).
  const { $schema: _dialect, ...schemaOnly } = toJSONSchema(schema, { io });
  if (schemaOnly.type !== "object") throw new Error(`an MCP tool's ${io} schema must be an object schema`);
  return schemaOnly as JsonObjectSchema;
}

function listingOf<Call>(tool: McpTool<Call>): McpToolListing {
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: isForeign(tool.input)
      ? tool.input.foreignJsonSchema
      : mcpToolJsonSchema(tool.input, "input"),
    ...(tool.output === undefined ? {} : { outputSchema: mcpToolJsonSchema(tool.output, "output") }),
    ...(tool.annotations === undefined ? {} : { annotations: tool.annotations }),
    ...(tool.meta === undefined ? {} : { _meta: tool.meta }),
  };
}

function isForeign(input: ToolInput): input is ForeignToolInput {
  return "foreignJsonSchema" in input;
}

function objectOrEmpty(args: unknown): Record<string, unknown> {
  return typeof args === "object" && args !== null && !Array.isArray(args)
    ? (args as Record<string, unknown>)
    : {};
}
