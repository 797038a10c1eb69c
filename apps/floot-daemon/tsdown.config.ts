import { defineConfig, type UserConfig } from "tsdown";

// Self-contained files: the CLI and daemon, the MCP shim and the gate hook the CLIs launch (each built
// apart so it shares no chunk and starts fast). Workspace packages and their dependencies are bundled;
// better-sqlite3 is a native addon and stays a runtime dependency.
const common: UserConfig = {
  outDir: "bundle",
  format: "esm",
  platform: "node",
  target: "node20",
  dts: false,
  outExtensions: () => ({ js: ".mjs" }),
  deps: {
    onlyBundle: false,
    alwaysBundle: [/^@bridgeworks\//, /^@modelcontextprotocol\//, /^zod/],
    neverBundle: ["better-sqlite3"],
  },
  // Bundle the workspace packages from their sources, so the bundle never depends on stale dist/ builds.
  inputOptions: { resolve: { conditionNames: ["@bridgeworks/source", "node", "import", "default"] } },
};

export default defineConfig([
  { ...common, entry: { floot: "src/main.ts" }, clean: true },
  // The shim uses node builtins only; nothing else it could reach runs code on import.
  { ...common, entry: { shim: "src/shim-main.ts" }, clean: false, treeshake: { moduleSideEffects: false } },
  // The pre-tool gate hook each turn's CLI runs before every tool call: started once per call.
  {
    ...common,
    entry: { "gate-hook": "src/gate-hook-main.ts" },
    clean: false,
    treeshake: { moduleSideEffects: false },
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
