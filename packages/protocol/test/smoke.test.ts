import { expect, test } from "vitest";
import * as protocol from "../src/index.js";

test("loads", () => {
  expect(protocol).toBeTypeOf("object");
});
