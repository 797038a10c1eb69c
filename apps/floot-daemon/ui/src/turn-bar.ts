import type { TurnRecord } from "@bridgeworks/protocol";
import { h } from "./dom.js";

/** Whether the window shows the end of the page (or nearly). */
export function nearBottom(): boolean {
  return window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 160;
}

/**
 * The bar that stays at the bottom of the window, just above the composer: Stop for the running turn
 * (however far up its header is), and "Jump to latest" once events arrived while the reader was
 * scrolled up. Esc closes the open group of calls that has the focus; otherwise, while a turn runs, a
 * first Esc asks and a second one stops it: a stray Esc never throws away a turn's work.
 */
export class TurnBar {
  readonly element: HTMLElement;
  readonly #stop: HTMLButtonElement;
  readonly #jump: HTMLButtonElement;
  readonly #note: HTMLElement;
  #active: TurnRecord | undefined;
  #armed = false;

  constructor(cancel: (turn: TurnRecord) => void, toEnd: () => void, signal: AbortSignal) {
    this.#note = h("span", { class: "turn-bar-note", role: "status" });
    this.#stop = h(
      "button",
      {
        type: "button",
        class: "button button-danger",
        id: "stop-turn",
        onclick: () => {
          if (this.#active) cancel(this.#active);
          this.#disarm();
        },
      },
      "Stop",
    );
    this.#jump = h(
      "button",
      { type: "button", class: "button button-quiet", id: "jump-latest", onclick: () => toEnd() },
      "Jump to latest ↓",
    );
    this.element = h("div", { class: "turn-bar" }, this.#note, this.#jump, this.#stop);
    document.addEventListener("keydown", (event) => this.#key(event, cancel), { signal });
    window.addEventListener("scroll", () => nearBottom() && this.#setJump(false), { signal, passive: true });
    this.#jump.hidden = true;
    this.setActive(undefined);
  }

  /** The session's running turn, if any. */
  setActive(turn: TurnRecord | undefined): void {
    if (turn?.id !== this.#active?.id) this.#disarm();
    this.#active = turn;
    this.#stop.hidden = !turn;
    if (!this.#armed) this.#note.textContent = turn ? `Turn #${turn.seq} is running` : "";
    this.#render();
  }

  /** An event arrived while the reader was scrolled up. */
  missed(): void {
    this.#setJump(true);
  }

  #setJump(shown: boolean): void {
    this.#jump.hidden = !shown;
    this.#render();
  }

  #render(): void {
    this.element.hidden = this.#stop.hidden && this.#jump.hidden;
  }

  #key(event: KeyboardEvent, cancel: (turn: TurnRecord) => void): void {
    if (event.key !== "Escape") {
      if (this.#armed && event.key !== "Shift") this.#disarm();
      return;
    }
    if (event.defaultPrevented) return;
    const group = (document.activeElement as HTMLElement | null)?.closest("details.tool-group[open]");
    if (group instanceof HTMLDetailsElement) {
      group.open = false;
      group.querySelector("summary")?.focus();
      return;
    }
    if (!this.#active) return;
    if (this.#armed) {
      cancel(this.#active);
      this.#disarm();
      return;
    }
    this.#armed = true;
    this.element.dataset.armed = "true";
    this.#note.textContent = `Press Esc again to stop turn #${this.#active.seq}`;
    this.#stop.focus();
  }

  #disarm(): void {
    if (!this.#armed) return;
    this.#armed = false;
    delete this.element.dataset.armed;
    this.#note.textContent = this.#active ? `Turn #${this.#active.seq} is running` : "";
  }
}
