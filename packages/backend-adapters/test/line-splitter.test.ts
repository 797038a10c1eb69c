import { describe, expect, test } from "vitest";
import { LineSplitter, LineTooLongError } from "../src/index.js";

describe("line splitter", () => {
  test("splits on newline only, keeping U+2028 and U+2029 inside a line", () => {
    const splitter = new LineSplitter();
    const line = JSON.stringify({ text: "a\u2028b\u2029c" });
    expect(splitter.push(`${line}\n{"n":2}\n`)).toEqual([line, '{"n":2}']);
  });

  test("joins a line split across chunks, including inside a multibyte character", () => {
    const splitter = new LineSplitter();
    const bytes = new TextEncoder().encode('{"t":"é"}\n');
    const cut = bytes.indexOf(0xc3) + 1;
    expect(splitter.push(bytes.subarray(0, cut))).toEqual([]);
    expect(splitter.push(bytes.subarray(cut))).toEqual(['{"t":"é"}']);
  });

  test("drops CR of CRLF and blank lines; flushes an unterminated last line at the end", () => {
    const splitter = new LineSplitter();
    expect(splitter.push("a\r\n\r\nb")).toEqual(["a"]);
    expect(splitter.end()).toEqual(["b"]);
    expect(splitter.end()).toEqual([]);
  });
});

describe("line limit", () => {
  test("a line longer than maxLineBytes throws, keeping the complete lines before it", () => {
    const splitter = new LineSplitter({ maxLineBytes: 8 });
    expect(splitter.push("12345678\nabc")).toEqual(["12345678"]);
    let thrown: unknown;
    try {
      splitter.push("defghi\nlast");
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(LineTooLongError);
    expect(thrown).toMatchObject({ limitBytes: 8, linesBefore: [] });
    const other = new LineSplitter({ maxLineBytes: 4 });
    expect(() => other.push("ok\nfine\ntoo long")).toThrow(
      expect.objectContaining({ name: "LineTooLongError", linesBefore: ["ok", "fine"] }),
    );
  });

  test("the limit counts bytes, not characters", () => {
    const splitter = new LineSplitter({ maxLineBytes: 4 });
    expect(splitter.push("éé\n")).toEqual(["éé"]);
    expect(() => splitter.push("ééé\n")).toThrow(LineTooLongError);
  });
});
