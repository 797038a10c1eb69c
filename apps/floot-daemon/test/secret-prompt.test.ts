import { PassThrough } from "node:stream";
import { describe, expect, test } from "vitest";
import { PromptCancelled, readSecret } from "../src/cli/secret-prompt.js";

/** stdin as a terminal in raw mode: readline's key decoder is the real one, the keys are what a terminal sends. */
function terminal() {
  const stdin = Object.assign(new PassThrough(), {
    isTTY: true,
    rawModes: [] as boolean[],
    setRawMode(raw: boolean) {
      stdin.rawModes.push(raw);
      return stdin;
    },
  });
  const stderr = new PassThrough();
  const shown: string[] = [];
  stderr.on("data", (chunk: Buffer) => shown.push(chunk.toString()));
  return { stdin, stderr, shown };
}

async function typeKeys(keys: string[]) {
  const { stdin, stderr, shown } = terminal();
  const answer = readSecret(stdin, stderr);
  // The answer may settle (Ctrl-C rejects) while keys are still being typed; the test awaits it after.
  answer.catch(() => {});
  for (const key of keys) {
    stdin.write(key);
    await new Promise((resolve) => setImmediate(resolve));
  }
  return { answer, stdin, shown };
}

describe("the hidden secret prompt", () => {
  test("arrow keys and other escape sequences never become part of the secret", async () => {
    const { answer, stdin, shown } = await typeKeys([
      "se",
      "\u001b[D", // left
      "cr",
      "\u001b[A", // up
      "\u001b[1;5C", // ctrl+right
      "\u001bOH", // home
      "e\u001b[3~", // delete
      "t",
      "\r",
    ]);
    expect(await answer).toBe("secret");
    expect(stdin.rawModes).toEqual([true, false]);
    expect(shown.join("")).not.toContain("secret\n");
  });

  test("backspace deletes; pasted text arrives whole; Ctrl-D ends", async () => {
    const { answer } = await typeKeys(["pa", "ss", "\u007f", "\u007fss-wörd", "\u0004"]);
    expect(await answer).toBe("pass-wörd");
  });

  test("Ctrl-C cancels and leaves raw mode", async () => {
    const { answer, stdin } = await typeKeys(["abc", "\u0003"]);
    await expect(answer).rejects.toBeInstanceOf(PromptCancelled);
    expect(stdin.rawModes).toEqual([true, false]);
  });

  test("piped stdin is read whole, one trailing newline dropped", async () => {
    const stdin = new PassThrough();
    const answer = readSecret(stdin, new PassThrough());
    stdin.end("token-with-\u001b[D-bytes\n");
    expect(await answer).toBe("token-with-\u001b[D-bytes");
  });
});
