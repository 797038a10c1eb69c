import { bridgeworksProject } from "../../vitest.shared.js";

export default bridgeworksProject("runtime");
