import { secretValueMinLength } from "@bridgeworks/protocol";

/** `***SECRET(<name>)***`: says which secret was there, never any byte of it. */
export function maskMarker(name: string): string {
  return `***SECRET(${name})***`;
}

/**
 * The marker inside a permission rule, whose specifier may hold no `(`, `)` or `,`:
 * `***SECRET[<name>]***`, the name's other brackets and commas as `_`.
 */
export function ruleMarker(name: string): string {
  return `***SECRET[${name.replace(/[()[\],\r\n]/g, "_")}]***`;
}

/** What a cut text ends with where its source cut it (the gate's preview, a permission's summary). */
export const cutEllipsis = "…";

/**
 * How many characters of a value a cut must have kept for the rest of the cut text to be masked: fewer
 * are what any text may end with by chance (a base64 form's first characters, `ls -la…`), and reveal
 * at most three characters of a value of at least eight.
 */
export const cutPartialMinLength = 4;

/** The text inside a JSON string that holds `text`, as `JSON.stringify` writes it (no quotes). */
function jsonEscaped(text: string): string {
  return JSON.stringify(text).slice(1, -1);
}

/** The same, with every non-ASCII character as `\uXXXX`, as Python's `json.dumps` writes it. */
function asciiJsonEscaped(text: string): string {
  return jsonEscaped(text).replace(
    /[^\x20-\x7e]/g,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/**
 * The forms a value takes in what the daemon journals: as is; inside JSON text once, twice and three
 * times (a tool's output is text, its input JSON text, and the gate's preview is that input as JSON text
 * again: a shell command's `"a\"b"` is `a\\\"b` there, and a JSON body in that command one level more),
 * also ASCII-only; base64 (padded or not) and base64url; URL- and form-encoded.
 */
export function encodedForms(value: string): Set<string> {
  const bytes = Buffer.from(value, "utf8");
  const base64 = bytes.toString("base64");
  const once = jsonEscaped(value);
  const twice = jsonEscaped(once);
  const ascii = asciiJsonEscaped(value);
  return new Set([
    value,
    once,
    twice,
    jsonEscaped(twice),
    ascii,
    jsonEscaped(ascii),
    base64,
    base64.replace(/=+$/, ""),
    bytes.toString("base64url"),
    encodeURIComponent(value),
    new URLSearchParams({ v: value }).toString().slice(2),
  ]);
}

interface Form {
  text: string;
  name: string;
}

/**
 * The submitted secret values and their encoded forms (`encodedForms`), each replaced by the marker
 * naming the secret, longest first, in one pass; a marker already in the text is kept whole, so masking
 * again changes nothing. A value shorter than `secretValueMinLength` is refused (the broker refuses it
 * first, with the reason). Memory only: what it holds is the secrets. What to mask of an event is
 * `masked-fields.ts`'s.
 */
export class SecretMask {
  #forms: Form[] = [];
  #names = new Set<string>();
  #pattern: RegExp | undefined;
  #nameOf = new Map<string, string>();
  #firstCharacters = new Set<string>();

  register(name: string, value: string): void {
    if (value.length < secretValueMinLength) {
      throw new RangeError(`a secret value shorter than ${secretValueMinLength} characters cannot be masked`);
    }
    this.#names.add(name);
    const known = new Set(this.#forms.map((form) => form.text));
    for (const text of encodedForms(value)) if (!known.has(text)) this.#forms.push({ text, name });
    this.#forms.sort((a, b) => b.text.length - a.text.length);
    this.#nameOf = new Map(this.#forms.map((form) => [form.text, form.name]));
    this.#firstCharacters = new Set(this.#forms.map((form) => form.text[0]!));
    const markers = [...this.#names]
      .flatMap((each) => [maskMarker(each), ruleMarker(each)])
      .sort((a, b) => b.length - a.length);
    this.#pattern = new RegExp(
      [...markers, ...this.#forms.map((form) => form.text)].map(escapeRegExp).join("|"),
      "g",
    );
  }

  get empty(): boolean {
    return this.#forms.length === 0;
  }

  /** `text` with every form replaced by `markerOf(name)` (the marker unless told otherwise). */
  maskText(text: string, markerOf: (name: string) => string = maskMarker): string {
    if (this.#pattern === undefined) return text;
    return text.replace(this.#pattern, (found) => {
      const name = this.#nameOf.get(found);
      return name === undefined ? found : markerOf(name);
    });
  }

  /**
   * A text its source may have cut short with `…` (the gate's preview, a permission's summary): masked,
   * and a beginning of a form right before the `…` masked too (`cutPartialMinLength` characters or
   * more), since the cut may have split a value.
   */
  maskCutText(text: string): string {
    if (this.empty || !text.endsWith(cutEllipsis)) return this.maskText(text);
    const body = text.slice(0, -cutEllipsis.length);
    const cut = this.safeCut(body);
    if (cut === body.length) return this.maskText(text);
    const tail = body.slice(cut);
    if (tail.length < cutPartialMinLength) return this.maskText(text);
    const form = this.#forms.find((each) => each.text.startsWith(tail) || tail.startsWith(each.text));
    return `${this.maskText(body.slice(0, cut))}${maskMarker(form?.name ?? "")}${cutEllipsis}`;
  }

  /** Every string inside a JSON value, object keys included, masked; the shape is kept. */
  maskJson<T>(value: T): T {
    if (this.empty) return value;
    return this.#deep(value) as T;
  }

  /**
   * Where a streamed text may be cut so that no form can straddle the cut: the start of the earliest
   * suffix that begins a form, or of a whole form the cut would split. `text.length` when nothing is at
   * risk. The caller emits `text.slice(0, cut)` masked and holds the rest for the next piece.
   */
  safeCut(text: string): number {
    let cut = this.#partialTail(text);
    for (let moved = true; moved; ) {
      moved = false;
      for (const { text: form } of this.#forms) {
        let at = text.indexOf(form);
        while (at !== -1 && at < cut) {
          if (at + form.length > cut) {
            cut = at;
            moved = true;
          }
          at = text.indexOf(form, at + 1);
        }
      }
    }
    return cut;
  }

  /** The start of the earliest suffix of `text` that is a proper beginning of a form; else its length. */
  #partialTail(text: string): number {
    const longest = this.#forms[0]?.text.length ?? 0;
    for (let start = Math.max(0, text.length - longest + 1); start < text.length; start++) {
      if (!this.#firstCharacters.has(text[start]!)) continue;
      const tail = text.slice(start);
      if (this.#forms.some((form) => form.text.length > tail.length && form.text.startsWith(tail)))
        return start;
    }
    return text.length;
  }

  #deep(value: unknown): unknown {
    if (typeof value === "string") return this.maskText(value);
    if (Array.isArray(value)) return value.map((each) => this.#deep(each));
    if (value !== null && typeof value === "object") {
      return Object.fromEntries(
        Object.entries(value).map(([key, each]) => [this.maskText(key), this.#deep(each)]),
      );
    }
    return value;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
