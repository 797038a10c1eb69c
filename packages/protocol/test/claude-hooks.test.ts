import { describe, expect, test } from "vitest";
import {
  SessionEndHookInput,
  SessionEventToolInput,
  SessionHookInput,
  SessionStartHookInput,
  SessionStartHookOutput,
} from "../src/index.js";
import { failedPaths } from "./issues.js";

// Payloads as Claude Code 2.1.332 sent them (copied from its hook input). In the repository, the real
// interactive claude sends its /clear payload to `bee hook session-start`, which parses it with this
// schema: apps/bee-bridge/test/claude-tmux.test.ts, "only the command-hook fallback".
const startup = {
  session_id: "303f8a52-1a51-4b0e-9d1e-2f3b8c0d9e11",
  transcript_path: "/root/.claude/projects/-tmp-w/303f8a52-1a51-4b0e-9d1e-2f3b8c0d9e11.jsonl",
  cwd: "/tmp/w",
  hook_event_name: "SessionStart",
  source: "startup",
  model: "claude-opus-5-5",
};
const clear = {
  session_id: "8c0b7f7e-0c9a-4f37-a4b2-7d7a1e6c5b10",
  transcript_path: "/root/.claude/projects/-tmp-w/8c0b7f7e-0c9a-4f37-a4b2-7d7a1e6c5b10.jsonl",
  cwd: "/tmp/w",
  hook_event_name: "SessionStart",
  source: "clear",
};

describe("Claude Code hook input", () => {
  test("accepts the measured startup and /clear payloads (the latter has no model)", () => {
    expect(SessionStartHookInput.parse(startup).model).toBe("claude-opus-5-5");
    expect(SessionStartHookInput.parse(clear).model).toBeUndefined();
  });

  test("keeps fields Claude Code adds later", () => {
    expect(SessionStartHookInput.parse({ ...clear, future_field: 1 })).toMatchObject({ future_field: 1 });
  });

  test("tells SessionStart from SessionEnd", () => {
    const end = SessionHookInput.parse({ ...clear, hook_event_name: "SessionEnd", reason: "clear" });
    expect(end.hook_event_name).toBe("SessionEnd");
    expect(SessionEndHookInput.safeParse({ ...clear, hook_event_name: "SessionEnd" }).success).toBe(false);
  });

  test.each([
    [{ ...clear, source: "reboot" }, "source"],
    [{ ...clear, session_id: "" }, "session_id"],
    [{ ...clear, cwd: 7 }, "cwd"],
  ])("refuses %j naming %s", (value, field) => {
    expect(failedPaths(SessionStartHookInput, value)).toEqual([field]);
  });
});

describe("SessionStart output and the bee_session_event input", () => {
  test("hook output carries additional context", () => {
    const output = {
      hookSpecificOutput: {
        hookEventName: "SessionStart",
        additionalContext: "bee identity: agent:a#00000000",
      },
    };
    expect(SessionStartHookOutput.parse(output)).toEqual(output);
    expect(
      failedPaths(SessionStartHookOutput, { hookSpecificOutput: { hookEventName: "SessionEnd" } }),
    ).toContain("hookSpecificOutput.hookEventName");
  });

  test("the tool input names a wrong source", () => {
    expect(SessionEventToolInput.parse({ session_id: "s", source: "clear" }).source).toBe("clear");
    expect(failedPaths(SessionEventToolInput, { session_id: "s", source: "nope" })).toEqual(["source"]);
  });
});
