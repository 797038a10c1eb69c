import {
  PermissionDecision,
  PermissionRequestDraft,
  SecretRequestDraft,
  ToolAdmissionDraft,
  type TurnEvent,
} from "@bridgeworks/protocol";
import type { EventTransform } from "@bridgeworks/turn-journal";
import { maskEvent } from "./masked-fields.js";
import { cutEllipsis, type SecretMask } from "./secret-mask.js";

/**
 * The journal's event transform in floot: every event is masked on the journal's one write path (see
 * SecretMask, and `masked-fields.ts` for which fields), whichever method wrote it, and with it the text
 * the journal keeps beside an event (a tool admission's preview, a secret prompt, a permission request's
 * summary and rules, a decision's rule and message, a turn's error). Nothing streamed or shown from the
 * journal then carries a submitted secret. Streamed text (`assistant.delta`) holds back a tail that
 * could begin a secret (`streamCut`) until the next piece or event shows it does not, so a value split
 * across deltas is masked whole. A bounded text whose marker made it longer than its draft's schema
 * allows is cut again, with `…`.
 */
export function journalMasking(mask: SecretMask): EventTransform {
  return {
    event: (event) => fitBounds(maskEvent(mask, event)),
    streamCut: (text) => mask.safeCut(text),
  };
}

/** The event with each bounded text within its draft's bound (read when first needed: schemas are lazy). */
function fitBounds<Event extends TurnEvent>(event: Event): Event {
  const each = event as TurnEvent;
  switch (each.type) {
    case "tool.admitted":
      return {
        ...each,
        inputPreview: fit(each.inputPreview, ToolAdmissionDraft.shape.inputPreview.maxLength),
      } as Event;
    case "secret.requested":
      return { ...each, prompt: fit(each.prompt, SecretRequestDraft.shape.prompt.maxLength) } as Event;
    case "permission.requested":
      return {
        ...each,
        inputSummary: fit(each.inputSummary, PermissionRequestDraft.shape.inputSummary.maxLength),
      } as Event;
    case "permission.resolved":
      if (each.message === undefined) return event;
      return { ...each, message: fit(each.message, denyMessageMaxLength()) } as Event;
    default:
      return event;
  }
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
