import { h } from "./dom.js";
import { toolLabel } from "./format.js";

/**
 * Consecutive tool calls of a turn, folded into one closed `<details>` ("14 tool calls: 9 Read,
 * 5 Bash") that opens on demand; its label counts the calls as they stream in.
 */
class ToolGroup {
  readonly element: HTMLDetailsElement;
  readonly #label: HTMLElement;
  readonly #calls: HTMLElement;
  readonly #counts = new Map<string, number>();
  #size = 0;

  constructor() {
    this.#label = h("span", { class: "tool-group-label" });
    this.#calls = h("div", { class: "tool-group-calls" });
    this.element = h("details", { class: "tool-group" }, h("summary", {}, this.#label), this.#calls);
  }

  add(card: HTMLElement, name: string): void {
    this.#calls.append(card);
    this.#size += 1;
    this.#counts.set(name, (this.#counts.get(name) ?? 0) + 1);
    const counts = [...this.#counts].sort(([, a], [, b]) => b - a).map(([each, n]) => `${n} ${each}`);
    this.#label.textContent = `${this.#size} tool calls: ${counts.join(", ")}`;
    this.element.dataset.calls = String(this.#size);
  }
}

/**
 * Folds a turn's consecutive calls: one call stands alone; the second in a row folds both into a group,
 * and later ones join it until anything else (text, a diff, an approval) is shown between.
 */
export class ToolRuns {
  #run: { first: HTMLElement; name: string; group?: ToolGroup } | undefined;

  /** Adds the card of a call named `name`; `append` puts a new element at the end of the turn. */
  add(card: HTMLElement, name: string, append: (element: HTMLElement) => void): void {
    const label = toolLabel(name);
    const run = this.#run;
    if (!run) {
      append(card);
      this.#run = { first: card, name: label };
      return;
    }
    if (!run.group) {
      run.group = new ToolGroup();
      run.group.element.dataset.eventIndex = run.first.dataset.eventIndex;
      run.first.replaceWith(run.group.element);
      run.group.add(run.first, run.name);
    }
    run.group.add(card, label);
  }

  /** Something other than a call was shown: the next call starts a new run. */
  break(): void {
    this.#run = undefined;
  }
}
