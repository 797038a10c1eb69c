import { describe, expect, test } from "vitest";
import {
  PreToolUseHookInput,
  ToolAdmissionDraft,
  ToolGateAnswer,
  ToolGateRequest,
  toolGateInputPreviewChars,
} from "../src/tool-gate.js";
import { failedPaths } from "./issues.js";

describe("PreToolUseHookInput", () => {
  test("reads what claude 2.1.332 and codex 0.171 send, keeping keys of their own", () => {
    // Captured from the real binaries' PreToolUse command hooks (stdin), paths shortened.
    const claude = {
      session_id: "1ac6392d-24f8-41b2-bf4f-492361f94cab",
      transcript_path: "/h/.claude/projects/-ws/1ac6392d-24f8-41b2-bf4f-492361f94cab.jsonl",
      cwd: "/ws",
      prompt_id: "251d2a68-dc27-48d6-9385-cf561cd0531f",
      permission_mode: "dontAsk",
      hook_event_name: "PreToolUse",
      tool_name: "Bash",
      tool_input: { command: "echo ran >> /ws/marker.txt", description: "x" },
      tool_use_id: "toolu_gate1",
    };
    const codex = {
      session_id: "01a23177-dd91-7782-8cdc-9cc40cdebe8d",
      turn_id: "01a23177-de08-7b11-a640-261700dddb7e",
      transcript_path: "/h/.codex/sessions/rollout.jsonl",
      cwd: "/ws",
      hook_event_name: "PreToolUse",
      model: "gpt-5.1-codex",
      permission_mode: "bypassPermissions",
      tool_name: "Bash",
      tool_input: { command: "echo ran >> /ws/marker.txt" },
      tool_use_id: "call_gate1",
    };
    expect(PreToolUseHookInput.parse(claude)).toEqual(claude);
    expect(PreToolUseHookInput.parse(codex)).toEqual(codex);
    expect(failedPaths(PreToolUseHookInput, { ...claude, tool_use_id: "" })).toEqual(["tool_use_id"]);
    expect(failedPaths(PreToolUseHookInput, { ...claude, hook_event_name: "PostToolUse" })).toEqual([
      "hook_event_name",
    ]);
  });
});

describe("gate request and answer", () => {
  test("a request names the call and carries a bounded preview of its input", () => {
    const request = { type: "tool_gate", toolCallId: "toolu_1", toolName: "Bash", inputPreview: "{}" };
    expect(ToolGateRequest.parse(request)).toEqual(request);
    expect(
      failedPaths(ToolGateRequest, { ...request, inputPreview: "x".repeat(toolGateInputPreviewChars + 1) }),
    ).toEqual(["inputPreview"]);
    expect(failedPaths(ToolGateRequest, { ...request, extra: 1 })).toEqual([""]);
    expect(failedPaths(ToolAdmissionDraft, { toolCallId: "t", toolName: "Bash", inputPreview: "" })).toEqual([
      "effectFree",
    ]);
  });

  test("a denial must say why", () => {
    expect(ToolGateAnswer.parse({ decision: "allow" })).toEqual({ decision: "allow" });
    expect(failedPaths(ToolGateAnswer, { decision: "deny", reason: "" })).toEqual(["reason"]);
    expect(failedPaths(ToolGateAnswer, { decision: "maybe" })).toEqual(["decision"]);
  });
});
