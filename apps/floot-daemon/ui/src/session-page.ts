import type {
  CliLostDecision,
  FlootEventPage,
  FlootSession,
  FlootTurnList,
  TurnEventEnvelope,
  TurnRecord,
} from "@bridgeworks/protocol";
import { ApiError, api, followTurn, GapError } from "./api.js";
import { backoffMs, type Connection, sleep } from "./connection.js";
import { h, replaceChildren } from "./dom.js";
import { activeWording, isActive } from "./format.js";
import { OpenRequests } from "./open-requests.js";
import { SessionHead } from "./session-head.js";
import { SessionRules } from "./session-rules.js";
import { sessionTotals } from "./session-totals.js";
import { nearBottom, TurnBar } from "./turn-bar.js";
import { TurnView } from "./turn-view.js";

const shownTurnsStep = 20;

/**
 * One session: its turns, the current one followed live. Reattach by identity: on load and after any
 * disconnect the page re-reads the turns, loads each one's events from the last index it holds, asks
 * for the current turn and follows it from there. The page owns no turn; it only observes.
 */
export class SessionPage {
  readonly #sessionId: string;
  readonly #connection: Connection;
  readonly #root: HTMLElement;
  readonly #abort = new AbortController();
  readonly #views = new Map<string, TurnView>();
  #turns: TurnRecord[] = [];
  readonly #requests: OpenRequests;
  readonly #rules: SessionRules;
  readonly #head = new SessionHead();
  #shownTurns = shownTurnsStep;
  #wake: (() => void) | undefined;
  #followAbort: AbortController | undefined;
  readonly #list: HTMLElement;
  readonly #earlier: HTMLElement;
  readonly #prompt: HTMLTextAreaElement;
  readonly #send: HTMLButtonElement;
  readonly #composerNote: HTMLElement;
  #scrollPending = false;
  readonly #bar: TurnBar;
  readonly #totals = h("p", { class: "session-totals muted", "aria-live": "polite" });

  constructor(root: HTMLElement, sessionId: string, connection: Connection) {
    this.#root = root;
    this.#sessionId = sessionId;
    this.#connection = connection;
    this.#requests = new OpenRequests(
      sessionId,
      () => this.#views.values(),
      (on) => this.#head.setWaiting(on),
    );
    this.#rules = new SessionRules(sessionId);
    this.#earlier = h("div", { class: "earlier" });
    this.#list = h("section", { class: "turns", "aria-label": "Turns" });
    this.#prompt = h("textarea", {
      id: "prompt",
      class: "input prompt-input",
      rows: 3,
      placeholder: "Ask the agent…",
      "aria-describedby": "composer-note",
      onkeydown: (event) => {
        const key = event as KeyboardEvent;
        if (key.key === "Enter" && (key.ctrlKey || key.metaKey)) {
          event.preventDefault();
          this.#composer.requestSubmit();
        }
      },
    });
    this.#send = h("button", { type: "submit", class: "button button-primary" }, "Send");
    this.#composerNote = h("span", { id: "composer-note", class: "muted" }, "Ctrl+Enter sends");
    this.#composer = h(
      "form",
      { class: "composer", onsubmit: (event) => void this.#submit(event) },
      h("label", { for: "prompt", class: "visually-hidden" }, "Prompt"),
      this.#prompt,
      h("div", { class: "composer-row" }, this.#composerNote, this.#send),
    );
    this.#bar = new TurnBar(this.#turnActions.cancel, () => this.#scrollToEnd(), this.#abort.signal);
    this.#composer.prepend(this.#bar.element);
    replaceChildren(
      root,
      h("nav", { class: "crumbs" }, h("a", { href: "#/" }, "← Sessions")),
      this.#head.element,
      this.#rules.element,
      this.#earlier,
      this.#list,
      this.#totals,
      this.#composer,
    );
    void this.#run();
  }

  readonly #composer: HTMLFormElement;

  dispose(): void {
    this.#abort.abort();
    this.#followAbort?.abort();
  }

  async #run(): Promise<void> {
    let attempt = 0;
    const signal = this.#abort.signal;
    while (!signal.aborted) {
      try {
        await this.#sync();
        await this.#connection.online();
        attempt = 0;
        // Reattach by identity: whatever this page saw before, the daemon says which turn is current.
        const current = await this.#currentTurn();
        const view = current && isActive(current.phase) ? this.#views.get(current.id) : undefined;
        if (current && view) {
          this.#followAbort = new AbortController();
          const stop = () => this.#followAbort?.abort();
          signal.addEventListener("abort", stop, { once: true });
          try {
            await followTurn(
              current.id,
              view.nextIndex,
              (envelope) => this.#applyLive(view, envelope),
              this.#followAbort.signal,
            );
          } finally {
            signal.removeEventListener("abort", stop);
          }
          continue;
        }
        await this.#idle(3_000);
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof GapError || (error instanceof DOMException && error.name === "AbortError"))
          continue;
        if (error instanceof ApiError && error.status === 401) return this.#connection.signedOut();
        if (error instanceof ApiError && error.status === 404 && this.#turns.length === 0) {
          replaceChildren(
            this.#root,
            h("h1", {}, "No such session"),
            h("p", {}, h("a", { href: "#/" }, "Back to the sessions")),
          );
          return;
        }
        if (!(error instanceof ApiError)) this.#connection.offline(attempt);
        await sleep(backoffMs(attempt++), signal);
      }
    }
  }

  async #currentTurn(): Promise<TurnRecord | undefined> {
    try {
      return await api<TurnRecord>("GET", `/v1/sessions/${encodeURIComponent(this.#sessionId)}/current-turn`);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return undefined;
      throw error;
    }
  }

  /** Waits `ms`, or less when this page changed something (sent, retried, cancelled, answered). */
  #idle(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = done;
      this.#abort.signal.addEventListener("abort", done, { once: true });
    });
  }

  #poke(): void {
    this.#wake?.();
    this.#wake = undefined;
  }

  async #sync(): Promise<void> {
    const id = encodeURIComponent(this.#sessionId);
    const [session, list] = await Promise.all([
      api<FlootSession>("GET", `/v1/sessions/${id}`),
      api<FlootTurnList>("GET", `/v1/sessions/${id}/turns`),
    ]);
    const stick = this.#turns.length === 0 || nearBottom();
    // The list was read before events the live stream may have applied since: a view that holds more of
    // a turn's events than the list counted keeps its own record (never a phase older than it showed).
    const newest = (turn: TurnRecord) => {
      const view = this.#views.get(turn.id);
      return view !== undefined && view.nextIndex > turn.eventCount ? view.record : turn;
    };
    const turns = list.turns.map(newest);
    this.#turns = turns;
    this.#head.show(session);
    const shown = turns.slice(-this.#shownTurns);
    this.#renderEarlier(turns.length - shown.length);
    for (const turn of shown) {
      let view = this.#views.get(turn.id);
      if (!view) {
        view = new TurnView(turn, this.#turnActions);
        this.#views.set(turn.id, view);
        this.#insert(view);
      }
      view.update(turn);
      // Everything journaled so far, from the last index this page holds: nothing twice, nothing skipped.
      while (view.nextIndex < turn.eventCount) {
        const page = await api<FlootEventPage>(
          "GET",
          `/v1/turns/${encodeURIComponent(turn.id)}/events?from=${view.nextIndex}`,
        );
        if (page.events.length === 0) break;
        // The page may run past the list's count: a phase read there is the turn's newest.
        for (const envelope of page.events) if (view.append(envelope)) this.#applyPhase(view, envelope.event);
      }
    }
    for (const view of this.#views.values()) view.update(view.record);
    await Promise.all([this.#requests.refresh(), this.#rules.refresh(session)]);
    this.#renderComposer();
    this.#renderTotals(turns.length - shown.length);
    if (stick) this.#scrollToEnd();
  }

  #renderTotals(hidden: number): void {
    const usages = [...this.#views.values()].map((view) => view.usage);
    this.#totals.textContent = sessionTotals(usages, hidden);
  }

  #insert(view: TurnView): void {
    const after = [...this.#list.children].find(
      (child) => Number((child as HTMLElement).dataset.seq) > view.record.seq,
    );
    view.element.dataset.seq = String(view.record.seq);
    this.#list.insertBefore(view.element, after ?? null);
  }

  #applyLive(view: TurnView, envelope: Parameters<TurnView["append"]>[0]): void {
    const stick = nearBottom();
    if (!view.append(envelope)) return;
    const { event } = envelope;
    if (event.type === "usage") this.#renderTotals(this.#turns.length - this.#views.size);
    if (this.#applyPhase(view, event)) this.#renderComposer();
    if (stick) this.#scrollToEnd();
    else this.#bar.missed();
  }

  /** A phase or terminal event moves its turn's record, however it was read (live, or paged). */
  #applyPhase(view: TurnView, event: TurnEventEnvelope["event"]): boolean {
    if (event.type !== "phase" && event.type !== "terminal") return false;
    const phase = event.type === "phase" ? event.phase : event.outcome;
    const error = event.type === "terminal" ? event.error : view.record.error;
    view.update({ ...view.record, phase, eventCount: view.nextIndex, ...(error && { error }) });
    this.#turns = this.#turns.map((turn) => (turn.id === view.record.id ? view.record : turn));
    return true;
  }

  readonly #turnActions = {
    cancel: (turn: TurnRecord) => void this.#act(`/v1/turns/${encodeURIComponent(turn.id)}/cancel`),
    retry: (turn: TurnRecord) => void this.#act(`/v1/turns/${encodeURIComponent(turn.id)}/retry`),
    decideCliLost: (turn: TurnRecord, decision: CliLostDecision) =>
      void this.#act(`/v1/turns/${encodeURIComponent(turn.id)}/cli-lost-decision`, { decision }),
    secretsChanged: () => this.#requests.soon(),
    secretSubmitted: () => {
      this.#followAbort?.abort();
      this.#poke();
    },
    approvals: {
      changed: () => this.#requests.soon(),
      decided: ({ deliveredTo }: { deliveredTo: "call" | "retry" }) => {
        void this.#rules.refresh().catch(() => undefined);
        // A retry changes which turn is current: reattach.
        if (deliveredTo === "retry") this.#followAbort?.abort();
        this.#poke();
      },
    },
    waitingChanged: () => this.#renderComposer(),
    successorOf: (turn: TurnRecord) =>
      this.#turns.find(
        (each) => each.retryOf === turn.id || each.replayOf === turn.id || each.continues === turn.id,
      ),
  };

  async #act(path: string, body?: unknown): Promise<void> {
    try {
      await api("POST", path, body);
    } catch (error) {
      this.#flash(error instanceof ApiError ? error.message : "The daemon is not answering; try again.");
    }
    // A retry or cancel changes which turn is current: reattach.
    this.#followAbort?.abort();
    this.#poke();
  }

  async #submit(event: Event): Promise<void> {
    event.preventDefault();
    const prompt = this.#prompt.value.trim();
    if (!prompt) return;
    this.#send.disabled = true;
    try {
      await api("POST", `/v1/sessions/${encodeURIComponent(this.#sessionId)}/turns`, { prompt });
      this.#prompt.value = "";
      this.#poke();
    } catch (error) {
      this.#flash(
        error instanceof ApiError ? error.message : "The daemon is not answering; your prompt is still here.",
      );
    } finally {
      this.#send.disabled = false;
    }
  }

  #flash(message: string): void {
    this.#composerNote.textContent = message;
    this.#composerNote.className = "is-error";
  }

  #renderComposer(): void {
    const active = this.#turns.find((turn) => isActive(turn.phase));
    const queued = this.#turns.filter((turn) => turn.phase === "queued").length;
    this.#send.textContent = active ? "Queue" : "Send";
    this.#bar.setActive(active);
    this.#composerNote.className = "muted";
    const doing = this.#views.get(active?.id ?? "")?.waitingForApproval
      ? "is waiting for your approval (the request is in the turn)"
      : activeWording[active?.phase ?? "running"];
    this.#composerNote.textContent = active
      ? `Turn #${active.seq} ${doing ?? "is running"}; a prompt sent now waits for it${queued ? ` (${queued} queued)` : ""}.`
      : "Ctrl+Enter sends";
  }

  #renderEarlier(hidden: number): void {
    replaceChildren(
      this.#earlier,
      hidden > 0
        ? h(
            "button",
            {
              type: "button",
              class: "button button-quiet",
              onclick: () => {
                this.#shownTurns += shownTurnsStep;
                this.#poke();
              },
            },
            `Show ${Math.min(hidden, shownTurnsStep)} earlier turns`,
          )
        : null,
    );
  }

  #scrollToEnd(): void {
    if (this.#scrollPending) return;
    this.#scrollPending = true;
    requestAnimationFrame(() => {
      this.#scrollPending = false;
      window.scrollTo({ top: document.documentElement.scrollHeight });
    });
  }
}
