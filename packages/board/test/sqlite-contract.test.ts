import { describeBoardContract } from "../src/testing/index.js";
import { sqliteHarness } from "./sqlite-harness.js";

describeBoardContract("sqlite", async () => sqliteHarness());
