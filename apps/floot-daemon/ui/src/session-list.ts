import type {
  FlootOverview,
  FlootSessionChange,
  FlootSessionSummary,
  SessionStatus,
} from "@bridgeworks/protocol";
import { ApiError, api } from "./api.js";
import { backoffMs, type Connection, sleep } from "./connection.js";
import { h, replaceChildren } from "./dom.js";
import { isActive, phaseLabels, relativeTime, shortId } from "./format.js";
import { watchSessionChanges } from "./session-changes.js";

const pageSize = 50;
const statuses: readonly SessionStatus[] = ["idle", "provisioning", "running", "stopped"];

/**
 * The sessions list: one page at a time from `GET /v1/overview` (newest first, `status` and `q` filters
 * applied by the daemon, "Show more" follows `nextCursor`), kept current by `GET /v1/changes` instead of
 * polling. It never asks for every session.
 */
export class SessionList {
  readonly element: HTMLElement;
  readonly #abort = new AbortController();
  readonly #connection: Connection;
  readonly #rows: HTMLElement;
  readonly #more: HTMLButtonElement;
  readonly #search: HTMLInputElement;
  readonly #status: HTMLSelectElement;
  readonly #shown = new Map<string, HTMLElement>();
  /** Per session: its open requests, secret and permission (what waits on a human). */
  readonly #waiting = new Map<string, Waiting>();
  #cursor: string | undefined;
  #searchTimer: ReturnType<typeof setTimeout> | undefined;
  #generation = 0;

  constructor(connection: Connection) {
    this.#connection = connection;
    this.#rows = h("ul", { class: "sessions", "aria-live": "polite", "aria-busy": "true" });
    this.#more = h("button", { type: "button", class: "button", id: "load-more", hidden: true }, "Show more");
    this.#more.addEventListener("click", () => void this.#loadPage(this.#generation));
    this.#search = h("input", {
      id: "session-search",
      class: "input",
      type: "search",
      placeholder: "Search by title or id",
      autocomplete: "off",
      spellcheck: "false",
      "aria-label": "Search sessions",
    });
    this.#search.addEventListener("input", () => {
      clearTimeout(this.#searchTimer);
      this.#searchTimer = setTimeout(() => void this.#reload(), 250);
    });
    this.#status = h(
      "select",
      { id: "session-status", class: "input", "aria-label": "Filter by status" },
      h("option", { value: "" }, "Any status"),
      statuses.map((status) => h("option", { value: status }, status)),
    );
    this.#status.addEventListener("change", () => void this.#reload());
    this.element = h(
      "div",
      { class: "session-list" },
      h("div", { class: "form-row session-filters" }, this.#search, this.#status),
      this.#rows,
      this.#more,
    );
    void this.#watch();
  }

  dispose(): void {
    this.#abort.abort();
    clearTimeout(this.#searchTimer);
  }

  /** Follows changes for as long as the page is open; after any outage, reloads the first page. */
  async #watch(): Promise<void> {
    const signal = this.#abort.signal;
    let attempt = 0;
    while (!signal.aborted) {
      try {
        await watchSessionChanges(
          () => void this.#reload().then(() => (attempt = 0)),
          (change) => this.#apply(change),
          signal,
        );
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof ApiError && error.status === 401) return this.#connection.signedOut();
        this.#connection.offline(attempt);
        await sleep(backoffMs(attempt++), signal);
      }
    }
  }

  async #reload(): Promise<void> {
    this.#generation += 1;
    this.#cursor = undefined;
    this.#shown.clear();
    this.#waiting.clear();
    this.#rows.replaceChildren();
    this.#rows.setAttribute("aria-busy", "true");
    await this.#loadPage(this.#generation);
  }

  async #loadPage(generation: number): Promise<void> {
    const query = new URLSearchParams({ limit: String(pageSize) });
    if (this.#cursor !== undefined) query.set("cursor", this.#cursor);
    if (this.#status.value) query.set("status", this.#status.value);
    if (this.#search.value.trim()) query.set("q", this.#search.value.trim());
    let overview: FlootOverview;
    try {
      overview = await api<FlootOverview>("GET", `/v1/overview?${query}`);
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return this.#connection.signedOut();
      throw error;
    }
    if (generation !== this.#generation || this.#abort.signal.aborted) return;
    this.#connection.noteGeneration(overview.status.generation);
    await this.#connection.online();
    this.#countWaiting(overview.secretRequests, "secrets");
    this.#countWaiting(overview.permissionRequests, "permissions");
    for (const summary of overview.sessions) {
      if (this.#shown.has(summary.session.id)) continue;
      const row = sessionRow(summary, this.#waiting.get(summary.session.id) ?? noneWaiting);
      this.#shown.set(summary.session.id, row);
      this.#rows.append(row);
    }
    this.#cursor = overview.nextCursor;
    this.#more.hidden = overview.nextCursor === undefined;
    this.#rows.setAttribute("aria-busy", "false");
    this.#renderEmpty();
  }

  /** A changed session: updated in place, removed when it left the filter, added on top when new. */
  #apply({ summary, secretRequests, permissionRequests }: FlootSessionChange): void {
    const id = summary.session.id;
    const waiting = { secrets: secretRequests.length, permissions: permissionRequests.length };
    this.#waiting.set(id, waiting);
    const row = sessionRow(summary, waiting);
    const shown = this.#shown.get(id);
    if (!this.#matches(summary)) {
      shown?.remove();
      this.#shown.delete(id);
    } else if (shown) {
      shown.replaceWith(row);
      this.#shown.set(id, row);
    } else if (this.#isNewest(summary)) {
      this.#rows.prepend(row);
      this.#shown.set(id, row);
    }
    this.#renderEmpty();
  }

  #matches({ session, currentTurn }: FlootSessionSummary): boolean {
    if (this.#status.value && session.status !== this.#status.value) return false;
    const search = this.#search.value.trim().toLowerCase();
    if (!search) return true;
    const title = (session.title ?? currentTurn?.input.prompt ?? "").toLowerCase();
    return session.id.toLowerCase().startsWith(search) || title.includes(search);
  }

  /** Newer than every row shown: it belongs on top of the first page. */
  #isNewest({ session }: FlootSessionSummary): boolean {
    const first = this.#rows.firstElementChild?.getAttribute("data-created-at");
    return first === null || first === undefined || session.createdAt >= first;
  }

  #countWaiting(requests: readonly { sessionId: string }[], kind: keyof Waiting): void {
    for (const { sessionId } of requests) {
      const waiting = this.#waiting.get(sessionId) ?? { ...noneWaiting };
      waiting[kind] += 1;
      this.#waiting.set(sessionId, waiting);
    }
  }

  #renderEmpty(): void {
    const empty = this.#rows.querySelector(".empty");
    if (this.#shown.size > 0) {
      empty?.remove();
      return;
    }
    if (empty) return;
    const filtered = this.#status.value !== "" || this.#search.value.trim() !== "";
    replaceChildren(
      this.#rows,
      h("li", { class: "empty" }, filtered ? "No session matches." : "No sessions yet. Start one below."),
    );
  }
}

interface Waiting {
  secrets: number;
  permissions: number;
}

const noneWaiting: Waiting = { secrets: 0, permissions: 0 };

/** The badge of a session waiting on a human, or nothing. */
function waitingBadge({ secrets, permissions }: Waiting): HTMLElement | null {
  if (secrets + permissions === 0) return null;
  const text =
    permissions === 0
      ? secrets === 1
        ? "needs a secret"
        : `${secrets} secrets`
      : secrets === 0
        ? permissions === 1
          ? "needs approval"
          : `${permissions} approvals`
        : `${secrets + permissions} requests`;
  return h(
    "span",
    { class: "chip phase-awaiting_secret waiting-badge", "data-waiting": secrets + permissions },
    text,
  );
}

function sessionRow({ session, currentTurn }: FlootSessionSummary, waiting: Waiting): HTMLElement {
  const turn = currentTurn;
  return h(
    "li",
    { class: "session-row", "data-session-id": session.id, "data-created-at": session.createdAt },
    h(
      "a",
      { href: `#/s/${encodeURIComponent(session.id)}`, class: "session-link" },
      h(
        "div",
        { class: "session-line" },
        h("span", { class: `badge badge-${session.backend}` }, session.backend),
        h("code", { class: "session-id", title: session.id }, shortId(session.id)),
        session.title ? h("span", { class: "session-title" }, session.title) : null,
        h("span", { class: "session-workspace", title: session.workspace }, session.workspace),
        waitingBadge(waiting),
      ),
      h(
        "div",
        { class: "session-line session-turn" },
        turn
          ? [
              isActive(turn.phase) && waiting.permissions > 0
                ? h("span", { class: "chip phase-awaiting_approval" }, "waiting for your approval")
                : h("span", { class: `chip phase-${turn.phase}` }, phaseLabels[turn.phase]),
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
