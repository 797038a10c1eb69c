import { defineConfig } from "tsdown";

// One self-contained file: everything is bundled except better-sqlite3, whose native addon must be
// installed (it is the package's only runtime dependency).
export default defineConfig({
  entry: { bee: "src/bee.ts" },
  outDir: "bundle",
  format: "esm",
  platform: "node",
  target: "node20",
  fixedExtension: true,
  dts: false,
  sourcemap: false,
  clean: true,
  deps: {
    neverBundle: ["better-sqlite3"],
    alwaysBundle: [/^@bridgeworks\//, /^@modelcontextprotocol\//, /^zod/],
    onlyBundle: false,
  },
});
