interface Form {
  text: string;
  marker: string;
}

/** `***SECRET(<name>)***`: says which secret was there, never any byte of it. */
export function maskMarker(name: string): string {
  return `***SECRET(${name})***`;
}

/**
 * The submitted secret values and the forms a tool is likely to print them in (as is, base64, base64url,
 * URL-encoded), each replaced by its marker, longest first, in one pass (a marker is never masked again).
 * Every non-empty value is masked, however short, as CI log maskers do: a 2-character secret blanks
 * every occurrence of those characters in what the turn shows, which is unreadable but leaks nothing.
 * Memory only: what it holds is the secrets.
 */
export class SecretMask {
  #forms: Form[] = [];
  #pattern: RegExp | undefined;
  #markerOf = new Map<string, string>();

  register(name: string, value: string): void {
    if (value.length === 0) return;
    const marker = maskMarker(name);
    const bytes = Buffer.from(value, "utf8");
    const texts = new Set([
      value,
      bytes.toString("base64"),
      bytes.toString("base64").replace(/=+$/, ""),
      bytes.toString("base64url"),
      encodeURIComponent(value),
    ]);
    const known = new Set(this.#forms.map((form) => form.text));
    for (const text of texts) if (text !== "" && !known.has(text)) this.#forms.push({ text, marker });
    this.#forms.sort((a, b) => b.text.length - a.text.length);
    this.#markerOf = new Map(this.#forms.map((form) => [form.text, form.marker]));
    this.#pattern = new RegExp(this.#forms.map((form) => escapeRegExp(form.text)).join("|"), "g");
  }

  get empty(): boolean {
    return this.#forms.length === 0;
  }

  maskText(text: string): string {
    if (this.#pattern === undefined) return text;
    return text.replace(this.#pattern, (form) => this.#markerOf.get(form) ?? form);
  }

  /** Every string inside a JSON value, masked; the shape is kept. */
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
    let cut = text.length;
    for (let start = Math.max(0, text.length - this.#longest() + 1); start < text.length; start++) {
      const tail = text.slice(start);
      if (this.#forms.some((form) => form.text.startsWith(tail))) {
        cut = start;
        break;
      }
    }
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

  #longest(): number {
    return this.#forms[0]?.text.length ?? 0;
  }

  #deep(value: unknown): unknown {
    if (typeof value === "string") return this.maskText(value);
    if (Array.isArray(value)) return value.map((each) => this.#deep(each));
    if (value !== null && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([key, each]) => [key, this.#deep(each)]));
    }
    return value;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
