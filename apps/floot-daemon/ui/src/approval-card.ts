import type {
  DecidePermissionResponse,
  PermissionRequest,
  PermissionRequestedEvent,
  PermissionResolvedEvent,
  TurnEvent,
} from "@bridgeworks/protocol";
import { ApiError, api } from "./api.js";
import { outcomeOf } from "./approval-outcome.js";
import { h, replaceChildren } from "./dom.js";
import { clockTime, toolLabel } from "./format.js";

export interface ApprovalActions {
  /** A request appeared or changed: the open list is worth asking for again. */
  changed(): void;
  /** Decided through this page (`deliveredTo: "retry"` started a retry: the page reattaches). */
  decided(answer: DecidePermissionResponse): void;
}

type CardState = "pending" | "orphaned" | "closed";

let cardCount = 0;

/**
 * The permission requests of one turn, as cards built from its journaled events (so a reload or a
 * restart rebuilds them), kept current by the open list (`GET /v1/permission-requests`): an open card
 * offers allow once, allow for this session (with the rule it stores) and deny with a message.
 */
export class PermissionCards {
  readonly #cards = new Map<string, PermissionCard>();
  readonly #actions: ApprovalActions;
  readonly #onChange: () => void;

  /** `onChange`: a card opened, closed or learnt which call it is about (see `waiting`). */
  constructor(actions: ApprovalActions, onChange: () => void) {
    this.#actions = actions;
    this.#onChange = onChange;
  }

  /**
   * Undefined when no request of this turn waits on a person; else the tool ids of the calls that wait
   * (known once the open list named them).
   */
  waiting(): ReadonlySet<string> | undefined {
    const pending = [...this.#cards.values()].filter((card) => card.state === "pending");
    return pending.length === 0 ? undefined : new Set(pending.flatMap((card) => card.toolCallKey ?? []));
  }

  /** Applies a permission event (any other event is ignored); `add` places a new element in the turn. */
  apply(event: TurnEvent, add: (element: HTMLElement) => void): void {
    if (event.type === "permission.requested") {
      const card = new PermissionCard(event, this.#actions, this.#onChange);
      this.#cards.set(event.requestId, card);
      add(card.element);
      this.#actions.changed();
    } else if (event.type === "permission.resolved") {
      const card = this.#cards.get(event.requestId);
      if (card) card.resolved(event);
      else if (event.status === "applied")
        add(
          h("div", { class: "note" }, "A decision made while an earlier turn was interrupted applied here."),
        );
      this.#actions.changed();
    }
  }

  /** The open requests (pending or orphaned) of the session. */
  setOpen(open: ReadonlyMap<string, PermissionRequest>): void {
    for (const [requestId, card] of this.#cards) card.setOpen(open.get(requestId));
  }
}

class PermissionCard {
  readonly element: HTMLElement;
  readonly #requestId: string;
  readonly #actions: ApprovalActions;
  readonly #choices: HTMLElement;
  readonly #note: HTMLElement;
  readonly #expiry: HTMLElement;
  /** The whole call, as the daemon wrote it to be shown; a decision names the digest of its text. */
  readonly #shown: HTMLElement;
  readonly #rule: HTMLTextAreaElement;
  readonly #message: HTMLInputElement;
  #state: CardState = "pending";
  /** The call's tool id, from the open list. */
  toolCallKey: string | undefined;
  readonly #onChange: () => void;
  #expiresAt: number | undefined;
  #ticker: ReturnType<typeof setInterval> | undefined;
  #checking = false;

  constructor(event: PermissionRequestedEvent, actions: ApprovalActions, onChange: () => void) {
    this.#requestId = event.requestId;
    this.#actions = actions;
    this.#onChange = onChange;
    const id = `permission-${++cardCount}`;
    // A textarea: an exact command as a rule may span lines.
    this.#rule = h(
      "textarea",
      {
        id: `${id}-rule`,
        class: "input input-mono permission-rule",
        rows: Math.min(6, (event.suggestedRule ?? "").split("\n").length),
        autocomplete: "off",
        spellcheck: "false",
        placeholder: "No rule covers only this call: type one",
        "aria-label": "Rule to store for this session",
      },
      event.suggestedRule ?? "",
    );
    this.#shown = h("pre", { class: "permission-input", tabindex: "0" }, event.inputSummary);
    this.#message = h("input", {
      id: `${id}-message`,
      class: "input",
      autocomplete: "off",
      placeholder: "Optional message to the agent",
      "aria-label": "Message to the agent",
    });
    const button = (label: string, className: string, onclick: () => void) =>
      h("button", { type: "button", class: `button ${className}`, onclick }, label);
    this.#choices = h(
      "div",
      { class: "permission-choices" },
      h(
        "div",
        { class: "permission-row" },
        button("Allow once", "button-primary", () => void this.#decide("allow", { scope: "once" })),
      ),
      h(
        "div",
        { class: "permission-row" },
        button("Allow for this session", "", () => {
          const rule = this.#rule.value.trim();
          void this.#decide("allow", rule ? { scope: "session", rule } : { scope: "session" });
        }),
        h("label", { for: `${id}-rule`, class: "muted" }, "stores the rule"),
        this.#rule,
      ),
      h(
        "div",
        { class: "permission-row" },
        button("Deny", "button-danger", () => {
          const message = this.#message.value.trim();
          void this.#decide("deny", message ? { message } : {});
        }),
        this.#message,
      ),
    );
    this.#note = h("p", { class: "permission-note", role: "status" });
    this.#expiry = h("p", { class: "permission-expiry muted" });
    this.element = h(
      "section",
      {
        class: "permission-card",
        "data-permission-request": event.requestId,
        "data-status": "pending",
        "aria-label": `Permission request: ${event.toolName}`,
      },
      h(
        "div",
        { class: "permission-title" },
        "Permission requested: ",
        h("code", {}, toolLabel(event.toolName)),
      ),
      this.#shown,
      sizeNote(event.inputSummary),
      h(
        "p",
        { class: "permission-rules muted" },
        event.unmatchedRules.length === 0
          ? "This session has no rule that allows it."
          : ["Not covered by this session's rules: ", ...ruleList(event.unmatchedRules)],
      ),
      this.#expiry,
      this.#choices,
      this.#note,
    );
  }

  resolved(event: PermissionResolvedEvent): void {
    if (event.status === "applied") {
      this.#note.append(" It reached the call.");
      return;
    }
    if (event.status === "orphaned") {
      this.#setState("orphaned");
      return;
    }
    this.#close(outcomeOf(event.status, event.rule, event.message, event.by));
  }

  get state(): CardState {
    return this.#state;
  }

  setOpen(request: PermissionRequest | undefined): void {
    if (request) {
      this.toolCallKey = request.toolCallKey;
      this.#setState(request.status === "orphaned" ? "orphaned" : "pending");
      this.#expiresAt = request.expiresAt === undefined ? undefined : Date.parse(request.expiresAt);
      this.#renderExpiry();
    } else if (this.#state !== "closed") void this.#check();
  }

  /** Not in the open list: the events did not say how it ended (decided after a restart). Ask. */
  async #check(): Promise<void> {
    if (this.#checking) return;
    this.#checking = true;
    try {
      const request = await api<PermissionRequest>(
        "GET",
        `/v1/permission-requests/${encodeURIComponent(this.#requestId)}`,
      );
      if (request.status === "pending" || request.status === "orphaned") this.#setState(request.status);
      else this.#closeWith(request);
    } catch {
      // The next open list asks again.
    } finally {
      this.#checking = false;
    }
  }

  async #decide(behavior: "allow" | "deny", body: Record<string, string>): Promise<void> {
    for (const each of this.#choices.querySelectorAll("button")) each.disabled = true;
    try {
      const shownDigest = await sha256Hex(this.#shown.textContent ?? "");
      const answer = await api<DecidePermissionResponse>(
        "POST",
        `/v1/permission-requests/${encodeURIComponent(this.#requestId)}/${behavior}`,
        { ...body, shownDigest },
      );
      this.#closeWith(answer.request);
      if (answer.deliveredTo === "retry") this.#note.append(" A retry of the interrupted turn carries it.");
      this.#actions.decided(answer);
    } catch (error) {
      for (const each of this.#choices.querySelectorAll("button")) each.disabled = false;
      this.#note.className = "permission-note is-error";
      this.#note.textContent = `Not decided: ${error instanceof ApiError ? error.message : "the daemon is not answering; try again"}.`;
      this.#actions.changed();
    }
  }

  #closeWith(request: PermissionRequest): void {
    const decision = request.decision;
    const rule = decision?.behavior === "allow" ? decision.rule : undefined;
    const message = decision?.behavior === "deny" ? decision.message : undefined;
    this.#close(outcomeOf(request.status, rule, message, request.decidedBy));
  }

  #setState(state: "pending" | "orphaned"): void {
    if (this.#state === "closed") return;
    this.#state = state;
    this.element.dataset.status = state;
    this.#note.className = "permission-note";
    this.#note.textContent =
      state === "orphaned"
        ? "Its turn was interrupted by a daemon restart. Deciding starts a retry that receives the decision."
        : "";
    this.#onChange();
  }

  #close(outcome: { status: string; text: string }): void {
    this.#state = "closed";
    this.element.dataset.status = outcome.status;
    this.#choices.remove();
    this.#expiresAt = undefined;
    this.#renderExpiry();
    this.#note.className = `permission-note outcome-${outcome.status}`;
    this.#note.textContent = outcome.text;
    this.#onChange();
  }

  #renderExpiry(): void {
    const expiresAt = this.#expiresAt;
    if (expiresAt === undefined || this.#state !== "pending") {
      clearInterval(this.#ticker);
      this.#ticker = undefined;
      replaceChildren(this.#expiry);
      return;
    }
    const left = Math.max(0, Math.ceil((expiresAt - Date.now()) / 1000));
    replaceChildren(
      this.#expiry,
      "Denied automatically at ",
      h(
        "time",
        { datetime: new Date(expiresAt).toISOString() },
        clockTime(new Date(expiresAt).toISOString()),
      ),
      ` (in ${left} s) unless you decide.`,
    );
    this.#ticker ??= setInterval(() => {
      // A card taken off the page (another route) stops counting.
      if (!this.element.isConnected && this.element.dataset.shown === "1") this.#expiresAt = undefined;
      if (this.element.isConnected) this.element.dataset.shown = "1";
      this.#renderExpiry();
    }, 1_000);
  }
}

/** Under a call too long to read at a glance: how long it is, so nobody takes the first lines for all. */
function sizeNote(shown: string): HTMLElement | undefined {
  const lines = shown.split("\n").length;
  if (shown.length <= 600 && lines <= 10) return undefined;
  const count = (n: number, unit: string) => `${n.toLocaleString("en")} ${unit}${n === 1 ? "" : "s"}`;
  return h(
    "p",
    { class: "permission-size muted" },
    `${count(shown.length, "character")} in ${count(lines, "line")}: scroll the block to read all of it.`,
  );
}

/** What a decision names: SHA-256 (hex) of the UTF-8 of the text the card shows. */
async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

function ruleList(rules: readonly string[]): HTMLElement[] {
  return rules.flatMap((rule, index) => [...(index > 0 ? [h("span", {}, ", ")] : []), h("code", {}, rule)]);
}
