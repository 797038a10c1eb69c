import {
  type BackendEvent,
  PermissionDecision,
  PermissionRequestDraft,
  SecretRequestDraft,
  ToolAdmissionDraft,
} from "@bridgeworks/protocol";
import type { TurnJournal } from "@bridgeworks/turn-journal";
import { maskEvent, maskEventField, maskTurnError } from "./masked-fields.js";
import { cutEllipsis, type SecretMask } from "./secret-mask.js";

/**
 * The journal as the turn side writes to it: every event, tool admission, secret prompt, permission
 * request and decision, and error is masked (see SecretMask, and `masked-fields.ts` for which fields)
 * before it is journaled, so nothing streamed or shown from the journal carries a submitted secret.
 * Streamed text (`assistant.delta`) holds back a tail that could begin a secret until the next piece or
 * event shows it does not, so a value split across deltas is masked whole. A bounded text whose marker
 * made it longer than its schema allows is cut again, with `…`. Reads pass through unchanged.
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
        out.push(...release(turnId), maskEvent(mask, event));
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
        ...(change.cause !== undefined && { cause: maskEvent(mask, change.cause) }),
        ...(change.error !== undefined && { error: maskTurnError(mask, change.error) }),
      });
    },
    replayTurn(turnId, reason) {
      return journal.replayTurn(turnId, maskTurnError(mask, reason));
    },
    admitToolCall(turnId, draft) {
      const inputPreview = maskEventField(mask, "tool.admitted", "inputPreview", draft.inputPreview);
      return journal.admitToolCall(turnId, {
        ...draft,
        inputPreview: fit(inputPreview, ToolAdmissionDraft.shape.inputPreview.maxLength),
      });
    },
    requestSecret(turnId, draft) {
      const prompt = maskEventField(mask, "secret.requested", "prompt", draft.prompt);
      return journal.requestSecret(turnId, {
        ...draft,
        prompt: fit(prompt, SecretRequestDraft.shape.prompt.maxLength),
      });
    },
    requestPermission(turnId, draft) {
      const field = <Value>(name: "inputSummary" | "unmatchedRules" | "suggestedRule", value: Value) =>
        maskEventField(mask, "permission.requested", name, value);
      return journal.requestPermission(turnId, {
        ...draft,
        inputSummary: fit(
          field("inputSummary", draft.inputSummary),
          PermissionRequestDraft.shape.inputSummary.maxLength,
        ),
        unmatchedRules: field("unmatchedRules", draft.unmatchedRules),
        suggestedRule: field("suggestedRule", draft.suggestedRule),
      });
    },
    decidePermissionRequest(requestId, decision, by) {
      if (decision.behavior === "allow") {
        const rule = maskEventField(mask, "permission.resolved", "rule", decision.rule);
        return journal.decidePermissionRequest(
          requestId,
          { ...decision, ...(rule !== undefined && { rule }) },
          by,
        );
      }
      const message = maskEventField(mask, "permission.resolved", "message", decision.message);
      return journal.decidePermissionRequest(
        requestId,
        { ...decision, ...(message !== undefined && { message: fit(message, denyMessageMaxLength()) }) },
        by,
      );
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

/** `text` within `maxLength` (a schema's bound, when it has one): cut with `…` where a marker lengthened it. */
function fit(text: string, maxLength: number | null | undefined): string {
  if (maxLength === null || maxLength === undefined || text.length <= maxLength) return text;
  return `${text.slice(0, maxLength - cutEllipsis.length)}${cutEllipsis}`;
}

function denyMessageMaxLength(): number | null {
  // The union's second option is the denial (a type error here if that changes).
  return PermissionDecision.options[1].shape.message.unwrap().maxLength;
}
