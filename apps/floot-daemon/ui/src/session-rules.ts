import type { FlootSession, FlootSessionRules } from "@bridgeworks/protocol";
import { ApiError, api } from "./api.js";
import { h, replaceChildren } from "./dom.js";

/**
 * A session's permission rules: those it was created with (fixed) and those "allow for this session"
 * added (each removable: later turns no longer get it), and how long a request waits for a decision.
 */
export class SessionRules {
  readonly element: HTMLElement;
  readonly #sessionId: string;
  readonly #list: HTMLElement;
  readonly #note: HTMLElement;
  readonly #timeout: HTMLElement;
  #session: FlootSession | undefined;
  #added: string[] = [];
  /** The session's rules (fixed or added) that let the agent run any code, as the daemon judges them. */
  #runAnyCode = new Set<string>();

  constructor(sessionId: string) {
    this.#sessionId = sessionId;
    this.#list = h("ul", { class: "rules" });
    this.#note = h("p", { class: "muted", role: "status" });
    this.#timeout = h("p", { class: "muted rules-timeout" });
    this.element = h(
      "section",
      { class: "session-rules", "aria-labelledby": "session-rules-title", hidden: true },
      h("h2", { id: "session-rules-title" }, "Permission rules"),
      this.#list,
      this.#timeout,
      this.#note,
    );
  }

  /** Re-reads the added rules; `session` says the fixed ones and the timeout. Codex sessions have none. */
  async refresh(session = this.#session): Promise<void> {
    this.#session = session;
    if (session?.backend !== "claude") return;
    this.#take(
      await api<FlootSessionRules>("GET", `/v1/sessions/${encodeURIComponent(this.#sessionId)}/rules`),
    );
    this.#render();
  }

  #render(): void {
    const session = this.#session;
    if (!session) return;
    this.element.hidden = false;
    const fixed = session.allowedTools ?? [];
    const runsAnyCode = (rule: string) =>
      this.#runAnyCode.has(rule) && h("span", { class: "rule-runs-code" }, " lets the agent run any code");
    const rows = [
      ...fixed.map((rule) =>
        h(
          "li",
          { "data-rule": rule },
          h("code", {}, rule),
          runsAnyCode(rule),
          h("span", { class: "muted" }, " set at creation"),
        ),
      ),
      ...this.#added.map((rule) =>
        h(
          "li",
          { "data-rule": rule, "data-added": "1" },
          h("code", {}, rule),
          runsAnyCode(rule),
          h(
            "button",
            {
              type: "button",
              class: "button button-quiet",
              "aria-label": `Remove rule ${rule}`,
              onclick: () => void this.#remove(rule),
            },
            "Remove",
          ),
        ),
      ),
    ];
    replaceChildren(this.#list, rows.length > 0 ? rows : h("li", { class: "muted" }, "No rules yet."));
    const ms = session.permissionTimeoutMs;
    this.#timeout.textContent =
      ms === undefined
        ? "A permission request waits for a decision indefinitely."
        : `A permission request nobody decides within ${duration(ms)} is denied.`;
  }

  #take({ rules, runAnyCode }: FlootSessionRules): void {
    this.#added = rules;
    this.#runAnyCode = new Set(runAnyCode);
  }

  async #remove(rule: string): Promise<void> {
    try {
      this.#take(
        await api<FlootSessionRules>(
          "POST",
          `/v1/sessions/${encodeURIComponent(this.#sessionId)}/rules/remove`,
          { rule },
        ),
      );
      this.#note.className = "muted";
      this.#note.textContent = `Removed ${rule}: later turns ask again.`;
      this.#render();
    } catch (error) {
      this.#note.className = "is-error";
      this.#note.textContent = `Not removed: ${error instanceof ApiError ? error.message : "the daemon is not answering"}.`;
    }
  }
}

function duration(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  if (ms % 1_000 === 0) return `${ms / 1_000} s`;
  return `${ms} ms`;
}
