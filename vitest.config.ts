import { defineConfig } from "vitest/config";

// One run covers every package and app: each has its own vitest.config.ts project.
export default defineConfig({
  test: {
    projects: ["packages/*", "apps/*"],
  },
});
