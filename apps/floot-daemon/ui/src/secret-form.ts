import {
  type SecretRequest,
  type SecretRequestedEvent,
  type SubmitSecretResponse,
  secretValueMinLength,
} from "@bridgeworks/protocol";
import { ApiError, api } from "./api.js";
import { h, replaceChildren } from "./dom.js";

let formCount = 0;

/** A secret request in its turn; `slot` takes its form, or what became of it. */
export function secretCard(event: SecretRequestedEvent): { element: HTMLElement; slot: HTMLElement } {
  const slot = h("div", { class: "secret-slot" });
  const element = h(
    "section",
    { class: "secret-card", "data-secret-request": event.requestId, "aria-label": `Secret ${event.name}` },
    h("div", { class: "secret-title" }, "Secret requested: ", h("code", {}, event.name)),
    event.prompt ? h("p", { class: "secret-prompt" }, event.prompt) : null,
    slot,
  );
  return { element, slot };
}

/**
 * The answer to a `requestSecret` call. The value lives only in the password field until it is sent:
 * the field has no `name` (a fallback form submission would not carry it), the page keeps no copy, and
 * the field is emptied as soon as the request is on its way. A value the daemon refuses (too short to
 * mask) leaves the form open with the daemon's reason.
 */
export class SecretForm {
  readonly element: HTMLElement;
  submitted = false;
  #request: SecretRequest;
  readonly #note: HTMLElement;
  readonly #input: HTMLInputElement;
  readonly #button: HTMLButtonElement;
  readonly #onSubmitted: () => void;

  constructor(request: SecretRequest, onSubmitted: () => void) {
    this.#request = request;
    this.#onSubmitted = onSubmitted;
    const id = `secret-${++formCount}`;
    this.#input = h("input", {
      id,
      type: "password",
      class: "input",
      autocomplete: "off",
      autocapitalize: "off",
      spellcheck: "false",
      required: true,
      placeholder: `at least ${secretValueMinLength} characters`,
      "aria-describedby": `${id}-note`,
      "data-secret-input": request.id,
    });
    this.#button = h("button", { type: "submit", class: "button button-primary" }, "Provide");
    this.#note = h("p", { class: "secret-note", id: `${id}-note` });
    this.element = h(
      "form",
      {
        class: "secret-form",
        method: "post",
        "data-secret-form": request.id,
        onsubmit: (event) => this.#submit(event),
      },
      h("label", { for: id }, `Value of ${request.name}`),
      h("div", { class: "secret-row" }, this.#input, this.#button),
      this.#note,
    );
    this.update(request);
  }

  update(request: SecretRequest): void {
    this.#request = request;
    if (this.submitted) return;
    this.#note.textContent =
      request.status === "orphaned"
        ? "The turn that asked was interrupted by a daemon restart. Answering starts a retry that receives it."
        : "Sent straight to the waiting tool call; never stored by the daemon or this page.";
  }

  async #submit(event: Event): Promise<void> {
    event.preventDefault();
    const value = this.#input.value;
    if (!value) return;
    this.#input.value = "";
    this.#button.disabled = true;
    this.#input.disabled = true;
    try {
      const answer = await api<SubmitSecretResponse>(
        "POST",
        `/v1/secret-requests/${encodeURIComponent(this.#request.id)}/submit`,
        { value },
      );
      this.submitted = true;
      replaceChildren(
        this.element,
        h(
          "p",
          { class: "ok", role: "status" },
          answer.deliveredTo === "call"
            ? `✓ ${answer.request.name} provided to the waiting turn.`
            : `✓ ${answer.request.name} provided; a retry of the interrupted turn carries it.`,
        ),
      );
      this.#onSubmitted();
    } catch (error) {
      this.#button.disabled = false;
      this.#input.disabled = false;
      this.#note.textContent = `Not sent: ${error instanceof ApiError ? error.message : "the daemon is not answering; try again"}.`;
      this.#note.classList.add("is-error");
      this.#input.focus();
    }
  }
}
