import { describeBoardContract } from "../src/testing/index.js";
import { postgresHarness } from "./postgres-harness.js";

describeBoardContract("postgres", () => postgresHarness());
