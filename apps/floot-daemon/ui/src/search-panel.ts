import type { SessionSearchHit, SessionSearchPage } from "@bridgeworks/protocol";
import { ApiError, api } from "./api.js";
import { h, replaceChildren } from "./dom.js";
import { shortId } from "./format.js";

const sourceLabels: Record<SessionSearchHit["source"], string> = {
  title: "title",
  prompt: "prompt",
  event: "in a turn",
};

/**
 * Full-text search of what the sessions said (`GET /v1/search`: titles, prompts, answers, tool calls and
 * errors, as the journal keeps them, masked): each hit names its session and shows a snippet with the
 * matched words marked, and opens the session. "More hits" follows `nextCursor`; a query the daemon
 * cannot read shows its reason.
 */
export class SearchPanel {
  readonly element: HTMLElement;
  readonly #input: HTMLInputElement;
  readonly #hits: HTMLOListElement;
  readonly #note: HTMLElement;
  readonly #more: HTMLButtonElement;
  #query = "";
  #cursor: string | undefined;

  constructor() {
    this.#input = h("input", {
      id: "turn-search",
      class: "input",
      type: "search",
      name: "q",
      placeholder: 'Search what was said: words, "a phrase", prefix*',
      autocomplete: "off",
      spellcheck: "false",
      "aria-label": "Search the sessions' text",
    });
    this.#hits = h("ol", { class: "search-hits", id: "search-hits", "aria-label": "Search hits" });
    this.#note = h("p", { class: "muted", id: "search-note", role: "status" });
    this.#more = h("button", { type: "button", class: "button", id: "more-hits", hidden: true }, "More hits");
    this.#more.addEventListener("click", () => void this.#load());
    this.element = h(
      "section",
      { class: "search-panel", "aria-label": "Search" },
      h(
        "form",
        {
          class: "form-row search-form",
          role: "search",
          onsubmit: (event) => {
            event.preventDefault();
            this.#query = this.#input.value.trim();
            this.#cursor = undefined;
            this.#hits.replaceChildren();
            if (this.#query === "") {
              this.#note.textContent = "";
              this.#more.hidden = true;
              return;
            }
            void this.#load();
          },
        },
        this.#input,
        h("button", { type: "submit", class: "button", id: "search-submit" }, "Search"),
      ),
      this.#note,
      this.#hits,
      this.#more,
    );
  }

  async #load(): Promise<void> {
    const query = this.#query;
    const params = new URLSearchParams({ q: query });
    if (this.#cursor !== undefined) params.set("cursor", this.#cursor);
    this.#more.disabled = true;
    try {
      const page = await api<SessionSearchPage>("GET", `/v1/search?${params}`);
      if (query !== this.#query) return;
      this.#hits.append(...page.hits.map(hitItem));
      this.#cursor = page.nextCursor;
      this.#more.hidden = page.nextCursor === undefined;
      this.#note.className = "muted";
      this.#note.textContent = this.#hits.childElementCount === 0 ? `Nothing found for ${query}.` : "";
    } catch (error) {
      this.#more.hidden = true;
      this.#note.className = "is-error";
      this.#note.textContent =
        error instanceof ApiError ? error.message : "The daemon is not answering; try again.";
    } finally {
      this.#more.disabled = false;
    }
  }
}

function hitItem(hit: SessionSearchHit): HTMLElement {
  const snippet = h("span", { class: "hit-snippet" });
  replaceChildren(
    snippet,
    hit.snippet.map((part) => (part.match ? h("mark", {}, part.text) : part.text)),
  );
  return h(
    "li",
    { class: "search-hit", "data-session-id": hit.sessionId },
    h(
      "a",
      { href: `#/s/${encodeURIComponent(hit.sessionId)}`, class: "session-link" },
      h(
        "div",
        { class: "session-line" },
        h("code", { class: "session-id", title: hit.sessionId }, shortId(hit.sessionId)),
        hit.title ? h("span", { class: "session-title" }, hit.title) : null,
        h("span", { class: "chip" }, sourceLabels[hit.source]),
      ),
      snippet,
    ),
  );
}
