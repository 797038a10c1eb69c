import { emitKeypressEvents } from "node:readline";

export type SecretInput = NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };

export class PromptCancelled extends Error {
  override readonly name = "PromptCancelled";
}

/** The secret from stdin when piped (one trailing newline dropped); on a TTY a prompt with echo off. Never argv. */
export async function readSecret(stdin: SecretInput, stderr: NodeJS.WritableStream): Promise<string> {
  if (!stdin.isTTY || !stdin.setRawMode) return (await readAll(stdin)).replace(/\r?\n$/, "");
  return promptHidden(stdin as SecretInput & { setRawMode: (raw: boolean) => unknown }, stderr);
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Raw mode, read key by key through readline's key decoder: Enter or Ctrl-D ends, Ctrl-C cancels,
 * Backspace deletes one character, and keys that are not text (arrows, Home, F-keys: escape
 * sequences) are ignored instead of becoming part of the secret.
 */
function promptHidden(
  stdin: SecretInput & { setRawMode: (raw: boolean) => unknown },
  stderr: NodeJS.WritableStream,
): Promise<string> {
  stderr.write("secret (input hidden): ");
  emitKeypressEvents(stdin);
  stdin.setRawMode(true);
  stdin.resume();
  return new Promise<string>((resolve, reject) => {
    const characters: string[] = [];
    const onKey = (text: string | undefined, key: { name?: string; ctrl?: boolean; meta?: boolean } = {}) => {
      if (key.ctrl && key.name === "c") return finish(new PromptCancelled("cancelled"));
      if (key.name === "return" || key.name === "enter" || (key.ctrl && key.name === "d")) return finish();
      if (key.name === "backspace") return void characters.pop();
      if (text === undefined || key.ctrl || key.meta) return;
      // Printable text only: a control character or a lone escape never ends up in the secret.
      for (const character of text)
        if (character >= " " && character !== "\u007f") characters.push(character);
    };
    const finish = (error?: Error) => {
      stdin.off("keypress", onKey);
      stdin.setRawMode(false);
      stdin.pause();
      stderr.write("\n");
      if (error) reject(error);
      else resolve(characters.join(""));
    };
    stdin.on("keypress", onKey);
  });
}
