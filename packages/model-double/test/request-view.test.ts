import { describe, expect, test } from "vitest";
import { toolResult, toolResultText } from "../src/index.js";

describe("toolResultText", () => {
  test("reads an anthropic tool_result by id, string or text blocks", () => {
    const body = {
      messages: [
        { role: "user", content: "go" },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_a", content: "plain output" },
            {
              type: "tool_result",
              tool_use_id: "toolu_b",
              content: [{ type: "text", text: "block output" }],
            },
          ],
        },
      ],
    };
    expect(toolResultText("anthropic", body, "toolu_a")).toBe("plain output");
    expect(toolResultText("anthropic", body, "toolu_b")).toBe("block output");
    expect(toolResultText("anthropic", body, "toolu_c")).toBeUndefined();
  });

  test("reads an openai function_call_output by call id", () => {
    const body = {
      input: [
        { type: "function_call", call_id: "call_1", name: "exec_command", arguments: "{}" },
        { type: "function_call_output", call_id: "call_1", output: "exit 0: hi" },
      ],
    };
    expect(toolResultText("openai", body, "call_1")).toBe("exit 0: hi");
    expect(toolResultText("openai", body, "call_2")).toBeUndefined();
  });
});

describe("toolResult", () => {
  test("carries anthropic's is_error; an openai output is never flagged", () => {
    const anthropic = {
      messages: [
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_ok", content: [{ type: "text", text: "fine" }] },
            { type: "tool_result", tool_use_id: "toolu_bad", content: "No such tool", is_error: true },
          ],
        },
      ],
    };
    expect(toolResult("anthropic", anthropic, "toolu_ok")).toEqual({ text: "fine", isError: false });
    expect(toolResult("anthropic", anthropic, "toolu_bad")).toEqual({ text: "No such tool", isError: true });
    expect(toolResult("anthropic", anthropic, "toolu_none")).toBeUndefined();
    const openai = { input: [{ type: "function_call_output", call_id: "call_1", output: "exit 1" }] };
    expect(toolResult("openai", openai, "call_1")).toEqual({ text: "exit 1", isError: false });
  });
});
