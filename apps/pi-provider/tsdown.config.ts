import { defineConfig } from "tsdown";

// Pi loads one file. Everything pure-JS is bundled into it; the Agent SDK stays a real dependency
// because it finds its native Claude Code binary through its own optional dependencies.
export default defineConfig({
  entry: { extension: "src/index.ts" },
  outDir: "bundle",
  format: "esm",
  platform: "node",
  target: "node20",
  outExtensions: () => ({ js: ".mjs" }),
  dts: false,
  sourcemap: false,
  clean: true,
  // Workspace packages are bundled from their TypeScript sources, so the bundle never picks up a
  // stale dist of a package this one depends on.
  inputOptions: { resolve: { conditionNames: ["@bridgeworks/source", "import", "node", "default"] } },
  deps: {
    neverBundle: ["@anthropic-ai/claude-agent-sdk"],
    alwaysBundle: [/^@bridgeworks\//],
    onlyBundle: false,
  },
});
