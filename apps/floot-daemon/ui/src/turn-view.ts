import {
  type CliLostDecision,
  mayHaveRunErrorCode,
  type PermissionRequest,
  type SecretRequest,
  type TurnEventEnvelope,
  type TurnRecord,
  type UsageEvent,
} from "@bridgeworks/protocol";
import { GapError } from "./api.js";
import { type ApprovalActions, PermissionCards } from "./approval-card.js";
import { cliLostCard, waitsOnCliLostDecision } from "./cli-lost-card.js";
import { h, replaceChildren } from "./dom.js";
import { FileEdits } from "./file-edits.js";
import { clockTime, contextUse, isActive, isEnded, phaseLabels, retryablePhases, tokens } from "./format.js";
import { MarkdownText } from "./markdown.js";
import { SecretForm, secretCard } from "./secret-form.js";
import {
  completeToolCard,
  type OpenCallState,
  setOpenCallState,
  type ToolCard,
  toolCard,
} from "./tool-card.js";
import { ToolRuns } from "./tool-group.js";
import { TurnChanges } from "./turn-changes.js";
import { jumpLink, lineage, successorLabel } from "./turn-links.js";

export interface TurnActions {
  cancel(turn: TurnRecord): void;
  retry(turn: TurnRecord): void;
  /** A person's choice for a turn whose CLI was gone while a call may have run. */
  decideCliLost(turn: TurnRecord, decision: CliLostDecision): void;
  /** A secret request appeared or was resolved: the open list is worth asking for again. */
  secretsChanged(): void;
  /** A secret was submitted through this page. */
  secretSubmitted(): void;
  /** The turn a later turn retries or replays (to link to it). */
  successorOf(turn: TurnRecord): TurnRecord | undefined;
  approvals: ApprovalActions;
  /** Whether the turn waits on a person's approval changed (see `waitingForApproval`). */
  waitingChanged(): void;
}

/**
 * One turn, rendered from its journaled events as they come: events are applied once each, in index
 * order (an event already applied is ignored, one past a gap is refused), so a replay after a reload or
 * a reconnect never shows anything twice.
 */
export class TurnView {
  readonly element: HTMLElement;
  record: TurnRecord;
  nextIndex = 0;
  usage: UsageEvent | undefined;
  readonly #actions: TurnActions;
  readonly #phase: HTMLElement;
  readonly #controls: HTMLElement;
  readonly #body: HTMLElement;
  readonly #outcome: HTMLElement;
  readonly #usage: HTMLElement;
  readonly #tools = new Map<string, ToolCard>();
  readonly #secretCards = new Map<string, { element: HTMLElement; slot: HTMLElement; name: string }>();
  readonly #secretForms = new Map<string, SecretForm>();
  readonly #fileEdits = new FileEdits();
  /** Consecutive calls fold into a group (diffs stay in view, outside any). */
  readonly #runs = new ToolRuns();
  readonly #changes = new TurnChanges();
  readonly #permissions: PermissionCards;
  /** The `error` events shown, by message: the turn's final error is shown once, as its outcome. */
  readonly #errorNotes: { message: string; element: HTMLElement }[] = [];
  #waiting = false;
  #streaming: MarkdownText | undefined;
  /** The index of the event being applied: every element it adds is tagged with it. */
  #applying = 0;

  constructor(record: TurnRecord, actions: TurnActions) {
    this.record = record;
    this.#actions = actions;
    this.#permissions = new PermissionCards(actions.approvals, () => this.#renderWaiting());
    this.#phase = h("span", { class: "chip" });
    this.#controls = h("span", { class: "turn-controls" });
    this.#body = h("div", { class: "turn-body" });
    this.#outcome = h("div", { class: "turn-outcome" });
    this.#usage = h("div", { class: "usage" });
    this.element = h(
      "article",
      {
        class: "turn",
        id: `turn-${record.id}`,
        "data-turn-id": record.id,
        "aria-label": `Turn ${record.seq}`,
      },
      h(
        "header",
        { class: "turn-head" },
        h("span", { class: "turn-seq" }, `#${record.seq}`),
        this.#phase,
        h("time", { datetime: record.createdAt, class: "muted" }, clockTime(record.createdAt)),
        lineage(record),
        this.#controls,
      ),
      h("div", { class: "prompt" }, record.input.prompt),
      this.#body,
      this.#outcome,
      this.#changes.element,
      this.#usage,
    );
    this.update(record);
  }

  update(record: TurnRecord): void {
    this.record = record;
    const { phase } = record;
    this.element.dataset.phase = phase;
    this.element.setAttribute("aria-busy", String(isActive(phase)));
    this.#renderWaiting();
    const successor = this.#actions.successorOf(record);
    const buttons: HTMLElement[] = [];
    if (isActive(phase) || phase === "queued") {
      buttons.push(
        h(
          "button",
          { type: "button", class: "button button-quiet", onclick: () => this.#actions.cancel(this.record) },
          "Cancel",
        ),
      );
    }
    if (retryablePhases.includes(phase) && !successor && !waitsOnCliLostDecision(record)) {
      buttons.push(
        h(
          "button",
          { type: "button", class: "button", onclick: () => this.#actions.retry(this.record) },
          "Retry",
        ),
      );
    }
    replaceChildren(this.#controls, buttons);
    this.#renderOutcome(successor);
    this.#changes.render(isEnded(phase));
  }

  /** Applies `envelope` if it is the next one; false when it was already applied. */
  append(envelope: TurnEventEnvelope): boolean {
    if (envelope.index < this.nextIndex) return false;
    if (envelope.index > this.nextIndex) {
      throw new GapError(`turn ${this.record.id}: event ${envelope.index} arrived before ${this.nextIndex}`);
    }
    this.nextIndex = envelope.index + 1;
    this.element.dataset.nextIndex = String(this.nextIndex);
    this.#applying = envelope.index;
    this.#apply(envelope);
    return true;
  }

  /** The open requests (pending or orphaned) of the whole daemon. */
  setOpenSecrets(open: ReadonlyMap<string, SecretRequest>): void {
    for (const [requestId, card] of this.#secretCards) {
      const request = open.get(requestId);
      const form = this.#secretForms.get(requestId);
      if (request && !form) {
        const created = new SecretForm(request, () => this.#actions.secretSubmitted());
        this.#secretForms.set(requestId, created);
        replaceChildren(card.slot, created.element);
      } else if (request && form) {
        form.update(request);
      } else if (!request && form && !form.submitted) {
        this.#secretForms.delete(requestId);
        replaceChildren(card.slot, h("p", { class: "muted" }, "No longer open."));
      }
    }
  }

  /** The open permission requests of the session. */
  setOpenPermissions(open: ReadonlyMap<string, PermissionRequest>): void {
    this.#permissions.setOpen(open);
  }

  #apply({ event }: TurnEventEnvelope): void {
    switch (event.type) {
      case "assistant.delta": {
        if (!this.#streaming) {
          this.#streaming = new MarkdownText("", { streaming: true });
          this.#add(this.#streaming.element);
        }
        this.#streaming.append(event.text);
        return;
      }
      case "assistant.text": {
        if (this.#streaming) this.#streaming.finish(event.text);
        else this.#add(new MarkdownText(event.text).element);
        this.#streaming = undefined;
        return;
      }
      case "reasoning":
        this.#add(
          h(
            "details",
            { class: "thinking" },
            h("summary", {}, "Thinking"),
            h("div", { class: "thinking-text" }, event.text),
          ),
        );
        return;
      case "tool.admitted":
        this.#fileEdits.admitted(event);
        return;
      case "tool.started": {
        const diffs = this.#fileEdits.diffsOf(event);
        const card = toolCard(event, diffs);
        this.#changes.started(event.toolId, diffs);
        if (card.element.classList.contains("tool-edit")) this.#add(card.element);
        else this.#runs.add(this.#tag(card.element), event.name, (each) => this.#body.append(each));
        this.#tools.set(event.toolId, card);
        this.#renderWaiting();
        return;
      }
      case "tool.completed": {
        const card = this.#tools.get(event.toolId);
        if (card) completeToolCard(card, event);
        this.#changes.completed(event.toolId, event.isError === true);
        return;
      }
      case "secret.requested": {
        const { element, slot } = secretCard(event);
        this.#add(element);
        this.#secretCards.set(event.requestId, { element, slot, name: event.name });
        this.#actions.secretsChanged();
        return;
      }
      case "secret.resolved": {
        const card = this.#secretCards.get(event.requestId);
        const form = this.#secretForms.get(event.requestId);
        if (card && event.status !== "orphaned" && !form?.submitted) {
          this.#secretForms.delete(event.requestId);
          replaceChildren(card.slot, h("p", { class: "muted" }, secretOutcome[event.status]));
        }
        if (card && event.status === "submitted") {
          this.#secretForms.delete(event.requestId);
          replaceChildren(
            card.slot,
            h("p", { class: "ok" }, "✓ Provided. The value was handed to the turn, not stored."),
          );
        }
        this.#actions.secretsChanged();
        return;
      }
      case "usage": {
        const parts = [`${tokens(event.input)} in`, `${tokens(event.output)} out`];
        if (event.cacheRead) parts.push(`${tokens(event.cacheRead)} cached`);
        if (event.costUsd !== undefined) parts.push(`$${event.costUsd.toFixed(4)}`);
        const context = contextUse(event);
        if (context) parts.push(context);
        this.#usage.textContent = parts.join(" · ");
        this.usage = event;
        return;
      }
      case "warning":
        this.#add(h("div", { class: "note note-warn" }, h("strong", {}, "Warning: "), event.message));
        return;
      case "error":
        this.#errorNotes.push({
          message: event.message,
          element: this.#add(
            h("div", { class: "note note-error" }, h("strong", {}, "Error: "), event.message),
          ),
        });
        this.#renderOutcome(this.#actions.successorOf(this.record));
        return;
      case "terminal":
        this.#streaming?.finish();
        this.#streaming = undefined;
        return;
      default:
        this.#permissions.apply(event, (element) => this.#add(element));
        return;
    }
  }

  /** Whether this turn, running, waits on a person's decision on one of its calls. */
  get waitingForApproval(): boolean {
    return this.#waiting;
  }

  /**
   * The phase chip, and the status of each call without a result: "waiting for your approval" while a
   * request of this running turn is open, not "running"; never "running" once the turn ended.
   */
  #renderWaiting(): void {
    const { phase, error } = this.record;
    const waiting = isActive(phase) ? this.#permissions.waiting() : undefined;
    this.#phase.className = `chip phase-${waiting ? "awaiting_approval" : phase}`;
    this.#phase.textContent = waiting ? "waiting for your approval" : phaseLabels[phase];
    const ended: OpenCallState | undefined = isActive(phase)
      ? undefined
      : error?.code === mayHaveRunErrorCode
        ? "may_have_run"
        : "no_result";
    for (const [toolId, card] of this.#tools)
      setOpenCallState(card, ended ?? (waiting?.has(toolId) === true ? "waiting" : "running"));
    if (this.#waiting === (waiting !== undefined)) return;
    this.#waiting = waiting !== undefined;
    if (this.#waiting) this.element.dataset.waiting = "approval";
    else delete this.element.dataset.waiting;
    this.#actions.waitingChanged();
  }

  /** Shows `element` after everything else: a diff, a note or a card ends a run of calls. */
  #add<T extends HTMLElement>(element: T): T {
    this.#runs.break();
    this.#body.append(this.#tag(element));
    return element;
  }

  #tag<T extends HTMLElement>(element: T): T {
    element.dataset.eventIndex = String(this.#applying);
    return element;
  }

  #renderOutcome(successor: TurnRecord | undefined): void {
    const { phase, error } = this.record;
    const link = successor ? jumpLink(successor.id, successorLabel(successor)) : null;
    if (phase === "interrupted" && error?.code === mayHaveRunErrorCode) {
      const decide = (decision: CliLostDecision) => this.#actions.decideCliLost(this.record, decision);
      replaceChildren(this.#outcome, cliLostCard(this.record, decide, link));
    } else if (phase === "interrupted") {
      replaceChildren(
        this.#outcome,
        h(
          "div",
          { class: "note note-warn" },
          h("strong", {}, "Interrupted. "),
          "The daemon stopped while this turn ran; what it did is shown above. ",
          link ?? "Retry runs the prompt again in the same conversation.",
        ),
      );
    } else if (phase === "failed") {
      // The error that ended the turn is said here; the same one as an event above is not said again.
      for (const note of this.#errorNotes) note.element.hidden = note.message === error?.message;
      replaceChildren(
        this.#outcome,
        h(
          "div",
          { class: "note note-error" },
          h("strong", {}, "Failed. "),
          error ? error.message : "",
          " ",
          link,
        ),
      );
    } else if (phase === "cancelled") {
      replaceChildren(this.#outcome, h("div", { class: "note" }, "Cancelled. ", link));
    } else if (phase === "queued") {
      replaceChildren(this.#outcome, h("div", { class: "note" }, "Queued: runs when the current turn ends."));
    } else replaceChildren(this.#outcome);
  }
}

const secretOutcome = {
  submitted: "✓ Provided.",
  cancelled: "The request was withdrawn.",
  expired: "The request expired.",
  orphaned: "Its turn was interrupted; answering starts a retry.",
} as const;
