import { bridgeworksProject } from "../../vitest.shared.js";

export default bridgeworksProject("bee-bridge", {
  globalSetup: ["test/global-setup.ts", "test/postgres-global-setup.ts"],
  // End-to-end tests start the real claude and tmux; a missed wake-up or hook fails by timeout.
  testTimeout: 120_000,
  hookTimeout: 60_000,
});
