import type { McpToolResult } from "@bridgeworks/runtime";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterEach, describe, expect, test } from "vitest";
import { PiToolServer, type ToolCallHandler } from "../src/mcp-tools.js";
import type { PiTool } from "../src/pi-types.js";

// Pi's tools as the MCP SDK's own client sees them: Pi owns and validates their schemas, so each is
// listed byte for byte, and every call goes to the handler (issue 35's one tool table).

const read: PiTool = {
  name: "read",
  description: "Read a file",
  parameters: {
    properties: {
      path: { type: "string", pattern: "^[^\\u0000]+$" },
      limit: { type: "integer", minimum: 1 },
    },
    required: ["path"],
    additionalProperties: false,
  },
};
const bash: PiTool = {
  name: "bash",
  description: "Run a command",
  parameters: { type: "object", properties: { command: { type: "string", maxLength: 100000 } } },
};

let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
});

async function served(tools: PiTool[]) {
  const calls: Array<Parameters<ToolCallHandler>[0]> = [];
  const server = new PiToolServer(async (call): Promise<McpToolResult> => {
    calls.push(call);
    return { content: [{ type: "text", text: `ran ${call.name}` }] };
  });
  server.setTools(tools);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.server.connect(serverSide);
  client = new Client({ name: "claude-code-stand-in", version: "1.0.0" });
  await client.connect(clientSide);
  return { server, client, calls };
}

describe("Pi's tools over MCP", () => {
  test("each listed input schema is Pi's own, byte for byte, in name order; read-only tools say so", async () => {
    const { client } = await served([read, bash]);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(["bash", "read"]);
    const [listedBash, listedRead] = tools;
    expect(JSON.stringify(listedRead?.inputSchema)).toBe(
      JSON.stringify({ type: "object", ...read.parameters }),
    );
    expect(JSON.stringify(listedBash?.inputSchema)).toBe(
      JSON.stringify({ type: "object", ...bash.parameters }),
    );
    expect(listedRead?.annotations).toEqual({ readOnlyHint: true });
    expect(listedBash?.annotations).toBeUndefined();
    for (const tool of tools) expect(tool._meta).toEqual({ "anthropic/alwaysLoad": true });
  });

  test("a call is handed to Pi unvalidated (Pi checks its arguments), with Claude's tool_use id", async () => {
    const { client, calls } = await served([read, bash]);
    const result = await client.callTool({
      name: "read",
      arguments: { path: 42, extra: true },
      _meta: { "claudecode/toolUseId": "toolu_1" },
    });
    expect(result.content).toEqual([{ type: "text", text: "ran read" }]);
    expect(calls.map(({ name, toolUseId }) => ({ name, toolUseId }))).toEqual([
      { name: "read", toolUseId: "toolu_1" },
    ]);
  });

  test("a call for a tool the list no longer holds still reaches Pi, whose ledger pairs it", async () => {
    const { server, client, calls } = await served([read, bash]);
    server.setTools([read]);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["read"]);
    const result = await client.callTool({
      name: "bash",
      arguments: { command: "true" },
      _meta: { "claudecode/toolUseId": "toolu_2" },
    });
    expect(result.isError).toBeFalsy();
    expect(calls.map(({ name, toolUseId }) => ({ name, toolUseId }))).toEqual([
      { name: "bash", toolUseId: "toolu_2" },
    ]);
  });
});
