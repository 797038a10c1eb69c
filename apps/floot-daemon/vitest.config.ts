import { bridgeworksProject } from "../../vitest.shared.js";

export default bridgeworksProject("floot-daemon", {
  // Contract tests run the real claude and codex through the built daemon, killed and restarted.
  testTimeout: 120_000,
  hookTimeout: 60_000,
  globalSetup: ["test/global-setup.ts"],
});
