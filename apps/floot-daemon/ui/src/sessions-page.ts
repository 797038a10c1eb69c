import type { FlootSession } from "@bridgeworks/protocol";
import { ApiError, api } from "./api.js";
import { BackendChoice } from "./backend-choice.js";
import type { Connection } from "./connection.js";
import { h, replaceChildren } from "./dom.js";
import type { Notifications } from "./notifications.js";
import { SearchPanel } from "./search-panel.js";
import type { ChangeStream } from "./session-changes.js";
import { SessionList } from "./session-list.js";

/**
 * The new-session form first (with an optional first prompt, sent as its first turn), then the
 * full-text search (search-panel.ts) and the sessions list (the inbox first, paged, searchable by
 * title, pushed changes; see session-list.ts), and the notifications' control.
 */
export class SessionsPage {
  readonly #list: SessionList;
  readonly #formNote: HTMLElement;
  readonly #notifications: Notifications;
  readonly #notifyControl: HTMLButtonElement;

  constructor(
    root: HTMLElement,
    connection: Connection,
    { changes, notifications }: { changes: ChangeStream; notifications: Notifications },
  ) {
    this.#list = new SessionList(connection, changes);
    this.#notifications = notifications;
    this.#notifyControl = notifications.control();
    this.#formNote = h("p", { class: "muted", id: "new-session-note" });
    replaceChildren(
      root,
      h(
        "header",
        { class: "page-head page-head-row" },
        h("h1", { tabindex: "-1" }, "Sessions"),
        this.#notifyControl,
      ),
      this.#newSessionForm(),
      new SearchPanel().element,
      this.#list.element,
    );
  }

  dispose(): void {
    this.#list.dispose();
    this.#notifications.forget(this.#notifyControl);
  }

  #newSessionForm(): HTMLElement {
    const prompt = h("textarea", {
      id: "new-prompt",
      class: "input",
      name: "prompt",
      rows: 2,
      placeholder: "Optional: what the agent should do first",
    });
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
    const unconfined = h("input", { id: "new-unconfined", type: "checkbox", name: "unconfined" });
    const hosts = h("input", {
      id: "new-hosts",
      class: "input",
      name: "allowedHosts",
      placeholder: "e.g. registry.npmjs.org, *.github.com",
      autocomplete: "off",
      spellcheck: "false",
    });
    const submit = h("button", { type: "submit", class: "button button-primary" }, "Create session");
    const choice = new BackendChoice(backend, submit);
    void choice.load();
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
            const allowedHosts = hosts.value
              .split(",")
              .map((each) => each.trim())
              .filter(Boolean);
            if (unconfined.checked) body.sandbox = { enabled: false };
            else if (allowedHosts.length > 0) body.sandbox = { enabled: true, allowedHosts };
            submit.disabled = true;
            const said = (error: unknown) =>
              error instanceof ApiError ? error.message : "The daemon is not answering; try again.";
            let session: FlootSession;
            try {
              session = await api<FlootSession>("POST", "/v1/sessions", body);
            } catch (error) {
              this.#formNote.textContent = said(error);
              this.#formNote.className = "is-error";
              submit.disabled = false;
              return;
            }
            const first = prompt.value.trim();
            try {
              if (first)
                await api("POST", `/v1/sessions/${encodeURIComponent(session.id)}/turns`, { prompt: first });
              location.hash = `#/s/${encodeURIComponent(session.id)}`;
            } catch (error) {
              // The session stands (the list shows it); its first prompt stays here to send again there.
              this.#formNote.textContent = `Session ${session.id.slice(0, 8)} was created, but its first prompt was not sent: ${said(error)}`;
              this.#formNote.className = "is-error";
            } finally {
              submit.disabled = false;
            }
          },
        },
        field("new-prompt", "First prompt", prompt, "Sent as the session's first turn."),
        // What a new session needs at once; the rest in Options, so the inbox below stays near the top.
        h("div", { class: "form-row new-session-go" }, field("new-backend", "Backend", backend), submit),
        choice.note,
        h(
          "details",
          { class: "advanced" },
          h("summary", {}, "Options: model, workspace, sandbox"),
          h(
            "div",
            { class: "field-grid" },
            field("new-model", "Model", model),
            field(
              "new-workspace",
              "Workspace",
              workspace,
              "An absolute path; created at the first turn when missing.",
            ),
          ),
          h(
            "details",
            { class: "advanced" },
            h("summary", {}, "Sandbox"),
            field(
              "new-hosts",
              "Hosts its commands may reach",
              hosts,
              "Commands run in the CLI's sandbox: the workspace writable, the daemon and other sessions out of reach, no network but these hosts.",
            ),
            h(
              "div",
              { class: "field field-check" },
              unconfined,
              h("label", { for: "new-unconfined" }, "Run its commands without a sandbox (unconfined)"),
            ),
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
        ),
        h("div", { class: "form-row" }, this.#formNote),
      ),
    );
  }
}
