import type { FlootOverview, FlootSession, FlootSessionSummary } from "@bridgeworks/protocol";
import { ApiError, api } from "./api.js";
import { backoffMs, type Connection, sleep } from "./connection.js";
import { h, replaceChildren } from "./dom.js";
import { isActive, phaseLabels, relativeTime, shortId } from "./format.js";

/** The sessions list (backend, workspace, current turn and its phase) and the new-session form. */
export class SessionsPage {
  readonly #abort = new AbortController();
  readonly #connection: Connection;
  readonly #list: HTMLElement;
  readonly #formNote: HTMLElement;

  constructor(root: HTMLElement, connection: Connection) {
    this.#connection = connection;
    this.#list = h("div", { class: "session-list", "aria-live": "polite", "aria-busy": "true" });
    this.#formNote = h("p", { class: "muted", id: "new-session-note" });
    replaceChildren(
      root,
      h("header", { class: "page-head" }, h("h1", { tabindex: "-1" }, "Sessions")),
      this.#list,
      this.#newSessionForm(),
    );
    document.title = "Floot · sessions";
    void this.#run();
  }

  dispose(): void {
    this.#abort.abort();
  }

  async #run(): Promise<void> {
    let attempt = 0;
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      try {
        const overview = await api<FlootOverview>("GET", "/v1/overview");
        if (signal.aborted) return;
        this.#connection.noteGeneration(overview.status.generation);
        await this.#connection.online();
        attempt = 0;
        this.#render(overview);
        await sleep(2_500, signal);
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof ApiError && error.status === 401) return this.#connection.signedOut();
        this.#connection.offline(attempt);
        await sleep(backoffMs(attempt++), signal);
      }
    }
  }

  #render(overview: FlootOverview): void {
    this.#list.setAttribute("aria-busy", "false");
    const waiting = new Map<string, number>();
    for (const request of overview.secretRequests)
      waiting.set(request.sessionId, (waiting.get(request.sessionId) ?? 0) + 1);
    if (overview.sessions.length === 0) {
      replaceChildren(this.#list, h("p", { class: "empty" }, "No sessions yet. Start one below."));
      return;
    }
    const newestFirst = [...overview.sessions].sort((a, b) => activity(b).localeCompare(activity(a)));
    replaceChildren(
      this.#list,
      h(
        "ul",
        { class: "sessions" },
        newestFirst.map((summary) => sessionRow(summary, waiting.get(summary.session.id) ?? 0)),
      ),
    );
  }

  #newSessionForm(): HTMLElement {
    const backend = h(
      "select",
      { id: "new-backend", class: "input", name: "backend" },
      h("option", { value: "claude" }, "Claude Code"),
      h("option", { value: "codex" }, "Codex"),
    );
    const workspace = h("input", {
      id: "new-workspace",
      class: "input",
      name: "workspace",
      placeholder: "default: a fresh folder in the state dir",
      autocomplete: "off",
      spellcheck: "false",
    });
    const model = h("input", {
      id: "new-model",
      class: "input",
      name: "model",
      placeholder: "the CLI's default",
      autocomplete: "off",
      spellcheck: "false",
    });
    const permission = h(
      "select",
      { id: "new-permission", class: "input", name: "permissionMode" },
      h("option", { value: "" }, "the CLI's default"),
      ["default", "acceptEdits", "dontAsk", "plan", "bypassPermissions"].map((mode) =>
        h("option", { value: mode }, mode),
      ),
    );
    const tools = h("input", {
      id: "new-tools",
      class: "input",
      name: "allowedTools",
      placeholder: "e.g. Bash, Read",
      autocomplete: "off",
      spellcheck: "false",
    });
    const submit = h("button", { type: "submit", class: "button button-primary" }, "Create session");
    const field = (id: string, label: string, control: HTMLElement, hint?: string) =>
      h(
        "div",
        { class: "field" },
        h("label", { for: id }, label),
        control,
        hint ? h("small", { class: "muted" }, hint) : null,
      );
    return h(
      "section",
      { class: "new-session", "aria-labelledby": "new-session-title" },
      h("h2", { id: "new-session-title" }, "New session"),
      h(
        "form",
        {
          "aria-describedby": "new-session-note",
          onsubmit: async (event) => {
            event.preventDefault();
            const body: Record<string, unknown> = { backend: backend.value };
            if (workspace.value.trim()) body.workspace = workspace.value.trim();
            if (model.value.trim()) body.model = model.value.trim();
            if (backend.value === "claude") {
              if (permission.value) body.permissionMode = permission.value;
              const allowed = tools.value
                .split(",")
                .map((each) => each.trim())
                .filter(Boolean);
              if (allowed.length > 0) body.allowedTools = allowed;
            }
            submit.disabled = true;
            try {
              const session = await api<FlootSession>("POST", "/v1/sessions", body);
              location.hash = `#/s/${encodeURIComponent(session.id)}`;
            } catch (error) {
              this.#formNote.textContent =
                error instanceof ApiError ? error.message : "The daemon is not answering; try again.";
              this.#formNote.className = "is-error";
            } finally {
              submit.disabled = false;
            }
          },
        },
        h(
          "div",
          { class: "field-grid" },
          field("new-backend", "Backend", backend),
          field("new-model", "Model", model),
        ),
        field(
          "new-workspace",
          "Workspace",
          workspace,
          "An absolute path; created at the first turn when missing.",
        ),
        h(
          "details",
          { class: "advanced" },
          h("summary", {}, "Claude Code options"),
          h(
            "div",
            { class: "field-grid" },
            field("new-permission", "Permission mode", permission),
            field("new-tools", "Allowed tools", tools),
          ),
        ),
        h("div", { class: "form-row" }, this.#formNote, submit),
      ),
    );
  }
}

function activity(summary: FlootSessionSummary): string {
  return summary.currentTurn?.updatedAt ?? summary.session.createdAt;
}

function sessionRow({ session, currentTurn }: FlootSessionSummary, waiting: number): HTMLElement {
  const turn = currentTurn;
  return h(
    "li",
    { class: "session-row", "data-session-id": session.id },
    h(
      "a",
      { href: `#/s/${encodeURIComponent(session.id)}`, class: "session-link" },
      h(
        "div",
        { class: "session-line" },
        h("span", { class: `badge badge-${session.backend}` }, session.backend),
        h("code", { class: "session-id", title: session.id }, shortId(session.id)),
        h("span", { class: "session-workspace", title: session.workspace }, session.workspace),
        waiting > 0
          ? h(
              "span",
              { class: "chip phase-awaiting_secret" },
              waiting === 1 ? "needs a secret" : `${waiting} secrets`,
            )
          : null,
      ),
      h(
        "div",
        { class: "session-line session-turn" },
        turn
          ? [
              h("span", { class: `chip phase-${turn.phase}` }, phaseLabels[turn.phase]),
              h("span", { class: "turn-prompt" }, `#${turn.seq} ${turn.input.prompt}`),
              session.queuedTurns > 0
                ? h("span", { class: "muted" }, `+${session.queuedTurns} queued`)
                : null,
              h(
                "time",
                { class: "muted", datetime: turn.updatedAt },
                isActive(turn.phase) ? "now" : relativeTime(turn.updatedAt),
              ),
            ]
          : h("span", { class: "muted" }, `No turns yet · created ${relativeTime(session.createdAt)}`),
      ),
    ),
  );
}
