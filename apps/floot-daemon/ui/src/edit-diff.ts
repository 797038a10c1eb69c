import { structuredPatch } from "diff";

/**
 * File edits of agent tools as unified-diff lines, without the DOM: Claude Code's `Edit` (`old_string`
 * -> `new_string`), `MultiEdit` (`edits[]`) and `Write` (`content`), and Codex's `apply_patch` text.
 */

export type DiffLineKind = "add" | "remove" | "context" | "hunk";

export interface DiffLine {
  kind: DiffLineKind;
  text: string;
}

/** `edit` and `write` are Claude's; `add`, `delete`, `update` are Codex's change kinds. */
export type FileChangeKind = "edit" | "write" | "add" | "delete" | "update";

export interface FileDiff {
  path: string;
  kind: FileChangeKind;
  movedTo?: string;
  lines: DiffLine[];
  added: number;
  removed: number;
  /** Said under the lines, e.g. that the patch text was cut or not recorded. */
  note?: string;
}

const contextLines = 3;

function fileDiff(
  path: string,
  kind: FileChangeKind,
  lines: DiffLine[],
  extra: Partial<FileDiff> = {},
): FileDiff {
  return {
    path,
    kind,
    lines,
    added: lines.filter((line) => line.kind === "add").length,
    removed: lines.filter((line) => line.kind === "remove").length,
    ...extra,
  };
}

/** The changed lines of `before` -> `after` (fragments, not whole files: no line numbers) and 3 of context. */
export function replacementLines(before: string, after: string): DiffLine[] {
  const withEnd = (text: string) => (text === "" || text.endsWith("\n") ? text : `${text}\n`);
  const patch = structuredPatch("a", "b", withEnd(before), withEnd(after), "", "", { context: contextLines });
  const lines: DiffLine[] = [];
  patch.hunks.forEach((hunk, index) => {
    if (index > 0) lines.push({ kind: "hunk", text: "⋯" });
    for (const line of hunk.lines) {
      const kind = prefixKinds[line[0] ?? ""];
      if (kind) lines.push({ kind, text: line.slice(1) });
    }
  });
  return lines;
}

const prefixKinds: Record<string, DiffLineKind> = { "+": "add", "-": "remove", " ": "context" };

function addedLines(content: string): DiffLine[] {
  if (content === "") return [];
  return content
    .replace(/\n$/, "")
    .split("\n")
    .map((text) => ({ kind: "add", text }));
}

type Input = Record<string, unknown>;

const isRecord = (value: unknown): value is Input =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const stringIn = (input: Input, key: string): string | undefined =>
  typeof input[key] === "string" ? input[key] : undefined;

function everyOccurrence(input: Input): string | undefined {
  return input.replace_all === true ? "Every occurrence was replaced." : undefined;
}

/** The diff a Claude Code file tool's input describes; undefined for other tools or inputs of another shape. */
export function claudeEditDiffs(name: string, input: unknown): FileDiff[] | undefined {
  if (!isRecord(input)) return undefined;
  const path = stringIn(input, "file_path");
  if (path === undefined) return undefined;
  if (name === "Write") {
    const content = stringIn(input, "content");
    return content === undefined ? undefined : [fileDiff(path, "write", addedLines(content))];
  }
  if (name === "Edit") {
    const before = stringIn(input, "old_string");
    const after = stringIn(input, "new_string");
    if (before === undefined || after === undefined) return undefined;
    const note = everyOccurrence(input);
    return [fileDiff(path, "edit", replacementLines(before, after), note ? { note } : {})];
  }
  if (name === "MultiEdit" && Array.isArray(input.edits)) {
    const edits = input.edits.filter(isRecord);
    const lines = edits.flatMap((edit, index) => {
      const before = stringIn(edit, "old_string") ?? "";
      const after = stringIn(edit, "new_string") ?? "";
      const head: DiffLine = { kind: "hunk", text: `edit ${index + 1} of ${edits.length}` };
      return [head, ...replacementLines(before, after)];
    });
    return [fileDiff(path, "edit", lines)];
  }
  return undefined;
}

const beginPatch = "*** Begin Patch";
const endPatch = "*** End Patch";
const fileHeader = /^\*\*\* (Add|Delete|Update) File: (.+)$/;
const moveHeader = /^\*\*\* Move to: (.+)$/;

/**
 * Codex's patch format (`*** Begin Patch`, `*** Add File:` / `*** Delete File:` / `*** Update File:`
 * [`*** Move to:`], `@@` hunks of ` `/`-`/`+` lines, `*** End Patch`) as one diff per file. `cut` says
 * the text stops early (the gate keeps a bounded preview): the last file says so.
 */
export function parseCodexPatch(text: string, cut = false): FileDiff[] | undefined {
  const start = text.indexOf(beginPatch);
  if (start < 0) return undefined;
  const files: { path: string; kind: FileChangeKind; movedTo?: string; lines: DiffLine[] }[] = [];
  for (const line of text.slice(start + beginPatch.length).split("\n")) {
    if (line.startsWith(endPatch)) break;
    const header = fileHeader.exec(line);
    if (header) {
      const kind = header[1] === "Add" ? "add" : header[1] === "Delete" ? "delete" : "update";
      files.push({ path: header[2]!.trim(), kind, lines: [] });
      continue;
    }
    const file = files.at(-1);
    if (!file) continue;
    const move = moveHeader.exec(line);
    if (move) file.movedTo = move[1]!.trim();
    else if (line.startsWith("@@")) file.lines.push({ kind: "hunk", text: line });
    else if (line === "*** End of File" || (line === "" && file.kind !== "update")) continue;
    else file.lines.push({ kind: prefixKinds[line[0] ?? " "] ?? "context", text: line.slice(1) });
  }
  return files.map((file, index) =>
    fileDiff(file.path, file.kind, file.lines, {
      ...(file.movedTo !== undefined && { movedTo: file.movedTo }),
      ...(cut &&
        index === files.length - 1 && {
          note: "The patch is cut here: the gate records the first 2,000 characters of a call.",
        }),
    }),
  );
}

/**
 * The patch text in a gate admission's `inputPreview` (the call's input as JSON text, possibly cut):
 * the first JSON string in it holding `*** Begin Patch`, decoded, from that marker on. Codex names the
 * shell tool `Bash` and passes `apply_patch <<'EOF' … EOF` as its command (measured, 0.171).
 */
export function patchInPreview(preview: string): { text: string; cut: boolean } | undefined {
  if (!preview.includes(beginPatch)) return undefined;
  for (const match of preview.matchAll(/"((?:[^"\\]|\\.)*)("|\\?$)/g)) {
    const closed = match[2] === '"';
    const value = decodeJsonString(match[1]!, closed);
    const start = value?.indexOf(beginPatch) ?? -1;
    if (value === undefined || start < 0) continue;
    const text = value.slice(start);
    return { text, cut: !closed && !text.includes(endPatch) };
  }
  return undefined;
}

function decodeJsonString(body: string, closed: boolean): string | undefined {
  // A cut preview can end inside an escape (`\u00`): drop the incomplete tail.
  const complete = closed ? body : body.replace(/\\u[0-9a-fA-F]{0,3}$/, "");
  try {
    return JSON.parse(`"${complete}"`) as string;
  } catch {
    return undefined;
  }
}
