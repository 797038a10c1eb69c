import {
  type ToolAdmittedEvent,
  type ToolStartedEvent,
  toolGateInputPreviewChars,
} from "@bridgeworks/protocol";
import { describe, expect, test } from "vitest";
import { claudeEditDiffs, parseCodexPatch, patchInPreview, replacementLines } from "../ui/src/edit-diff.js";
import { FileEdits } from "../ui/src/file-edits.js";

// The diff model of the page's file-edit view. The Codex events below were journaled by the daemon
// for real codex 0.171.0 on the model double (an exec_command of `apply_patch <<'EOF' … EOF` in a
// workspace holding notes.txt), copied verbatim apart from the temp dir's name.
const workspace = "/tmp/bridgeworks-e2e-X/state/sessions/S/workspace";
const patch =
  "*** Begin Patch\n*** Update File: notes.txt\n@@\n-alpha\n+ALPHA\n beta\n*** Add File: fresh.txt\n+new line one\n+new line two\n*** End Patch\n";
const codexAdmitted: ToolAdmittedEvent = {
  type: "tool.admitted",
  toolId: "call_patch",
  name: "Bash",
  inputPreview: JSON.stringify({ command: `apply_patch <<'EOF'\n${patch}EOF` }),
};
const codexStarted: ToolStartedEvent = {
  type: "tool.started",
  toolId: "item_3",
  name: "file_change",
  input: {
    changes: [
      { path: `${workspace}/fresh.txt`, kind: "add" },
      { path: `${workspace}/notes.txt`, kind: "update" },
    ],
  },
};

describe("Claude Code's edit tools", () => {
  test("Edit: the replaced lines with context, no line numbers (a fragment, not the file)", () => {
    const [diff] = claudeEditDiffs("Edit", {
      file_path: "/w/a.ts",
      old_string: "one\ntwo\nthree",
      new_string: "one\nTWO\nthree\nfour",
    })!;
    expect(diff).toEqual({
      path: "/w/a.ts",
      kind: "edit",
      added: 2,
      removed: 1,
      lines: [
        { kind: "context", text: "one" },
        { kind: "remove", text: "two" },
        { kind: "add", text: "TWO" },
        { kind: "context", text: "three" },
        { kind: "add", text: "four" },
      ],
    });
  });

  test("Edit with replace_all says so", () => {
    const [diff] = claudeEditDiffs("Edit", {
      file_path: "/w/a.ts",
      old_string: "x",
      new_string: "y",
      replace_all: true,
    })!;
    expect(diff?.note).toBe("Every occurrence was replaced.");
  });

  test("MultiEdit: each edit under its own heading", () => {
    const [diff] = claudeEditDiffs("MultiEdit", {
      file_path: "/w/b.md",
      edits: [
        { old_string: "a", new_string: "b" },
        { old_string: "c", new_string: "" },
      ],
    })!;
    expect(diff?.lines).toEqual([
      { kind: "hunk", text: "edit 1 of 2" },
      { kind: "remove", text: "a" },
      { kind: "add", text: "b" },
      { kind: "hunk", text: "edit 2 of 2" },
      { kind: "remove", text: "c" },
    ]);
    expect([diff?.added, diff?.removed]).toEqual([1, 2]);
  });

  test("Write: the whole content as added lines", () => {
    expect(claudeEditDiffs("Write", { file_path: "/w/new.txt", content: "a\nb\n" })).toEqual([
      {
        path: "/w/new.txt",
        kind: "write",
        added: 2,
        removed: 0,
        lines: [
          { kind: "add", text: "a" },
          { kind: "add", text: "b" },
        ],
      },
    ]);
  });

  test("other tools and inputs of another shape are no edit", () => {
    expect(claudeEditDiffs("Bash", { command: "ls" })).toBeUndefined();
    expect(claudeEditDiffs("Edit", { file_path: "/w/a", old_string: 1, new_string: "x" })).toBeUndefined();
    expect(claudeEditDiffs("Write", { path: "/w/a", content: "x" })).toBeUndefined();
    expect(claudeEditDiffs("Edit", "not an object")).toBeUndefined();
  });

  test("far-apart changes in one fragment are separate hunks", () => {
    const before = Array.from({ length: 20 }, (_, index) => `line ${index}`).join("\n");
    const after = before.replace("line 1\n", "LINE 1\n").replace("line 18", "LINE 18");
    const lines = replacementLines(before, after);
    expect(lines.filter((line) => line.kind === "hunk")).toEqual([{ kind: "hunk", text: "⋯" }]);
    expect(lines.filter((line) => line.kind === "add").map((line) => line.text)).toEqual([
      "LINE 1",
      "LINE 18",
    ]);
  });
});

describe("Codex patches", () => {
  test("the patch format parses into one diff per file", () => {
    expect(parseCodexPatch(patch)).toEqual([
      {
        path: "notes.txt",
        kind: "update",
        added: 1,
        removed: 1,
        lines: [
          { kind: "hunk", text: "@@" },
          { kind: "remove", text: "alpha" },
          { kind: "add", text: "ALPHA" },
          { kind: "context", text: "beta" },
        ],
      },
      {
        path: "fresh.txt",
        kind: "add",
        added: 2,
        removed: 0,
        lines: [
          { kind: "add", text: "new line one" },
          { kind: "add", text: "new line two" },
        ],
      },
    ]);
    expect(
      parseCodexPatch(
        "*** Begin Patch\n*** Delete File: old.txt\n*** Update File: a.py\n*** Move to: b.py\n@@ def f():\n-    return 1\n+    return 2\n*** End Patch",
      ),
    ).toMatchObject([
      { path: "old.txt", kind: "delete", lines: [] },
      { path: "a.py", kind: "update", movedTo: "b.py", added: 1, removed: 1 },
    ]);
    expect(parseCodexPatch("no patch here")).toBeUndefined();
  });

  test("the journaled file_change takes the patch its admission carried", () => {
    const edits = new FileEdits();
    edits.admitted(codexAdmitted);
    const diffs = edits.diffsOf(codexStarted);
    expect(diffs?.map((diff) => [diff.path, diff.kind, diff.added, diff.removed])).toEqual([
      [`${workspace}/fresh.txt`, "add", 2, 0],
      [`${workspace}/notes.txt`, "update", 1, 1],
    ]);
    // Taken once: a second file_change of the same paths has no text to show.
    expect(edits.diffsOf(codexStarted)?.map((diff) => diff.note)).toEqual([
      "Codex reported the file, not its patch.",
      "Codex reported the file, not its patch.",
    ]);
  });

  test("a file_change whose patch was not admitted (or names other files) lists its files", () => {
    const edits = new FileEdits();
    edits.admitted({ inputPreview: JSON.stringify({ command: patch.replaceAll("notes.txt", "other.txt") }) });
    const diffs = edits.diffsOf(codexStarted);
    expect(diffs?.map((diff) => [diff.path, diff.lines.length])).toEqual([
      [`${workspace}/fresh.txt`, 0],
      [`${workspace}/notes.txt`, 0],
    ]);
    expect(edits.diffsOf({ name: "file_change", input: { changes: "x" } })).toBeUndefined();
    expect(edits.diffsOf({ name: "command_execution", input: { command: "ls" } })).toBeUndefined();
  });

  test("a preview cut by the gate still shows the patch up to the cut, and says so", () => {
    const long = `*** Begin Patch\n*** Add File: big.txt\n${Array.from({ length: 400 }, (_, index) => `+line "${index}" \\ é`).join("\n")}\n*** End Patch\n`;
    const preview = JSON.stringify({ command: `apply_patch <<'EOF'\n${long}EOF` }).slice(
      0,
      toolGateInputPreviewChars,
    );
    const found = patchInPreview(preview);
    expect(found?.cut).toBe(true);
    expect(long.startsWith(found!.text)).toBe(true);
    const [file] = parseCodexPatch(found!.text, found!.cut)!;
    expect(file?.path).toBe("big.txt");
    expect(file?.added).toBeGreaterThan(50);
    expect(file?.note).toMatch(/cut here/);
    // Every cut position decodes (a cut inside an escape drops only that escape).
    for (let end = preview.indexOf("***"); end < 300; end += 1) {
      expect(long.startsWith(patchInPreview(preview.slice(0, end))?.text ?? "")).toBe(true);
    }
  });

  test("a whole preview is not cut", () => {
    expect(patchInPreview(codexAdmitted.inputPreview)).toEqual({ text: `${patch}EOF`, cut: false });
  });
});
