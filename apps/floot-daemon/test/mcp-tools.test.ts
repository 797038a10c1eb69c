import { join } from "node:path";
import { type DecisionActor, RequestSecretToolInput } from "@bridgeworks/protocol";
import { silentLogger } from "@bridgeworks/runtime";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterEach, describe, expect, test } from "vitest";
import { z } from "zod";
import { createFlootMcpServer } from "../src/daemon/mcp-tools.js";
import { SecretBroker } from "../src/daemon/secret-broker.js";
import { SecretVault } from "../src/daemon/secret-vault.js";
import { type RunningTurn, runningTurn } from "./running-turn.js";

// The daemon's MCP tools as the MCP SDK's own client sees them, over a real journal and the real brokers:
// the schema a model is shown is the one that validates its call (issue 35).

let turn: RunningTurn | undefined;
let client: Client | undefined;
afterEach(async () => {
  await client?.close();
  client = undefined;
  turn?.close();
  turn = undefined;
});

/** A person at the CLI, as the daemon identifies one. */
const person: DecisionActor = { via: "socket", peer: { pid: 4242, uid: 1000, executable: "/usr/bin/node" } };

async function flootToolsOfRunningTurn() {
  turn = runningTurn("floot-mcp-tools-");
  const { dir, journal, permissions, context } = turn;
  const vault = new SecretVault(join(dir, "run", "secrets"), () => "c1");
  await vault.open();
  const secrets = new SecretBroker(journal, vault, () => {});
  const server = createFlootMcpServer(context, secrets, permissions, silentLogger);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  client = new Client({ name: "floot-test", version: "1.0.0" });
  await client.connect(clientSide);
  return { client, journal, secrets, context };
}

function textOf(result: unknown): string {
  const [first] = (result as { content: Array<{ type: string; text?: string }> }).content;
  return first?.text ?? "";
}

describe("floot's MCP tools", () => {
  test("requestSecret's listed input schema is its validator's: the name pattern and the 4000-character prompt bound", async () => {
    const { client } = await flootToolsOfRunningTurn();
    const { tools } = await client.listTools();
    const requestSecret = tools.find((tool) => tool.name === "requestSecret");
    const { $schema: _dialect, ...validator } = z.toJSONSchema(RequestSecretToolInput, { io: "input" });
    expect(requestSecret?.inputSchema).toEqual(validator);
    expect(requestSecret?.inputSchema.properties?.name).toMatchObject({
      type: "string",
      pattern: "^[A-Za-z_][A-Za-z0-9_]{0,127}$",
    });
    expect(requestSecret?.inputSchema.properties?.prompt).toMatchObject({ type: "string", maxLength: 4000 });
    expect(requestSecret?.annotations).toEqual({ readOnlyHint: false });
    expect(requestSecret?._meta).toEqual({ "anthropic/alwaysLoad": true });
    expect(tools.map((tool) => tool.name)).toEqual(["requestSecret", "permissionPrompt"]);
  });

  test.each([
    [
      "a name that is no env var name",
      { name: "not a name" },
      "name: name must look like an environment variable name",
    ],
    [
      "a 4001-character prompt",
      { name: "API_TOKEN", prompt: "x".repeat(4001) },
      "prompt: prompt must be at most 4000 characters",
    ],
    [
      "an unknown argument",
      { name: "API_TOKEN", value: "hunter22" },
      "value: is not an argument of this tool",
    ],
  ])(
    "requestSecret with %s is a tool error naming the argument; nothing is asked",
    async (_case, args, message) => {
      const { client, journal, context } = await flootToolsOfRunningTurn();
      const result = await client.callTool({ name: "requestSecret", arguments: args });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toBe(message);
      expect(journal.secrets.listSecretRequests(context.turnId)).toEqual([]);
    },
  );

  test("a valid requestSecret asks the human and names the file the answer is in", async () => {
    const { client, journal, secrets, context } = await flootToolsOfRunningTurn();
    const call = client.callTool({
      name: "requestSecret",
      arguments: { name: "API_TOKEN", prompt: "for the deploy" },
      _meta: { "claudecode/toolUseId": "toolu_1" },
    });
    const asked = await (async () => {
      for (let attempt = 0; attempt < 3000; attempt++) {
        const [request] = journal.secrets.listSecretRequests(context.turnId);
        if (request !== undefined) return request;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error("requestSecret asked nothing within 30 s");
    })();
    expect(asked).toMatchObject({ name: "API_TOKEN", prompt: "for the deploy", toolCallKey: "toolu_1" });
    secrets.submit(asked.id, "a-long-enough-value", person);
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toMatch(
      /^The human provided API_TOKEN\. Its value is deliberately not shown here/,
    );
    expect(textOf(result)).not.toContain("a-long-enough-value");
  });

  test("a malformed permission prompt is denied in Claude Code's answer format, and an unknown tool named", async () => {
    const { client } = await flootToolsOfRunningTurn();
    const prompt = await client.callTool({ name: "permissionPrompt", arguments: { tool_name: "" } });
    expect(prompt.isError).toBeFalsy();
    expect(JSON.parse(textOf(prompt))).toEqual({
      behavior: "deny",
      message: "floot: a malformed permission prompt",
    });
    const unknown = await client.callTool({ name: "requestSecrets", arguments: {} });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toBe("unknown tool requestSecrets");
  });
});
