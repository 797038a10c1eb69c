import { describe, expect, test } from "vitest";
import { languageOf, markdownToHtml, safeHref } from "../ui/src/markdown-html.js";

// The page's Markdown step without the DOM. What the sanitizer keeps is checked in Chromium
// (test/web-ui-rendering.test.ts); this is what reaches it.

describe("markdownToHtml", () => {
  test("renders GitHub-flavoured Markdown", () => {
    const html = markdownToHtml(
      "A **bold** and *em* word, `code`.\nNext line.\n\n- one\n- [x] done\n\n```ts\nconst a = 1 < 2;\n```\n\n| a | b |\n| - | - |\n| 1 | 2 |",
    );
    expect(html).toContain("<strong>bold</strong>");
    expect(html).toContain("<em>em</em>");
    expect(html).toContain("<code>code</code>");
    expect(html).toContain("<br>");
    expect(html).toContain("<li>☑ done</li>");
    expect(html).toContain('<pre><code class="language-ts">const a = 1 &lt; 2;\n</code></pre>');
    expect(html).toContain("<table>");
    expect(html).not.toContain("<input");
  });

  test("raw HTML in agent text is shown as text, block and inline alike", () => {
    const html = markdownToHtml(
      '<script>alert(1)</script>\n\nInline <img src=x onerror="alert(2)"> and <a href="javascript:alert(3)" onclick="alert(4)">x</a>.',
    );
    expect(html).not.toMatch(/<(script|img|a)\b/);
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).toContain("&lt;img src=x onerror=&quot;alert(2)&quot;&gt;");
  });

  test("an image becomes a link the sanitizer can still check", () => {
    const html = markdownToHtml('![a "chart"](http://127.0.0.1:9/pixel.png)');
    expect(html).not.toContain("<img");
    expect(html).toContain('<a href="http://127.0.0.1:9/pixel.png">image: a &quot;chart&quot;</a>');
  });
});

describe("safeHref", () => {
  test.each([
    ["https://example.com/a?b=c#d", "https://example.com/a?b=c#d"],
    ["http://127.0.0.1:8080", "http://127.0.0.1:8080/"],
    ["mailto:dev@example.com", "mailto:dev@example.com"],
    ["  https://example.com/ ", "https://example.com/"],
  ])("keeps %j", (raw, kept) => expect(safeHref(raw)).toBe(kept));

  test.each([
    "javascript:alert(1)",
    "JavaScript:alert(1)",
    " \tjavascript:alert(1)",
    "java\nscript:alert(1)",
    "data:text/html,<script>alert(1)</script>",
    "vbscript:msgbox(1)",
    "file:///etc/passwd",
    "/v1/sessions",
    "#top",
    "//evil.example/x",
    "",
    null,
    undefined,
  ])("drops %j", (raw) => expect(safeHref(raw)).toBeUndefined());
});

test("languageOf reads marked's class and nothing else", () => {
  expect(languageOf("language-ts")).toBe("ts");
  expect(languageOf("language-c++")).toBe("c++");
  expect(languageOf("note-error")).toBeUndefined();
  expect(languageOf("language-ts note-error")).toBeUndefined();
  expect(languageOf(null)).toBeUndefined();
});
