import { bridgeworksProject } from "../../vitest.shared.js";

// Real clients take seconds per turn; a hang must still fail.
export default bridgeworksProject("test-harness", { testTimeout: 120_000, hookTimeout: 60_000 });
