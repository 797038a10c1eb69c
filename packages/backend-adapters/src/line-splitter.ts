/** A CLI wrote a line longer than the splitter holds: the stream cannot be read as lines. */
export class LineTooLongError extends Error {
  override readonly name = "LineTooLongError";
  constructor(
    readonly limitBytes: number,
    /** The complete lines the same chunk held before the long one, so none is lost. */
    readonly linesBefore: readonly string[] = [],
  ) {
    super(`a line of output is longer than ${limitBytes} bytes`);
  }
}

/** The longest line a CLI's stdout may carry by default: 8 MiB (stream-json lines are far smaller). */
export const defaultMaxLineBytes = 8 * 1024 * 1024;

export interface LineSplitterOptions {
  /** Longer lines throw `LineTooLongError` instead of growing without bound. */
  maxLineBytes?: number;
}

/**
 * Splits a byte stream into lines on "\n" only: JSON lines may carry U+2028/U+2029, which
 * node:readline would treat as line ends. Splits bytes, not text (no UTF-8 sequence contains 0x0a),
 * and holds at most `maxLineBytes` of an unfinished line.
 */
export class LineSplitter {
  readonly #maxLineBytes: number;
  #pending: Buffer[] = [];
  #pendingBytes = 0;

  constructor(options: LineSplitterOptions = {}) {
    this.#maxLineBytes = options.maxLineBytes ?? defaultMaxLineBytes;
  }

  /** The complete lines `chunk` ends; throws `LineTooLongError` once a line outgrows the limit. */
  push(chunk: Uint8Array | string): string[] {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : asBuffer(chunk);
    const lines: string[] = [];
    const complete = () => lines.map(stripCarriageReturn).filter((line) => line !== "");
    let start = 0;
    try {
      for (let newline = bytes.indexOf(0x0a); newline !== -1; newline = bytes.indexOf(0x0a, start)) {
        this.#hold(bytes.subarray(start, newline));
        lines.push(this.#take());
        start = newline + 1;
      }
      if (start < bytes.length) this.#hold(bytes.subarray(start));
    } catch (error) {
      if (error instanceof LineTooLongError) throw new LineTooLongError(error.limitBytes, complete());
      throw error;
    }
    return complete();
  }

  /** The unterminated last line, if any, once the stream has ended. */
  end(): string[] {
    const rest = stripCarriageReturn(this.#take());
    return rest === "" ? [] : [rest];
  }

  #hold(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.#pendingBytes += bytes.length;
    if (this.#pendingBytes > this.#maxLineBytes) {
      this.#pending = [];
      this.#pendingBytes = 0;
      throw new LineTooLongError(this.#maxLineBytes);
    }
    this.#pending.push(bytes);
  }

  #take(): string {
    const line = Buffer.concat(this.#pending, this.#pendingBytes).toString("utf8");
    this.#pending = [];
    this.#pendingBytes = 0;
    return line;
  }
}

function asBuffer(chunk: Uint8Array): Buffer {
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

function stripCarriageReturn(line: string): string {
  return line.endsWith("\r") ? line.slice(0, -1) : line;
}
