import createDOMPurify, { type Config } from "dompurify";
import { h } from "./dom.js";
import { languageOf, markdownToHtml, safeHref } from "./markdown-html.js";

// What Markdown produces, and nothing else: no img, form, input, style, svg or math; no data-* or aria-*
// attributes (the page's own markers), no id (a link target the page does not expect).
const config: Config & { RETURN_DOM_FRAGMENT: true } = {
  ALLOWED_TAGS: [
    "a",
    "blockquote",
    "br",
    "code",
    "del",
    "em",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "li",
    "ol",
    "p",
    "pre",
    "strong",
    "table",
    "tbody",
    "td",
    "th",
    "thead",
    "tr",
    "ul",
  ],
  ALLOWED_ATTR: ["href", "title", "start", "align", "class"],
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  RETURN_DOM_FRAGMENT: true,
};

/** One sanitizer of this page's own (its hooks touch no other DOMPurify user). */
function createSanitizer() {
  const purify = createDOMPurify(window);
  purify.addHook("uponSanitizeAttribute", (node, event) => {
    if (event.attrName === "class" && !(node.nodeName === "CODE" && languageOf(event.attrValue))) {
      event.keepAttr = false;
    }
  });
  purify.addHook("afterSanitizeAttributes", (node) => {
    if (node.nodeName !== "A") return;
    const element = node as Element;
    const href = safeHref(element.getAttribute("href"));
    if (href === undefined) {
      element.removeAttribute("href");
      return;
    }
    element.setAttribute("href", href);
    element.setAttribute("target", "_blank");
    element.setAttribute("rel", "noopener noreferrer");
  });
  return (html: string): DocumentFragment => purify.sanitize(html, config);
}

const sanitize = createSanitizer();

/** Agent text as sanitized DOM: Markdown rendered, then only Markdown's tags and safe links kept. */
export function renderMarkdown(text: string): DocumentFragment {
  const fragment = sanitize(markdownToHtml(text));
  for (const node of [...fragment.childNodes]) {
    if (node.nodeType === Node.TEXT_NODE && !node.textContent?.trim()) node.remove();
  }
  for (const code of fragment.querySelectorAll("pre > code")) withCopyButton(code as HTMLElement);
  return fragment;
}

function withCopyButton(code: HTMLElement): void {
  const pre = code.parentElement as HTMLElement;
  const language = languageOf(code.getAttribute("class"));
  const label = h("span", {}, "Copy");
  const button = h(
    "button",
    { type: "button", class: "copy-button", "aria-label": "Copy code", onclick: () => copy(code, label) },
    label,
  );
  const block = h(
    "div",
    { class: "code-block" },
    h("div", { class: "code-head" }, h("span", { class: "code-language" }, language ?? ""), button),
  );
  pre.replaceWith(block);
  block.append(pre);
}

async function copy(code: HTMLElement, label: HTMLElement): Promise<void> {
  try {
    await navigator.clipboard.writeText(code.textContent ?? "");
    label.textContent = "Copied";
  } catch {
    // No clipboard access (denied, or not a secure context): select the code for Ctrl+C instead.
    getSelection()?.selectAllChildren(code);
    label.textContent = "Press Ctrl+C";
  }
  setTimeout(() => {
    label.textContent = "Copy";
  }, 2_000);
}

/** How often at most a streaming message is rendered again. */
export const streamRenderIntervalMs = 80;

/**
 * One assistant message. While it streams, deltas append to its text and the Markdown is rendered
 * again at most every `streamRenderIntervalMs` (a replay of a thousand deltas renders once); the final
 * text renders at once.
 */
export class MarkdownText {
  readonly element: HTMLElement;
  #text: string;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #renderedAt = Number.NEGATIVE_INFINITY;

  constructor(text: string, options: { streaming?: boolean } = {}) {
    this.#text = text;
    this.element = h("div", { class: `assistant-text markdown${options.streaming ? " streaming" : ""}` });
    if (text !== "") this.#render();
  }

  append(delta: string): void {
    this.#text += delta;
    if (this.#timer !== undefined) return;
    const wait = this.#renderedAt + streamRenderIntervalMs - performance.now();
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        this.#render();
      },
      Math.max(0, wait),
    );
  }

  /** The message is complete: `text` (when given) is its whole text. */
  finish(text?: string): void {
    if (text !== undefined) this.#text = text;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.element.classList.remove("streaming");
    this.#render();
  }

  #render(): void {
    this.#renderedAt = performance.now();
    this.element.replaceChildren(renderMarkdown(this.#text));
  }
}
