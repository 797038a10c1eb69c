import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { expect, test } from "vitest";
import { bundlePath } from "./daemon-harness.js";

// What a process loads before it runs a line of its own: the static imports of bundle/floot.mjs,
// followed through its chunks. The MCP SDK and ajv (half the bundle's bytes) are loaded with `import()`
// by the daemon when a turn's CLI connects, and the daemon itself only by `floot daemon`.

const bundleDir = dirname(bundlePath);
const staticImport = /^import\s[^;]*?from\s*"(\.\/[^"]+)";?$|^import\s*"(\.\/[^"]+)";?$/gm;
const dynamicImport = /import\("(\.\/[^"]+)"\)/g;

/** The sources (rolldown's `//#region` names) of `file` and every chunk it imports statically. */
function staticClosure(file: string): { files: Set<string>; sources: string[]; dynamic: Set<string> } {
  const files = new Set<string>();
  const sources: string[] = [];
  const dynamic = new Set<string>();
  const visit = (name: string) => {
    if (files.has(name)) return;
    files.add(name);
    const text = readFileSync(join(bundleDir, name), "utf8");
    for (const match of text.matchAll(/^\/\/#region (.+)$/gm)) sources.push(match[1] ?? "");
    for (const match of text.matchAll(dynamicImport)) dynamic.add((match[1] ?? "").slice(2));
    for (const match of text.matchAll(staticImport)) visit((match[1] ?? match[2] ?? "").slice(2));
  };
  visit(file);
  return { files, sources, dynamic };
}

const mcpSource = /node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?(@modelcontextprotocol|ajv)\//;

test("every command starts without the MCP SDK, ajv or the daemon", () => {
  const start = staticClosure("floot.mjs");
  expect(start.sources.some((source) => source.includes("src/cli/program.ts"))).toBe(true);
  expect(start.sources.filter((source) => mcpSource.test(source))).toEqual([]);
  expect(start.sources.filter((source) => source.endsWith("src/daemon/daemon.ts"))).toEqual([]);
  expect(start.dynamic.size).toBeGreaterThan(0);
});

test("the daemon starts without the MCP SDK or ajv; its MCP server loads them later", () => {
  const start = staticClosure("floot.mjs");
  const daemonChunk = [...start.dynamic].find((name) =>
    staticClosure(name).sources.some((source) => source.endsWith("src/daemon/daemon.ts")),
  );
  expect(daemonChunk).toBeDefined();
  const daemon = staticClosure(daemonChunk ?? "");
  expect(daemon.sources.filter((source) => mcpSource.test(source))).toEqual([]);
  const mcpServer = [...daemon.files, ...start.files]
    .flatMap((name) => [...staticClosure(name).dynamic])
    .map((name) => staticClosure(name).sources);
  expect(
    mcpServer.some((sources) => sources.some((source) => source.endsWith("src/daemon/mcp-tools.ts"))),
  ).toBe(true);
  expect(mcpServer.some((sources) => sources.some((source) => mcpSource.test(source)))).toBe(true);
});
