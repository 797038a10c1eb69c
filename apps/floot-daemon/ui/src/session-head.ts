import type { FlootSession } from "@bridgeworks/protocol";
import { ApiError, api } from "./api.js";
import { h, replaceChildren } from "./dom.js";
import { relativeTime, shortId } from "./format.js";

/**
 * A session page's head: the heading, then the session's facts (backend, workspace, model, created).
 * The heading is the session's title (else "Session"), its short id and a Rename button that edits the
 * title in place: Enter or Save renames through the daemon (a refusal shows its reason), Esc or Cancel
 * leaves it. A refresh while the title is edited leaves the edit alone. The tab's title follows:
 * "Floot · <title>", after "(needs input) " while a request of the session is open.
 */
export class SessionHead {
  readonly element: HTMLElement;
  readonly #heading: HTMLHeadingElement;
  readonly #note: HTMLElement;
  readonly #facts: HTMLElement;
  #session: FlootSession | undefined;
  #editing = false;
  #waiting = false;

  constructor() {
    this.#heading = h("h1", { tabindex: "-1", class: "session-title-line" }, "Session");
    this.#note = h("p", { class: "muted", id: "rename-note", role: "status" });
    this.#facts = h("dl", { class: "facts" });
    this.element = h("header", { class: "session-head" }, this.#heading, this.#note, this.#facts);
  }

  show(session: FlootSession): void {
    this.#session = session;
    this.#showTabTitle();
    const facts: [string, string][] = [
      ["Backend", session.backend],
      ["Workspace", session.workspace],
      ...(session.model ? [["Model", session.model] as [string, string]] : []),
      ["Created", relativeTime(session.createdAt)],
    ];
    replaceChildren(
      this.#facts,
      facts.map(([term, value]) =>
        h("div", {}, h("dt", {}, term), h("dd", {}, term === "Workspace" ? h("code", {}, value) : value)),
      ),
    );
    if (this.#editing) return;
    replaceChildren(
      this.#heading,
      session.title
        ? h("span", { id: "session-title", class: "session-title-text" }, session.title)
        : "Session",
      h("code", { title: session.id }, shortId(session.id)),
      h(
        "button",
        {
          type: "button",
          class: "link-button rename-button",
          id: "rename-session",
          onclick: () => this.#edit(),
        },
        "Rename",
      ),
    );
  }

  /** Whether the session waits on a person: "(needs input)" leads the tab's title. */
  setWaiting(waiting: boolean): void {
    this.#waiting = waiting;
    this.#showTabTitle();
  }

  #showTabTitle(): void {
    const session = this.#session;
    if (!session) return;
    const name = session.title ?? `session ${shortId(session.id)}`;
    document.title = `${this.#waiting ? "(needs input) " : ""}Floot · ${name}`;
  }

  #edit(): void {
    const session = this.#session;
    if (!session) return;
    this.#editing = true;
    const input = h("input", {
      id: "title-input",
      class: "input title-input",
      value: session.title ?? "",
      maxlength: 200,
      autocomplete: "off",
      "aria-label": "Session title",
      "aria-describedby": "rename-note",
    });
    const cancel = () => {
      this.#editing = false;
      this.#note.textContent = "";
      this.show(session);
      this.#heading.focus();
    };
    const form = h(
      "form",
      {
        class: "rename-form",
        onsubmit: (event) => {
          event.preventDefault();
          void this.#save(input.value);
        },
        onkeydown: (event) => {
          if ((event as KeyboardEvent).key === "Escape") cancel();
        },
      },
      input,
      h("button", { type: "submit", class: "button button-primary", id: "save-title" }, "Save"),
      h("button", { type: "button", class: "button", onclick: cancel }, "Cancel"),
    );
    replaceChildren(this.#heading, form);
    input.focus();
    input.select();
  }

  async #save(title: string): Promise<void> {
    const session = this.#session!;
    try {
      const renamed = await api<FlootSession>(
        "POST",
        `/v1/sessions/${encodeURIComponent(session.id)}/rename`,
        { title },
      );
      this.#editing = false;
      this.#note.textContent = "";
      this.#note.className = "muted";
      this.show(renamed);
    } catch (error) {
      this.#note.textContent =
        error instanceof ApiError ? error.message : "The daemon is not answering; try again.";
      this.#note.className = "is-error";
    }
  }
}
