import { randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach } from "vitest";
import {
  type McpSocketServer,
  type McpSocketServerOptions,
  SocketTransport,
  startMcpSocketServer,
  TurnTokenRegistry,
} from "../src/index.js";
import { type Deferred, deferred } from "./helpers.js";

export interface TurnContext {
  turnId: string;
}

export interface ToolCallRecord {
  turnId: string;
  name: string;
  arguments: Record<string, unknown> | undefined;
  meta: Record<string, unknown> | undefined;
}

/** What the echo server saw: every call, and the `slow` tool's start and abort. */
export interface EchoProbe {
  calls: ToolCallRecord[];
  serversCreated: TurnContext[];
  slowStarted: Deferred<void>;
  slowAborted: Deferred<void>;
}

export function echoProbe(): EchoProbe {
  return { calls: [], serversCreated: [], slowStarted: deferred(), slowAborted: deferred() };
}

/**
 * A low-level SDK `Server` with two tools: `echo {text}` answers `echo(<turnId>): <text>`, `slow` never
 * answers until its call is aborted (the connection closes).
 */
export function echoServerFactory(probe: EchoProbe): (context: TurnContext) => Server {
  return (context) => {
    probe.serversCreated.push(context);
    const server = new Server({ name: "floot", version: "0.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [
        {
          name: "echo",
          description: "Echoes the given text back.",
          inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
          _meta: { "anthropic/alwaysLoad": true },
        },
        {
          name: "slow",
          description: "Waits until cancelled.",
          inputSchema: { type: "object", properties: {} },
          _meta: { "anthropic/alwaysLoad": true },
        },
      ],
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const { name, arguments: args, _meta } = request.params;
      probe.calls.push({ turnId: context.turnId, name, arguments: args, meta: _meta });
      if (name === "echo") {
        return { content: [{ type: "text", text: `echo(${context.turnId}): ${String(args?.text)}` }] };
      }
      if (name === "slow") {
        probe.slowStarted.resolve();
        await new Promise<void>((resolve) => {
          if (extra.signal.aborted) resolve();
          extra.signal.addEventListener("abort", () => resolve(), { once: true });
        });
        probe.slowAborted.resolve();
        return { content: [{ type: "text", text: "slow was cancelled" }], isError: true };
      }
      return { content: [{ type: "text", text: `unknown tool ${name}` }], isError: true };
    });
    return server;
  };
}

export interface EchoBridge {
  server: McpSocketServer<TurnContext>;
  tokens: TurnTokenRegistry<TurnContext>;
  probe: EchoProbe;
}

/** Socket servers closed after each test. */
export function useMcpServers(): (
  options: Omit<McpSocketServerOptions<TurnContext>, "createServer" | "authorize"> &
    Partial<Pick<McpSocketServerOptions<TurnContext>, "createServer" | "authorize">>,
) => Promise<EchoBridge> {
  const servers: McpSocketServer<TurnContext>[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  return async (options) => {
    const probe = echoProbe();
    const tokens = new TurnTokenRegistry<TurnContext>(randomBytes);
    const server = await startMcpSocketServer<TurnContext>({
      createServer: echoServerFactory(probe),
      authorize: (token) => tokens.authorize(token),
      ...options,
    });
    servers.push(server);
    return { server, tokens, probe };
  };
}

/** An SDK client over the socket directly (no shim): sends the token line, then speaks MCP. */
export async function connectSocketClient(socketPath: string, token: string): Promise<Client> {
  const socket = await openSocket(socketPath);
  socket.write(`${JSON.stringify({ token })}\n`);
  const client = new Client({ name: "test-client", version: "0.0.0" });
  await client.connect(new SocketTransport(socket));
  return client;
}

export function openSocket(socketPath: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    socket.once("connect", () => {
      socket.off("error", reject);
      resolve(socket);
    });
    socket.once("error", reject);
  });
}

export interface RawExchange {
  received: string;
  closedAfterMs: number;
}

/** Writes `payload` and waits for the server to close the connection (or `timeoutMs`). */
export async function sendAndAwaitClose(
  socketPath: string,
  payload: string,
  timeoutMs = 5_000,
): Promise<RawExchange> {
  const socket = await openSocket(socketPath);
  const started = Date.now();
  let received = "";
  socket.setEncoding("utf8");
  socket.on("data", (chunk: string) => {
    received += chunk;
  });
  socket.on("error", () => {});
  if (payload) socket.write(payload);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept the connection open for ${timeoutMs} ms`));
    }, timeoutMs);
    socket.once("close", () => {
      clearTimeout(timer);
      resolve({ received, closedAfterMs: Date.now() - started });
    });
  });
}

export const initializeRequestLine = `${JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "0" } },
})}\n`;
