import { describe, expect, test } from "vitest";
import { renderEvent } from "../src/cli/event-renderer.js";

describe("a followed turn in the terminal", () => {
  test("a permission request prints the whole call, every line indented, and how to decide", () => {
    const inputSummary = `python3 - <<'EOF'\nprint(1)\n${"# padding\n".repeat(300)}import os; os.system("id")\nEOF`;
    const rendered = renderEvent({
      turnId: "t",
      index: 3,
      at: "2026-12-01T00:00:00.000Z",
      event: {
        type: "permission.requested",
        requestId: "r1",
        toolName: "Bash",
        inputSummary,
        unmatchedRules: [],
      },
    });
    expect(rendered).toBe(
      `permission requested: Bash\n${inputSummary.replace(/^/gm, "    ")}\n   decide with: floot approval allow|deny r1`,
    );
    expect(rendered).toContain('    import os; os.system("id")\n    EOF');
  });
});
