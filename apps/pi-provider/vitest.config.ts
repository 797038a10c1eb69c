import { bridgeworksProject } from "../../vitest.shared.js";

// Real pi and Claude Code take seconds per turn; a hang must still fail.
export default bridgeworksProject("pi-provider", {
  testTimeout: 120_000,
  hookTimeout: 60_000,
  globalSetup: ["test/global-setup.ts"],
});
