import type { FlootBackendList, FlootBackendStatus } from "@bridgeworks/protocol";
import { api } from "./api.js";
import { h, replaceChildren } from "./dom.js";

const names: Record<FlootBackendStatus["backend"], string> = { claude: "Claude Code", codex: "Codex" };

/**
 * The new-session form's backend choice, as `GET /v1/backends` finds the CLIs: a missing one is
 * disabled with how to install it, one that looks signed out says so, before any turn fails.
 */
export class BackendChoice {
  readonly note: HTMLElement;
  readonly #select: HTMLSelectElement;
  readonly #submit: HTMLButtonElement;

  constructor(select: HTMLSelectElement, submit: HTMLButtonElement) {
    this.#select = select;
    this.#submit = submit;
    this.note = h("ul", { class: "backend-notes", id: "backend-notes", "aria-live": "polite" });
  }

  /** Asks the daemon; without an answer the form stays as it is (a turn still says what is missing). */
  async load(): Promise<void> {
    let list: FlootBackendList;
    try {
      list = await api<FlootBackendList>("GET", "/v1/backends");
    } catch {
      return;
    }
    for (const status of list.backends) {
      const option = this.#select.querySelector<HTMLOptionElement>(`option[value="${status.backend}"]`);
      if (!option) continue;
      option.disabled = !status.installed;
      option.textContent = status.installed
        ? names[status.backend]
        : `${names[status.backend]} (not installed)`;
    }
    const enabled = [...this.#select.options].filter((option) => !option.disabled);
    if (this.#select.selectedOptions[0]?.disabled && enabled[0]) this.#select.value = enabled[0].value;
    this.#submit.disabled = enabled.length === 0;
    replaceChildren(this.note, list.backends.map(noteOf));
  }
}

function noteOf(status: FlootBackendStatus): HTMLElement {
  const name = names[status.backend];
  if (!status.installed) {
    return h(
      "li",
      { class: "is-error", "data-backend": status.backend, "data-state": "missing" },
      `${name} is not installed (the daemon finds no "${status.command}"). ${status.installHint}.`,
    );
  }
  const found = `${name}: ${status.version ?? "installed"} at ${status.path ?? status.command}`;
  if (!status.sandbox.available) {
    return h(
      "li",
      { class: "warn", "data-backend": status.backend, "data-state": "no-sandbox" },
      `${found}. Its sandbox cannot run here: ${status.sandbox.problem ?? "unavailable"}. A session needs "Run its commands without a sandbox" under Sandbox.`,
    );
  }
  if (!status.signedIn.likely) {
    return h(
      "li",
      { class: "warn", "data-backend": status.backend, "data-state": "signed-out" },
      `${found}. It looks signed out (${status.signedIn.detail}): run `,
      h("code", {}, status.backend),
      " once in a terminal to sign in, or give the daemon an API key variable.",
    );
  }
  return h("li", { class: "muted", "data-backend": status.backend, "data-state": "ready" }, `${found}.`);
}
