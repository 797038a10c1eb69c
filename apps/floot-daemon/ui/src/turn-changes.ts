import { h, replaceChildren } from "./dom.js";
import type { FileDiff } from "./edit-diff.js";

/**
 * The files a turn changed, said at its end: from the diffs its file edits showed (Edit, Write,
 * MultiEdit, apply_patch), only those whose call succeeded, one line a file with its +/− line counts.
 */
export class TurnChanges {
  readonly element = h("section", { class: "turn-changes", "aria-label": "Files changed" });
  readonly #pending = new Map<string, readonly FileDiff[]>();
  readonly #files = new Map<string, { added: number; removed: number }>();

  started(toolId: string, diffs: readonly FileDiff[] | undefined): void {
    if (diffs && diffs.length > 0) this.#pending.set(toolId, diffs);
  }

  completed(toolId: string, failed: boolean): void {
    const diffs = this.#pending.get(toolId);
    this.#pending.delete(toolId);
    if (!diffs || failed) return;
    for (const diff of diffs) {
      const path = diff.movedTo ?? diff.path;
      const file = this.#files.get(path) ?? { added: 0, removed: 0 };
      this.#files.set(path, { added: file.added + diff.added, removed: file.removed + diff.removed });
    }
  }

  /** Shown once the turn ended; nothing while it runs or when it changed no file. */
  render(ended: boolean): void {
    if (!ended || this.#files.size === 0) {
      replaceChildren(this.element);
      return;
    }
    const count = this.#files.size;
    replaceChildren(
      this.element,
      h("div", { class: "turn-changes-title" }, `Changed ${count} ${count === 1 ? "file" : "files"}`),
      h(
        "ul",
        {},
        [...this.#files].map(([path, { added, removed }]) =>
          h(
            "li",
            { "data-path": path },
            h("code", {}, path),
            " ",
            h("span", { class: "diff-added" }, `+${added}`),
            " ",
            h("span", { class: "diff-removed" }, `−${removed}`),
          ),
        ),
      ),
    );
  }
}
