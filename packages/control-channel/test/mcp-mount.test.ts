import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import {
  claudeMcpConfig,
  codexMcpOverrides,
  defaultShimCommand,
  defaultShimScriptPath,
  maxSocketPathBytes,
  mintToken,
  mintTurnMount,
  takeTokenFile,
  writeMcpConfigFile,
} from "../src/index.js";
import { useTempDirs } from "./helpers.js";

const tempDir = useTempDirs();
const socketPath = "/state/bridges/g4/mcp.sock";

describe("mintTurnMount", () => {
  test("runs node on the shim with the socket and token in the environment only", () => {
    const token = mintToken(randomBytes);
    const mount = mintTurnMount({ socketPath, token });
    expect(mount).toEqual({
      command: process.execPath,
      args: [defaultShimScriptPath()],
      env: { FLOOT_MCP_SOCKET: socketPath, FLOOT_MCP_TOKEN: token, NODE_OPTIONS: "" },
    });
    expect(mount.args.join(" ")).not.toContain(token);
    expect(mount.command).not.toContain(token);
  });

  test("with a token file, the environment names the file and carries no token; the shim takes it once", async () => {
    const token = mintToken(randomBytes);
    const dir = await tempDir();
    const tokenFile = join(dir, "turn.token");
    await writeFile(tokenFile, token, { mode: 0o600 });
    const mount = mintTurnMount({ socketPath, token, tokenFile });
    expect(mount.env).toEqual({
      FLOOT_MCP_SOCKET: socketPath,
      FLOOT_MCP_TOKEN_FILE: tokenFile,
      NODE_OPTIONS: "",
    });
    expect(JSON.stringify(mount)).not.toContain(token);
    expect(takeTokenFile(tokenFile)).toBe(token);
    // Removed once read: whatever starts later (a tool the agent runs) finds nothing there.
    expect(existsSync(tokenFile)).toBe(false);
    expect(takeTokenFile(tokenFile)).toBeUndefined();
  });

  test("the default shim is this package's dist/shim.js", () => {
    const script = defaultShimScriptPath();
    expect(script.endsWith("/packages/control-channel/dist/shim.js")).toBe(true);
    expect(defaultShimCommand()).toEqual({ node: process.execPath, script });
  });

  test("takes another shim command", () => {
    const mount = mintTurnMount({
      socketPath,
      token: mintToken(randomBytes),
      shimCommand: { node: "/opt/node/bin/node", script: "/opt/floot/shim.js" },
    });
    expect(mount.command).toBe("/opt/node/bin/node");
    expect(mount.args).toEqual(["/opt/floot/shim.js"]);
  });

  test("refuses a bad socket path, token or shim command, naming the field", () => {
    const token = mintToken(randomBytes);
    expect(() => mintTurnMount({ socketPath: "bridges/g1/mcp.sock", token })).toThrow(/absolute/);
    expect(() => mintTurnMount({ socketPath: `/${"x".repeat(maxSocketPathBytes)}`, token })).toThrow(
      expect.objectContaining({ code: "socket_path_too_long" }),
    );
    expect(() => mintTurnMount({ socketPath, token: "short" })).toThrow(
      expect.objectContaining({ code: "invalid_token" }),
    );
    expect(() =>
      mintTurnMount({ socketPath, token, shimCommand: { node: "node", script: "/opt/shim.js" } }),
    ).toThrow(/shimCommand\.node/);
  });
});

describe("claudeMcpConfig and writeMcpConfigFile", () => {
  test("renders stdio servers and writes them 0600, atomically", async () => {
    const token = mintToken(randomBytes);
    const config = claudeMcpConfig({ floot: mintTurnMount({ socketPath, token }) });
    expect(config.mcpServers.floot).toMatchObject({
      type: "stdio",
      command: process.execPath,
      alwaysLoad: true,
    });

    const dir = await tempDir();
    const path = join(dir, "turn-1.mcp.json");
    await writeMcpConfigFile(path, config);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(path, "utf8"))).toEqual(config);
    expect(await readdir(dir)).toEqual(["turn-1.mcp.json"]);
  });
});

describe("codexMcpOverrides", () => {
  test("names the token in argv but carries it in the environment", () => {
    const token = mintToken(randomBytes);
    const mount = mintTurnMount({ socketPath, token });
    const overrides = codexMcpOverrides("floot", mount);
    expect(overrides.args).toEqual([
      "-c",
      `mcp_servers.floot.command=${JSON.stringify(process.execPath)}`,
      "-c",
      `mcp_servers.floot.args=${JSON.stringify([defaultShimScriptPath()])}`,
      "-c",
      'mcp_servers.floot.env_vars=["FLOOT_MCP_SOCKET","FLOOT_MCP_TOKEN"]',
      "-c",
      'mcp_servers.floot.env={"NODE_OPTIONS"=""}',
    ]);
    expect(overrides.args.join(" ")).not.toContain(token);
    expect(overrides.env).toEqual({ FLOOT_MCP_SOCKET: socketPath, FLOOT_MCP_TOKEN: token });
    expect(() => codexMcpOverrides("floot.x", mount)).toThrow(
      expect.objectContaining({ code: "invalid_server_name" }),
    );
  });
});
