import { h } from "./dom.js";
import type { DiffLine, FileChangeKind, FileDiff } from "./edit-diff.js";

/** A diff with more lines than this starts collapsed (its tool card closed, the counts in its summary). */
export const longDiffLines = 40;
/** Lines shown per file; the rest are counted, not drawn. */
const maxShownLines = 2_000;

export interface DiffView {
  element: HTMLElement;
  /** `+added −removed`, for the tool card's summary. */
  stat: HTMLElement;
  long: boolean;
}

const kindLabels: Record<FileChangeKind, string> = {
  edit: "edited",
  write: "written",
  add: "added",
  delete: "deleted",
  update: "updated",
};

const prefixes: Record<DiffLine["kind"], string> = { add: "+", remove: "-", context: " ", hunk: "" };

/** File diffs as a unified view: per file its path, what happened and counts, then its lines. */
export function diffView(diffs: readonly FileDiff[]): DiffView {
  const added = diffs.reduce((sum, diff) => sum + diff.added, 0);
  const removed = diffs.reduce((sum, diff) => sum + diff.removed, 0);
  const lines = diffs.reduce((sum, diff) => sum + diff.lines.length, 0);
  return {
    element: h("div", { class: "diff-view" }, diffs.map(fileView)),
    stat: counts(added, removed),
    long: lines > longDiffLines,
  };
}

function counts(added: number, removed: number): HTMLElement {
  return h(
    "span",
    { class: "diff-stat", title: `${added} lines added, ${removed} removed` },
    h("span", { class: "diff-added" }, `+${added}`),
    " ",
    h("span", { class: "diff-removed" }, `−${removed}`),
  );
}

function fileView(diff: FileDiff): HTMLElement {
  const shown = diff.lines.slice(0, maxShownLines);
  const hidden = diff.lines.length - shown.length;
  return h(
    "section",
    { class: "diff-file", "data-diff-path": diff.path },
    h(
      "div",
      { class: "diff-file-head" },
      h("code", { class: "diff-path" }, diff.path),
      diff.movedTo ? h("span", { class: "muted" }, `→ ${diff.movedTo}`) : null,
      h("span", { class: `chip diff-kind diff-kind-${diff.kind}` }, kindLabels[diff.kind]),
      counts(diff.added, diff.removed),
    ),
    shown.length > 0
      ? h(
          "pre",
          { class: "diff" },
          shown.map((line) =>
            h("span", { class: `diff-line diff-${line.kind}` }, `${prefixes[line.kind]}${line.text}`),
          ),
        )
      : null,
    hidden > 0 ? h("p", { class: "diff-note muted" }, `${hidden} more lines not shown.`) : null,
    diff.note ? h("p", { class: "diff-note muted" }, diff.note) : null,
  );
}
