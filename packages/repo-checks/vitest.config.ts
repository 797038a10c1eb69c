import { bridgeworksProject } from "../../vitest.shared.js";

export default bridgeworksProject("repo-checks", {
  // The lockfile-digest tests run scripts/check-nix.sh (bash + node) several times.
  testTimeout: 20_000,
});
