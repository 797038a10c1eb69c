import type { Logger } from "@bridgeworks/runtime";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { BridgeTools } from "./tools.js";

export const serverName = "bee";
export const channelCapability = "claude/channel";

export interface BridgeServerOptions {
  tools: BridgeTools;
  version: string;
  /** Declares the Claude Code channel capability, so new actions may also be pushed. */
  channel: boolean;
  log: Logger;
}

const instructions =
  "bee connects you to a shared board of actions. Call bee_wait_action in a loop to receive actions you can " +
  "claim (pass back the cursor it returns), bee_claim before working on one, and bee_complete when done. " +
  "Your identity (bee_whoami) changes on /clear.";

/** The MCP server: `tools/list` and `tools/call`, with progress only for calls that carry a token. */
export function createBridgeServer({ tools, version, channel, log }: BridgeServerOptions): Server {
  const server = new Server(
    { name: serverName, version },
    {
      capabilities: { tools: {}, ...(channel ? { experimental: { [channelCapability]: {} } } : {}) },
      instructions,
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools.list() }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const meta = request.params._meta;
    const progressToken = meta?.progressToken;
    log.debug("tools/call", {
      tool: request.params.name,
      progressToken: progressToken ?? null,
      toolUseId: meta?.["claudecode/toolUseId"] ?? null,
    });
    const reportProgress =
      progressToken === undefined
        ? undefined
        : (progress: number, total: number, message: string) =>
            extra.sendNotification({
              method: "notifications/progress",
              params: { progressToken, progress, total, message },
            });
    return tools.call(request.params.name, request.params.arguments, {
      signal: extra.signal,
      reportProgress,
    });
  });
  return server;
}
