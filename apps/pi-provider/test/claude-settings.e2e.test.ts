import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { textReply } from "@bridgeworks/model-double";
import { afterEach, describe, expect, inject, test } from "vitest";
import { lastAssistant, modelRequests, piLines, textOf } from "./support/pi-driver.js";
import { Scenario } from "./support/scenario.js";

let scenario: Scenario | undefined;
afterEach(async () => {
  await scenario?.dispose();
  scenario = undefined;
});

describe.each(piLines(inject("node24")))("$name: the Claude Code the provider runs", (line) => {
  test("runs without its project-instructions plugin; the project's AGENTS.md reaches the model once, in Pi's system prompt", async () => {
    scenario = await Scenario.start({ steps: [textReply("[hello]", "HELLO")] });
    const marker = "MARKER-7731: answer in French";
    writeFileSync(join(scenario.environment.workspace, "AGENTS.md"), `${marker}\n`);
    // Claude Code's own debug log (on with DEBUG_SDK, read in the 2.1.332 binary), one file per session.
    const logs = join(scenario.environment.root, "claude-debug");
    mkdirSync(logs);
    const pi = scenario.pi(line, { env: { DEBUG_SDK: "1", CLAUDE_CODE_DEBUG_LOGS_DIR: logs } });
    expect(textOf(lastAssistant(await scenario.turn(pi, "[hello] there")))).toBe("HELLO");

    const [request] = modelRequests(scenario.double);
    expect(JSON.stringify(request!.body).split(marker)).toHaveLength(2);
    const log = readdirSync(logs)
      .map((name) => readFileSync(join(logs, name), "utf8"))
      .join("\n");
    // The log names the built-in plugins it registers (so the absence below means something).
    expect(log).toContain("plugin.register: cc-plugin-privacy");
    expect(log).not.toContain("plugin.register: cc-plugin-agents-md");
    expect(log).not.toMatch(/hooks module cc-plugin-agents-md/);
    scenario.expectQuiescent();
  });
});
