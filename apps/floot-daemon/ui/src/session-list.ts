import type {
  FlootOverview,
  FlootSessionChange,
  FlootSessionSummary,
  SessionStatus,
} from "@bridgeworks/protocol";
import { ApiError, api } from "./api.js";
import { Attention } from "./attention.js";
import type { Connection } from "./connection.js";
import { h, replaceChildren } from "./dom.js";
import type { ChangeStream } from "./session-changes.js";
import { sessionRow } from "./session-row.js";
import { noneWaiting, type Waiting, waitCount, waitingOf, waitingSince } from "./waiting.js";

const pageSize = 50;
const statuses: readonly SessionStatus[] = ["idle", "provisioning", "running", "stopped"];

/**
 * The sessions list: first the inbox, the sessions waiting on a person (an open permission or secret
 * request, or a decision on a call that may have run), the longest waiting first, read from
 * `GET /v1/overview?waiting=true` whatever page they are on; then every other session, one page at a time from `GET /v1/overview` (newest first, `status` and
 * `q` filters applied by the daemon, "Show more" follows `nextCursor`). Both are kept current by
 * `GET /v1/changes` instead of polling: a session moves into the inbox when it starts waiting and back
 * when it is answered. "Needs you" shows the inbox alone; the title and the tab's icon count it.
 */
export class SessionList {
  readonly element: HTMLElement;
  readonly #abort = new AbortController();
  readonly #connection: Connection;
  readonly #stopWatching: () => void;
  readonly #attention = new Attention("Floot · sessions");
  readonly #inbox: HTMLUListElement;
  readonly #inboxHead: HTMLElement;
  readonly #inboxMore: HTMLButtonElement;
  readonly #rows: HTMLUListElement;
  readonly #more: HTMLButtonElement;
  readonly #search: HTMLInputElement;
  readonly #status: HTMLSelectElement;
  readonly #onlyWaiting: HTMLButtonElement;
  /** Rows of the list below the inbox, by session. */
  readonly #shown = new Map<string, HTMLElement>();
  /** Rows of the inbox, by session. */
  readonly #inboxRows = new Map<string, HTMLElement>();
  /** Every session known to wait on a person, with its open requests. */
  readonly #waiting = new Map<string, Waiting>();
  #cursor: string | undefined;
  #waitingCursor: string | undefined;
  #searchTimer: ReturnType<typeof setTimeout> | undefined;
  #generation = 0;

  constructor(connection: Connection, changes: ChangeStream) {
    this.#connection = connection;
    this.#inbox = h("ul", { class: "sessions inbox", id: "inbox", "aria-labelledby": "inbox-title" });
    this.#inboxHead = h("h2", { id: "inbox-title", class: "inbox-title" }, "Needs you");
    this.#inboxMore = h(
      "button",
      { type: "button", class: "button", id: "load-more-waiting", hidden: true },
      "Show more waiting",
    );
    this.#inboxMore.addEventListener("click", () => void this.#loadWaitingPage(this.#generation));
    this.#rows = h("ul", {
      class: "sessions",
      id: "all-sessions",
      "aria-live": "polite",
      "aria-busy": "true",
    });
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
    this.#onlyWaiting = h(
      "button",
      { type: "button", class: "button filter-waiting", id: "only-waiting", "aria-pressed": "false" },
      "Needs you",
    );
    this.#onlyWaiting.addEventListener("click", () => this.#toggleOnlyWaiting());
    this.element = h(
      "div",
      { class: "session-list" },
      h("div", { class: "form-row session-filters" }, this.#search, this.#status, this.#onlyWaiting),
      h("section", { class: "inbox-section", hidden: true }, this.#inboxHead, this.#inbox, this.#inboxMore),
      h("section", { class: "all-section" }, this.#rows, this.#more),
    );
    this.#stopWatching = changes.subscribe({
      onOpen: () => void this.#reload(),
      onChange: (change) => this.#apply(change),
    });
  }

  dispose(): void {
    this.#abort.abort();
    this.#stopWatching();
    clearTimeout(this.#searchTimer);
    this.#attention.dispose();
  }

  async #reload(): Promise<void> {
    this.#generation += 1;
    this.#cursor = undefined;
    this.#waitingCursor = undefined;
    this.#shown.clear();
    this.#inboxRows.clear();
    this.#waiting.clear();
    this.#rows.replaceChildren();
    this.#inbox.replaceChildren();
    this.#rows.setAttribute("aria-busy", "true");
    if (!(await this.#loadWaitingPage(this.#generation))) return;
    await this.#loadPage(this.#generation);
  }

  /** One page of the sessions waiting on a person; false when the list was reloaded meanwhile. */
  async #loadWaitingPage(generation: number): Promise<boolean> {
    const query = new URLSearchParams({ limit: String(pageSize), waiting: "true" });
    if (this.#waitingCursor !== undefined) query.set("cursor", this.#waitingCursor);
    const overview = await this.#overview(query, generation);
    if (!overview) return false;
    const waiting = waitingBySession(overview);
    for (const summary of overview.sessions) {
      const each = waitingOf(summary, waiting.get(summary.session.id));
      if (waitCount(each) === 0) continue;
      this.#waiting.set(summary.session.id, each);
      if (this.#matches(summary)) this.#placeInInbox(summary, each);
    }
    this.#waitingCursor = overview.nextCursor;
    this.#inboxMore.hidden = overview.nextCursor === undefined;
    this.#renderCounts();
    return true;
  }

  async #loadPage(generation: number): Promise<void> {
    const query = new URLSearchParams({ limit: String(pageSize) });
    if (this.#cursor !== undefined) query.set("cursor", this.#cursor);
    if (this.#status.value) query.set("status", this.#status.value);
    if (this.#search.value.trim()) query.set("q", this.#search.value.trim());
    const overview = await this.#overview(query, generation);
    if (!overview) return;
    const waiting = waitingBySession(overview);
    for (const summary of overview.sessions) {
      const id = summary.session.id;
      const each = waitingOf(summary, waiting.get(id));
      if (waitCount(each) > 0) {
        this.#waiting.set(id, each);
        this.#placeInInbox(summary, each);
      } else if (!this.#shown.has(id) && !this.#inboxRows.has(id)) {
        const row = sessionRow(summary, noneWaiting);
        this.#shown.set(id, row);
        this.#rows.append(row);
      }
    }
    this.#cursor = overview.nextCursor;
    this.#more.hidden = overview.nextCursor === undefined;
    this.#rows.setAttribute("aria-busy", "false");
    this.#renderCounts();
  }

  /** One overview page, or undefined when the list was reloaded or left meanwhile (or signed out). */
  async #overview(query: URLSearchParams, generation: number): Promise<FlootOverview | undefined> {
    let overview: FlootOverview;
    try {
      overview = await api<FlootOverview>("GET", `/v1/overview?${query}`);
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) {
        this.#connection.signedOut();
        return undefined;
      }
      throw error;
    }
    if (generation !== this.#generation || this.#abort.signal.aborted) return undefined;
    this.#connection.noteStatus(overview.status);
    await this.#connection.online();
    return overview;
  }

  /**
   * A changed session: into the inbox when it waits on a person, else updated in place, out when it left
   * a filter, and put where its creation places it when it comes back from the inbox or is new.
   */
  #apply({ summary, secretRequests, permissionRequests }: FlootSessionChange): void {
    const id = summary.session.id;
    const waiting = waitingOf(summary, { secrets: secretRequests, permissions: permissionRequests });
    const waits = waitCount(waiting) > 0;
    if (waits) this.#waiting.set(id, waiting);
    else this.#waiting.delete(id);
    const matches = this.#matches(summary);
    if (waits || !matches) this.#remove(this.#shown, id);
    if (!waits || !matches) this.#remove(this.#inboxRows, id);
    if (matches && waits) this.#placeInInbox(summary, waiting);
    else if (matches) this.#placeInList(summary);
    this.#renderCounts();
  }

  /** In the inbox, in the order of how long each has waited. */
  #placeInInbox(summary: FlootSessionSummary, waiting: Waiting): void {
    const id = summary.session.id;
    this.#remove(this.#shown, id);
    this.#remove(this.#inboxRows, id);
    const since = waitingSince(waiting) ?? "";
    const row = sessionRow(summary, waiting);
    row.dataset.waitingSince = since;
    const later = [...this.#inboxRows.values()].find((each) => (each.dataset.waitingSince ?? "") > since);
    this.#inbox.insertBefore(row, later ?? null);
    this.#inboxRows.set(id, row);
  }

  /** In the list below, newest first: replaced in place, or inserted where it belongs if that page is shown. */
  #placeInList(summary: FlootSessionSummary): void {
    const id = summary.session.id;
    const row = sessionRow(summary, noneWaiting);
    const shown = this.#shown.get(id);
    if (shown) {
      shown.replaceWith(row);
      this.#shown.set(id, row);
      return;
    }
    const older = [...this.#shown.values()].find(
      (each) => (each.dataset.createdAt ?? "") < summary.session.createdAt,
    );
    // Older than every row shown while more pages follow: its own page brings it.
    if (!older && this.#cursor !== undefined) return;
    this.#rows.insertBefore(row, older ?? null);
    this.#shown.set(id, row);
  }

  #remove(rows: Map<string, HTMLElement>, id: string): void {
    rows.get(id)?.remove();
    rows.delete(id);
  }

  #matches({ session, currentTurn }: FlootSessionSummary): boolean {
    if (this.#status.value && session.status !== this.#status.value) return false;
    const search = this.#search.value.trim().toLowerCase();
    if (!search) return true;
    const title = (session.title ?? currentTurn?.input.prompt ?? "").toLowerCase();
    return session.id.toLowerCase().startsWith(search) || title.includes(search);
  }

  #toggleOnlyWaiting(): void {
    const only = this.#onlyWaiting.getAttribute("aria-pressed") !== "true";
    this.#onlyWaiting.setAttribute("aria-pressed", String(only));
    this.element.classList.toggle("only-waiting", only);
    this.#renderCounts();
  }

  /** The inbox's heading and visibility, the empty notes, the title's and the icon's count. */
  #renderCounts(): void {
    const count = this.#waiting.size;
    const more = this.#waitingCursor !== undefined;
    this.#attention.show(count, more);
    const only = this.#onlyWaiting.getAttribute("aria-pressed") === "true";
    const label = count === 0 ? "" : ` (${count}${more ? "+" : ""})`;
    this.#onlyWaiting.textContent = `Needs you${label}`;
    this.#inboxHead.textContent = `Needs you${label}`;
    this.#inbox.parentElement!.hidden = this.#inboxRows.size === 0 && !only;
    renderEmpty(this.#inbox, this.#inboxRows.size, "Nothing waits for you.");
    const filtered = this.#status.value !== "" || this.#search.value.trim() !== "";
    const note = filtered ? "No session matches." : "No sessions yet. Start one below.";
    const empty = this.#shown.size === 0 && this.#inboxRows.size === 0;
    renderEmpty(this.#rows, empty ? 0 : 1, note);
  }
}

/** A list's "nothing here" line while it has no rows. */
function renderEmpty(list: HTMLElement, rows: number, note: string): void {
  const empty = list.querySelector(".empty");
  if (rows > 0) {
    empty?.remove();
    return;
  }
  if (empty?.textContent === note) return;
  replaceChildren(list, h("li", { class: "empty" }, note));
}

/** An overview's open requests, by session. */
function waitingBySession({ secretRequests, permissionRequests }: FlootOverview): Map<string, Waiting> {
  const bySession = new Map<
    string,
    { secrets: FlootOverview["secretRequests"]; permissions: FlootOverview["permissionRequests"] }
  >();
  const of = (sessionId: string) => {
    let waiting = bySession.get(sessionId);
    if (!waiting) {
      waiting = { secrets: [], permissions: [] };
      bySession.set(sessionId, waiting);
    }
    return waiting;
  };
  for (const request of secretRequests) of(request.sessionId).secrets.push(request);
  for (const request of permissionRequests) of(request.sessionId).permissions.push(request);
  return bySession;
}
