import type { ToolAdmittedEvent, ToolStartedEvent } from "@bridgeworks/protocol";
import {
  claudeEditDiffs,
  type FileChangeKind,
  type FileDiff,
  parseCodexPatch,
  patchInPreview,
} from "./edit-diff.js";

interface Change {
  path: string;
  kind: FileChangeKind;
}

interface AdmittedPatch {
  files: FileDiff[];
}

/** Patches admitted but not yet seen applied; more than this and the oldest are forgotten. */
const maxPendingPatches = 16;

/**
 * The diffs of one turn's file edits. Claude Code's edit tools carry their change in their input. Codex
 * 0.171's stream reports a patch only as `file_change {changes: [{path, kind}]}` (no text, measured), so
 * the patch text comes from the gate's admission of the call that applied it (`tool.admitted`, journaled
 * just before): a file_change takes the oldest pending patch naming all its paths.
 */
export class FileEdits {
  readonly #pending: AdmittedPatch[] = [];

  admitted(event: Pick<ToolAdmittedEvent, "inputPreview">): void {
    const patch = patchInPreview(event.inputPreview);
    const files = patch && parseCodexPatch(patch.text, patch.cut);
    if (!files || files.length === 0) return;
    this.#pending.push({ files });
    if (this.#pending.length > maxPendingPatches) this.#pending.shift();
  }

  /** The diffs a started tool shows, or undefined when it is no file edit. */
  diffsOf(event: Pick<ToolStartedEvent, "name" | "input">): FileDiff[] | undefined {
    if (event.name !== "file_change") return claudeEditDiffs(event.name, event.input);
    const changes = codexChanges(event.input);
    if (!changes) return undefined;
    const index = this.#pending.findIndex((patch) =>
      changes.every((change) => patch.files.some((file) => samePath(change.path, file.path))),
    );
    const files = index >= 0 ? this.#pending.splice(index, 1)[0]!.files : [];
    return changes.map((change) => {
      const file = files.find((each) => samePath(change.path, each.path));
      return file
        ? { ...file, path: change.path }
        : {
            path: change.path,
            kind: change.kind,
            lines: [],
            added: 0,
            removed: 0,
            note: change.kind === "delete" ? "Deleted." : "Codex reported the file, not its patch.",
          };
    });
  }
}

const changeKinds = new Set<unknown>(["add", "delete", "update"]);

function codexChanges(input: unknown): Change[] | undefined {
  if (typeof input !== "object" || input === null || !("changes" in input)) return undefined;
  const { changes } = input;
  if (!Array.isArray(changes)) return undefined;
  const valid = changes.filter(
    (change): change is Change =>
      typeof change?.path === "string" && changeKinds.has(change?.kind as unknown),
  );
  return valid.length === changes.length && valid.length > 0 ? valid : undefined;
}

/** Codex reports absolute paths; a patch names them as the model wrote them (usually relative to the workspace). */
function samePath(reported: string, written: string): boolean {
  const relative = written.replace(/^\.\//, "");
  return reported === written || reported.endsWith(`/${relative}`);
}
