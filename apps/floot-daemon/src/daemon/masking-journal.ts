import type { BackendEvent, TurnError } from "@bridgeworks/protocol";
import type { TurnJournal } from "@bridgeworks/turn-journal";
import type { SecretMask } from "./secret-mask.js";

/**
 * The journal as the turn side writes to it: every event, tool admission, secret prompt, permission
 * request's input summary and error is
 * masked (see SecretMask) before it is journaled, so nothing streamed or shown from the journal carries
 * a submitted secret. Streamed text (`assistant.delta`) holds back a tail that could begin a secret until
 * the next piece or event shows it does not, so a value split across deltas is masked whole.
 * Reads pass through unchanged.
 */
export function maskingJournal(journal: TurnJournal, mask: SecretMask): TurnJournal {
  const heldDeltas = new Map<string, string>();

  const release = (turnId: string): BackendEvent[] => {
    const held = heldDeltas.get(turnId);
    heldDeltas.delete(turnId);
    return held ? [{ type: "assistant.delta", text: mask.maskText(held) }] : [];
  };

  const maskEvents = (turnId: string, events: readonly BackendEvent[]): BackendEvent[] => {
    const out: BackendEvent[] = [];
    for (const event of events) {
      if (event.type !== "assistant.delta") {
        out.push(...release(turnId), mask.maskJson(event));
        continue;
      }
      const text = (heldDeltas.get(turnId) ?? "") + event.text;
      const cut = mask.safeCut(text);
      if (cut < text.length) heldDeltas.set(turnId, text.slice(cut));
      else heldDeltas.delete(turnId);
      if (cut > 0) out.push({ type: "assistant.delta", text: mask.maskText(text.slice(0, cut)) });
    }
    return out;
  };

  const maskError = <E extends TurnError | undefined>(error: E): E => mask.maskJson(error);

  const overrides: Partial<TurnJournal> = {
    appendEvents(turnId, events) {
      const masked = maskEvents(turnId, events);
      if (masked.length > 0) journal.appendEvents(turnId, masked);
    },
    transition(turnId, change) {
      const held = release(turnId);
      if (held.length > 0) journal.appendEvents(turnId, held);
      return journal.transition(turnId, {
        ...change,
        ...(change.cause !== undefined && { cause: mask.maskJson(change.cause) }),
        ...(change.error !== undefined && { error: maskError(change.error) }),
      });
    },
    replayTurn(turnId, reason) {
      return journal.replayTurn(turnId, maskError(reason));
    },
    admitToolCall(turnId, draft) {
      return journal.admitToolCall(turnId, { ...draft, inputPreview: mask.maskText(draft.inputPreview) });
    },
    requestSecret(turnId, draft) {
      return journal.requestSecret(turnId, { ...draft, prompt: mask.maskText(draft.prompt) });
    },
    requestPermission(turnId, draft) {
      return journal.requestPermission(turnId, { ...draft, inputSummary: mask.maskText(draft.inputSummary) });
    },
  };

  return new Proxy(journal, {
    get(target, property) {
      const own = overrides[property as keyof TurnJournal];
      if (own !== undefined) return own;
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
