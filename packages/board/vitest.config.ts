import { bridgeworksProject } from "../../vitest.shared.js";

export default bridgeworksProject("board", {
  globalSetup: ["test/global-setup.ts", "test/postgres-global-setup.ts"],
  // Tests that start board processes spend most of this starting node; a missed wake-up fails by timeout.
  testTimeout: 20_000,
  hookTimeout: 20_000,
});
