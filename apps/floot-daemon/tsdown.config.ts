import { defineConfig, type UserConfig } from "tsdown";

// Self-contained files: the CLI and daemon, its CLI spawner, the MCP shim and the gate hook the CLIs launch (each built
// apart so it shares no chunk and starts fast). Workspace packages and their dependencies are bundled;
// better-sqlite3's native addon stays in its package, a runtime dependency.
const common: UserConfig = {
  outDir: "bundle",
  format: "esm",
  platform: "node",
  target: "node20",
  dts: false,
  outExtensions: () => ({ js: ".mjs" }),
  deps: {
    onlyBundle: false,
    // better-sqlite3's JavaScript is inlined too (loading it as CommonJS walks a dozen files at every
    // start); its addon stays in the installed package, where openSqlite finds it by path.
    alwaysBundle: [
      /^@bridgeworks\//,
      /^@modelcontextprotocol\//,
      /^zod/,
      "better-sqlite3",
      "bindings",
      "file-uri-to-path",
    ],
  },
  // Bundle the workspace packages from their sources, so the bundle never depends on stale dist/ builds.
  inputOptions: { resolve: { conditionNames: ["@bridgeworks/source", "node", "import", "default"] } },
  // Building a zod schema has no effect but the schema: one nothing reads is left out, not built at
  // every start (protocol holds many that floot never parses).
  treeshake: { manualPureFunctions: ["z"] },
};
const effectFreeModules = { ...common.treeshake, moduleSideEffects: false };

export default defineConfig([
  // The CLI and daemon load parts with `import()` (the daemon when `floot daemon` runs, the MCP server
  // when a turn's CLI connects): they become chunks beside floot.mjs (`floot-*.mjs`), and whatever
  // installs floot.mjs installs all of bundle/. The MCP SDK and what only it uses (ajv) form one chunk of
  // their own, so no shared chunk the start loads pulls them in.
  {
    ...common,
    entry: { floot: "src/main.ts" },
    clean: true,
    outputOptions: {
      chunkFileNames: "floot-[name]-[hash].mjs",
      codeSplitting: {
        // A group takes the modules it needs with it, unless a group of higher priority has them: zod,
        // which the daemon and CLI use too, stays out of the SDK's chunk.
        groups: [
          {
            name: "zod",
            test: /node_modules[\\/](\.pnpm[\\/][^\\/]+[\\/]node_modules[\\/])?zod[\\/]/,
            priority: 2,
          },
          {
            name: "mcp-sdk",
            priority: 1,
            test: /node_modules[\\/](\.pnpm[\\/][^\\/]+[\\/]node_modules[\\/])?(@modelcontextprotocol|ajv|ajv-formats|fast-uri|fast-deep-equal|json-schema-traverse)[\\/]/,
          },
        ],
      },
    },
  },
  // The shim uses node builtins only; nothing else it could reach runs code on import.
  { ...common, entry: { shim: "src/shim-main.ts" }, clean: false, treeshake: effectFreeModules },
  // The daemon's CLI spawner (backend-adapters' `runCliSpawner`): one per daemon, small, so its forks are cheap.
  {
    ...common,
    entry: { spawner: "src/spawner-main.ts" },
    clean: false,
    treeshake: effectFreeModules,
  },
  // The CLI keeper (backend-adapters' keeper-main.ts): started once, outlives the daemon, holds its CLIs.
  {
    ...common,
    entry: { keeper: "../../packages/backend-adapters/src/keeper-main.ts" },
    clean: false,
    treeshake: effectFreeModules,
  },
  // The pre-tool gate hook each turn's CLI runs before every tool call: started once per call.
  {
    ...common,
    entry: { "gate-hook": "src/gate-hook-main.ts" },
    clean: false,
    treeshake: effectFreeModules,
  },
  // The web UI: one browser script (types only from @bridgeworks/protocol, no runtime dependency), its
  // page and stylesheet, served by the daemon from `bundle/ui/`.
  {
    entry: { app: "ui/src/main.ts" },
    outDir: "bundle/ui",
    format: "esm",
    platform: "browser",
    target: "es2022",
    dts: false,
    minify: true,
    clean: false,
    outExtensions: () => ({ js: ".js" }),
    copy: ["ui/index.html", "ui/style.css"],
  },
]);
