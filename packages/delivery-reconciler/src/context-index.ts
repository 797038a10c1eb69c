import type { ContextRescanReason, ContextScanMode } from "@bridgeworks/protocol";
import type { ContextMessage } from "./types.js";

export interface ContextVisitor<M extends ContextMessage> {
  /** Called once per walk, before any message, with how the walk reads the context. */
  start(mode: ContextScanMode): void;
  toolCall(id: string, index: number): void;
  toolResult(id: string, message: M, index: number): void;
  malformedResult(index: number): void;
}

export interface ContextWalk {
  readonly mode: ContextScanMode;
  readonly from: number;
  readonly length: number;
  readonly messagesExamined: number;
  readonly rescan?: { readonly reason: ContextRescanReason; readonly previousWatermark: number };
  /** Index of the context's last assistant message, -1 if none: results after it form the "tail". */
  readonly lastAssistantIndex: number;
}

interface Anchor {
  readonly message: ContextMessage;
  readonly role: string;
  readonly toolCallId: unknown;
  readonly timestamp: unknown;
}

/**
 * A watermark into a context that grows between calls: each walk visits only the messages appended
 * since the previous one. Pi rebuilds the array for every call, so the message just below the watermark
 * is recognised by identity or by (role, toolCallId, timestamp); when it no longer matches, or the
 * context got shorter (compaction), the walk starts over from index 0 and says why.
 */
export class ContextIndex {
  private seenAny = false;
  private watermark = 0;
  private anchor: Anchor | undefined;
  private lastAssistantIndex = -1;

  walk<M extends ContextMessage>(
    messages: readonly M[],
    hasLiveCalls: boolean,
    visitor: ContextVisitor<M>,
  ): ContextWalk {
    const length = messages.length;
    let mode: ContextScanMode = "incremental";
    let from = this.watermark;
    let rescan: ContextWalk["rescan"];
    if (!this.seenAny) {
      // A first context is history the ledger never took part in, unless calls are already live.
      mode = hasLiveCalls ? "full" : "skipped";
      from = hasLiveCalls ? 0 : startOfTail(messages);
    } else if (length < this.watermark) {
      rescan = { reason: "context_shorter", previousWatermark: this.watermark };
    } else if (this.watermark > 0 && !matchesAnchor(this.anchor, messages[this.watermark - 1])) {
      rescan = { reason: "context_rewritten", previousWatermark: this.watermark };
    }
    if (rescan) {
      mode = "full";
      from = 0;
    }
    if (mode !== "incremental") this.lastAssistantIndex = -1;
    visitor.start(mode);

    for (let index = from; index < length; index++) {
      this.visit(messages[index]!, index, visitor);
    }

    this.seenAny = true;
    this.watermark = length;
    this.anchor = length > 0 ? anchorOf(messages[length - 1]!) : undefined;
    return {
      mode,
      from,
      length,
      messagesExamined: length - from,
      ...(rescan ? { rescan } : {}),
      lastAssistantIndex: this.lastAssistantIndex,
    };
  }

  private visit<M extends ContextMessage>(message: M, index: number, visitor: ContextVisitor<M>): void {
    if (message.role === "assistant") {
      this.lastAssistantIndex = index;
      if (!Array.isArray(message.content)) return;
      for (const block of message.content as readonly unknown[]) {
        const id = toolCallBlockId(block);
        if (id !== undefined) visitor.toolCall(id, index);
      }
    } else if (message.role === "toolResult") {
      const id = message.toolCallId;
      if (typeof id === "string" && id !== "") visitor.toolResult(id, message, index);
      else visitor.malformedResult(index);
    }
  }
}

/** Index of the last assistant message (its calls and the results after it form the tail), else 0. */
function startOfTail(messages: readonly ContextMessage[]): number {
  for (let index = messages.length - 1; index >= 0; index--) {
    if (messages[index]!.role === "assistant") return index;
  }
  return 0;
}

function toolCallBlockId(block: unknown): string | undefined {
  if (typeof block !== "object" || block === null) return undefined;
  const { type, id } = block as { type?: unknown; id?: unknown };
  return type === "toolCall" && typeof id === "string" && id !== "" ? id : undefined;
}

function anchorOf(message: ContextMessage): Anchor {
  return { message, role: message.role, toolCallId: message.toolCallId, timestamp: message.timestamp };
}

function matchesAnchor(anchor: Anchor | undefined, message: ContextMessage | undefined): boolean {
  if (anchor === undefined || message === undefined) return false;
  if (message === anchor.message) return true;
  // Without a timestamp two different messages can look alike: rescan rather than trust them.
  return (
    anchor.timestamp !== undefined &&
    message.role === anchor.role &&
    message.toolCallId === anchor.toolCallId &&
    message.timestamp === anchor.timestamp
  );
}
