import type { AnswerPlan, PlannedBlock, PlannedUsage } from "./plan.js";
import type { WireStep } from "./wire.js";

/** Messages API SSE: message_start, one content_block_start/delta/stop run per block, message_delta, message_stop. */
export function anthropicEventStream(plan: AnswerPlan): WireStep[] {
  const steps: WireStep[] = [];
  const send = (event: string, data: Record<string, unknown>) =>
    steps.push({ kind: "event", event, data: { type: event, ...data } });

  send("message_start", { message: { ...messageEnvelope(plan), content: [], stop_reason: null } });
  let index = 0;
  for (const item of plan.items) {
    if (item.kind === "delay" || item.kind === "stall" || item.kind === "drop") {
      steps.push(item);
      continue;
    }
    send("content_block_start", { index, content_block: emptyBlock(item) });
    blockDeltas(item).forEach((delta, position) => {
      if (position > 0 && item.kind === "text" && item.deltaDelayMs) {
        steps.push({ kind: "delay", ms: item.deltaDelayMs });
      }
      send("content_block_delta", { index, delta });
    });
    send("content_block_stop", { index });
    index += 1;
  }
  send("message_delta", {
    delta: { stop_reason: plan.stopReason, stop_sequence: null },
    usage: usageOf(plan),
  });
  send("message_stop", {});
  return steps;
}

/** The whole message, for requests without `stream: true`. */
export function anthropicMessage(plan: AnswerPlan): Record<string, unknown> {
  return {
    ...messageEnvelope(plan),
    content: plan.items.flatMap((item): Record<string, unknown>[] => {
      if (item.kind === "text") return [{ type: "text", text: item.text }];
      if (item.kind === "thinking")
        return [{ type: "thinking", thinking: item.thinking, signature: item.signature }];
      if (item.kind === "tool_call")
        return [{ type: "tool_use", id: item.id, name: item.name, input: item.input }];
      return [];
    }),
    stop_reason: plan.stopReason,
  };
}

function messageEnvelope(plan: AnswerPlan) {
  return {
    id: plan.messageId,
    type: "message",
    role: "assistant",
    model: plan.model,
    stop_sequence: null,
    usage: usageOf(plan),
  };
}

function usageOf(plan: AnswerPlan): PlannedUsage {
  return { ...plan.usage };
}

function emptyBlock(block: PlannedBlock): Record<string, unknown> {
  switch (block.kind) {
    case "text":
      return { type: "text", text: "" };
    case "thinking":
      return { type: "thinking", thinking: "", signature: "" };
    case "tool_call":
      return { type: "tool_use", id: block.id, name: block.name, input: {} };
  }
}

function blockDeltas(block: PlannedBlock): Record<string, unknown>[] {
  switch (block.kind) {
    case "text":
      return block.deltas.map((text) => ({ type: "text_delta", text }));
    case "thinking":
      return [
        ...block.deltas.map((thinking) => ({ type: "thinking_delta", thinking })),
        { type: "signature_delta", signature: block.signature },
      ];
    case "tool_call":
      return block.deltas.map((partial_json) => ({ type: "input_json_delta", partial_json }));
  }
}

const errorTypeByStatus: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

export function anthropicErrorBody(status: number, message: string, type?: string): Record<string, unknown> {
  return { type: "error", error: { type: type ?? errorTypeByStatus[status] ?? "api_error", message } };
}
