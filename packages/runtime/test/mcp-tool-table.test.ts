import { describe, expect, test } from "vitest";
import { z } from "zod";
import {
  foreignToolInput,
  type McpToolResult,
  McpToolTable,
  mcpErrorResult,
  mcpJsonResult,
  mcpTool,
} from "../src/index.js";

interface Call {
  caller: string;
}

const GreetInput = z.strictObject({
  name: z
    .string()
    .regex(/^[a-z]+$/, "name must be lowercase letters")
    .describe("Who to greet"),
  times: z.int().min(1).max(3).default(1),
});
const GreetOutput = z.strictObject({ greeting: z.string() });

function table() {
  const greet = mcpTool({
    name: "greet",
    description: "Greets someone.",
    input: GreetInput,
    output: GreetOutput,
    annotations: { readOnlyHint: true },
    meta: { "anthropic/alwaysLoad": true },
    async handler(args, call: Call): Promise<McpToolResult> {
      return mcpJsonResult({ greeting: `${"hi ".repeat(args.times)}${args.name} from ${call.caller}` });
    },
  });
  const shout = mcpTool({
    name: "shout",
    description: "Shouts, or answers a bad argument in its own words.",
    input: z.object({ text: z.string().max(5, "must be at most 5 characters") }),
    refuse: (problem) => mcpJsonResult({ refused: problem }),
    async handler(args, _call: Call): Promise<McpToolResult> {
      return mcpJsonResult({ shouted: args.text.toUpperCase() });
    },
  });
  const foreign = mcpTool({
    name: "foreign",
    description: "Another program's tool.",
    input: foreignToolInput({ type: "object", properties: { x: { type: "number" } }, required: ["x"] }),
    async handler(args, _call: Call): Promise<McpToolResult> {
      return mcpJsonResult({ passed: args });
    },
  });
  return new McpToolTable<Call>([greet, shout, foreign]);
}

describe("McpToolTable", () => {
  test("tools/list: each input schema is its validator's JSON Schema, without the $schema dialect", () => {
    const [greet, shout, foreign] = table().list();
    const { $schema: _input, ...greetInput } = z.toJSONSchema(GreetInput, { io: "input" });
    const { $schema: _output, ...greetOutput } = z.toJSONSchema(GreetOutput, { io: "output" });
    expect(greet).toEqual({
      name: "greet",
      description: "Greets someone.",
      inputSchema: greetInput,
      outputSchema: greetOutput,
      annotations: { readOnlyHint: true },
      _meta: { "anthropic/alwaysLoad": true },
    });
    expect(greet?.inputSchema).toEqual({
      type: "object",
      properties: {
        name: { type: "string", pattern: "^[a-z]+$", description: "Who to greet" },
        times: { type: "integer", minimum: 1, maximum: 3, default: 1 },
      },
      required: ["name"],
      additionalProperties: false,
    });
    expect(shout).toEqual({
      name: "shout",
      description: "Shouts, or answers a bad argument in its own words.",
      inputSchema: {
        type: "object",
        properties: { text: { type: "string", maxLength: 5 } },
        required: ["text"],
      },
    });
    expect(foreign?.inputSchema).toEqual({
      type: "object",
      properties: { x: { type: "number" } },
      required: ["x"],
    });
  });

  test("tools/call runs the named tool with its parsed arguments (defaults applied) and the call", async () => {
    expect(await table().call("greet", { name: "ada" }, { caller: "test" })).toEqual(
      mcpJsonResult({ greeting: "hi ada from test" }),
    );
    expect(await table().call("greet", { name: "ada", times: null }, { caller: "t" })).toEqual(
      mcpJsonResult({ greeting: "hi ada from t" }),
    );
  });

  test("a bad argument is a tool error naming the argument, and the handler does not run", async () => {
    const tools = table();
    expect(await tools.call("greet", { name: "Ada" }, { caller: "t" })).toEqual(
      mcpErrorResult("name: name must be lowercase letters"),
    );
    expect(await tools.call("greet", { name: "ada", times: 4 }, { caller: "t" })).toEqual(
      mcpErrorResult("times: must be at most 3"),
    );
    expect(await tools.call("greet", { name: "ada", nmae: "x" }, { caller: "t" })).toEqual(
      mcpErrorResult("nmae: is not an argument of this tool"),
    );
    expect(await tools.call("greet", undefined, { caller: "t" })).toMatchObject({ isError: true });
  });

  test("a tool may answer a bad argument in its own words", async () => {
    expect(await table().call("shout", { text: "too long" }, { caller: "t" })).toEqual(
      mcpJsonResult({ refused: "text: must be at most 5 characters" }),
    );
  });

  test("a foreign tool's arguments are handed over unread", async () => {
    expect(await table().call("foreign", { x: "not a number" }, { caller: "t" })).toEqual(
      mcpJsonResult({ passed: { x: "not a number" } }),
    );
  });

  test("an unknown tool is a tool error naming it, or the table's own answer", async () => {
    expect(await table().call("gret", {}, { caller: "t" })).toEqual(
      mcpErrorResult('name: no tool called "gret"'),
    );
    const routed = new McpToolTable<Call>([], {
      unknownTool: async (name, args, call) => mcpJsonResult({ name, args, caller: call.caller }),
    });
    expect(await routed.call("gone", { a: 1 }, { caller: "t" })).toEqual(
      mcpJsonResult({ name: "gone", args: { a: 1 }, caller: "t" }),
    );
  });

  test("two tools of one name, or an input schema that is not an object, are refused", () => {
    const tool = mcpTool({
      name: "twice",
      description: "",
      input: z.strictObject({}),
      async handler(_args, _call: Call): Promise<McpToolResult> {
        return mcpJsonResult({});
      },
    });
    expect(() => new McpToolTable([tool, tool])).toThrow('two MCP tools are called "twice"');
    const notObject = mcpTool({ ...tool, input: z.string() });
    expect(() => new McpToolTable([notObject]).list()).toThrow("must be an object schema");
  });
});
