import { toolResultText, toolTurnScript } from "@bridgeworks/model-double";
import { afterEach, describe, expect, test } from "vitest";
import { doubledEnvironments, parseJsonLines, withTimeout } from "../src/index.js";

const turnTimeoutMs = 90_000;
const doubled = doubledEnvironments();
afterEach(() => doubled.dispose());

describe("claude -p against the model double", () => {
  test("completes a text turn", async () => {
    const { double, environment } = await doubled.start({
      steps: [{ response: { events: [{ type: "text", text: "HELLO FROM THE DOUBLE" }] } }],
    });
    const claude = environment.spawn("claude", [
      "-p",
      "say hello",
      "--output-format",
      "stream-json",
      "--verbose",
    ]);
    const exit = await withTimeout(claude.exited, turnTimeoutMs, () => claude.stderr());

    const result = parseJsonLines(claude.stdout()).find((line) => line.type === "result");
    expect(exit.code, claude.stderr()).toBe(0);
    expect(result).toMatchObject({ is_error: false, result: "HELLO FROM THE DOUBLE" });
    expect(double.requests.some((request) => request.path.startsWith("/v1/messages"))).toBe(true);
  });

  test("completes a Bash tool_use turn and sends the command's output back", async () => {
    const { double, environment } = await doubled.start(
      toolTurnScript(
        [
          {
            id: "toolu_harness_bash",
            nameFrom: { equals: "Bash" },
            input: { command: "printf 'HARNESS_%s' BASH_OK", description: "print a marker" },
          },
        ],
        "the command ran",
      ),
    );
    const claude = environment.spawn("claude", [
      "-p",
      "run the marker command",
      "--output-format",
      "stream-json",
      "--verbose",
      "--allowedTools",
      "Bash",
    ]);
    const exit = await withTimeout(claude.exited, turnTimeoutMs, () => claude.stderr());

    expect(exit.code, claude.stderr()).toBe(0);
    const followUp = double.requests.find(
      (request) => toolResultText("anthropic", request.body, "toolu_harness_bash") !== undefined,
    );
    expect(toolResultText("anthropic", followUp?.body, "toolu_harness_bash")).toContain("HARNESS_BASH_OK");
    const result = parseJsonLines(claude.stdout()).find((line) => line.type === "result");
    expect(result).toMatchObject({ is_error: false, result: "the command ran" });
  });
});

describe("codex exec --json against the model double", () => {
  test("completes a text turn", async () => {
    const { environment } = await doubled.start(
      {
        steps: [{ response: { events: [{ type: "text", text: "CODEX TEXT OK" }] } }],
      },
      { model: "gpt-5.1-codex" },
    );
    const codex = environment.spawn("codex", ["exec", "--json", "--skip-git-repo-check", "say hello"]);
    const exit = await withTimeout(codex.exited, turnTimeoutMs, () => codex.stderr());

    expect(exit.code, codex.stderr()).toBe(0);
    const events = parseJsonLines(codex.stdout());
    const messages = events.filter(
      (event) =>
        event.type === "item.completed" && (event.item as { type?: string }).type === "agent_message",
    );
    expect(messages.map((event) => (event.item as { text: string }).text)).toEqual(["CODEX TEXT OK"]);
    expect(events.at(-1)).toMatchObject({ type: "turn.completed" });
  });

  test("completes an exec_command function-call turn", async () => {
    const { double, environment } = await doubled.start(
      toolTurnScript(
        [
          {
            id: "call_harness_exec",
            nameFrom: { equals: "exec_command" },
            input: { cmd: "printf 'CODEX_%s' EXEC_OK" },
          },
        ],
        "exec finished",
      ),
      { model: "gpt-5.1-codex" },
    );
    const codex = environment.spawn("codex", [
      "exec",
      "--json",
      "--skip-git-repo-check",
      "run the marker command",
    ]);
    const exit = await withTimeout(codex.exited, turnTimeoutMs, () => codex.stderr());

    expect(exit.code, codex.stderr()).toBe(0);
    const followUp = double.requests.find(
      (request) => toolResultText("openai", request.body, "call_harness_exec") !== undefined,
    );
    expect(toolResultText("openai", followUp?.body, "call_harness_exec")).toContain("CODEX_EXEC_OK");
    const events = parseJsonLines(codex.stdout());
    expect(events.at(-1)).toMatchObject({ type: "turn.completed" });
  });
});

describe("pi -p against the model double", () => {
  test("completes a turn through models.json", async () => {
    const { double, environment } = await doubled.start(
      {
        steps: [{ response: { events: [{ type: "text", text: "PI TURN OK" }] } }],
      },
      { model: "claude-double" },
    );
    const pi = environment.spawn("pi", [
      "--no-session",
      "--provider",
      "double",
      "--model",
      "claude-double",
      "-p",
      "hi",
    ]);
    const exit = await withTimeout(pi.exited, turnTimeoutMs, () => pi.stderr());

    expect(exit.code, pi.stderr()).toBe(0);
    expect(pi.stdout().trim()).toBe("PI TURN OK");
    const request = double.requests.find((entry) => entry.path.startsWith("/v1/messages"));
    expect(request?.headers["x-api-key"]).toBe(environment.env.DOUBLE_API_KEY);
  });
});
