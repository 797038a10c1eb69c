/**
 * Splits a byte stream into lines on "\n" only: JSON lines may carry U+2028/U+2029, which
 * node:readline would treat as line ends.
 */
export class LineSplitter {
  #pending = "";
  readonly #decoder = new TextDecoder();

  push(chunk: Uint8Array | string): string[] {
    this.#pending += typeof chunk === "string" ? chunk : this.#decoder.decode(chunk, { stream: true });
    const lines = this.#pending.split("\n");
    this.#pending = lines.pop() ?? "";
    return lines.map(stripCarriageReturn).filter((line) => line !== "");
  }

  /** The unterminated last line, if any, once the stream has ended. */
  end(): string[] {
    const rest = stripCarriageReturn(this.#pending + this.#decoder.decode());
    this.#pending = "";
    return rest === "" ? [] : [rest];
  }
}

function stripCarriageReturn(line: string): string {
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}
