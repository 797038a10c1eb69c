import { bridgeworksProject } from "../../vitest.shared.js";

export default bridgeworksProject("backend-adapters", { globalSetup: ["test/global-setup.ts"] });
