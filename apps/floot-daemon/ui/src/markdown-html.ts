import { Marked, type Tokens } from "marked";

/**
 * Agent text as Markdown (GitHub's flavour) to HTML, before sanitizing: raw HTML in the text is shown as
 * the text it is, never parsed; images become links (the page loads no picture an agent names); task
 * list boxes are characters, not inputs. The result still goes through `sanitizeMarkdown` (markdown.ts),
 * which is what keeps links safe.
 */
const markdown = new Marked({
  gfm: true,
  breaks: true,
  async: false,
  renderer: {
    html({ text }: Tokens.HTML | Tokens.Tag): string {
      return escapeHtml(text);
    },
    image({ href, title, text }: Tokens.Image): string {
      const label = escapeHtml(`image: ${text || href}`);
      return `<a href="${escapeHtml(href)}"${title ? ` title="${escapeHtml(title)}"` : ""}>${label}</a>`;
    },
    checkbox({ checked }: Tokens.Checkbox): string {
      return checked ? "☑ " : "☐ ";
    },
  },
});

export function markdownToHtml(text: string): string {
  return markdown.parse(text, { async: false });
}

const linkProtocols = new Set(["http:", "https:", "mailto:"]);

/**
 * The href a link from agent text may keep: an absolute http(s) or mailto URL, normalized. Anything
 * else (`javascript:`, `data:`, `vbscript:`, a path on this daemon, an unparsable value) is dropped.
 */
export function safeHref(raw: string | null | undefined): string | undefined {
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return undefined;
  }
  return linkProtocols.has(url.protocol) ? url.href : undefined;
}

/** A code block's language, from the class marked gives it (`language-ts`); others are dropped. */
export function languageOf(className: string | null | undefined): string | undefined {
  return /^language-([A-Za-z0-9_+#.-]{1,32})$/.exec(className ?? "")?.[1];
}

const entities: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => entities[char] ?? char);
}
