import { defineConfig } from "tsdown";

// `pnpm torture`: the crash torture harness (test code, never published) as one runnable file. The
// workspace packages stay external and load from their built dist/, as the daemon's tests use them.
export default defineConfig({
  entry: { torture: "test/torture/main.ts" },
  outDir: "torture-bundle",
  format: "esm",
  platform: "node",
  target: "node20",
  dts: false,
  clean: true,
  outExtensions: () => ({ js: ".mjs" }),
  deps: { neverBundle: [/^@bridgeworks\//, /^@modelcontextprotocol\//, /^zod/, "better-sqlite3"] },
});
