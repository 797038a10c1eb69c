import type { AnswerPlan, IdGenerator, PlannedBlock } from "./plan.js";
import type { WireStep } from "./wire.js";

type OutputItem = Record<string, unknown>;

/**
 * Responses API SSE as the OpenAI SDK, codex and pi read it: response.created, per output item an
 * output_item.added, its part/delta/done events and output_item.done, then response.completed.
 */
export function openaiEventStream(plan: AnswerPlan, generateId: IdGenerator): WireStep[] {
  const steps: WireStep[] = [];
  let sequence = 0;
  const send = (event: string, data: Record<string, unknown>) => {
    steps.push({ kind: "event", event, data: { type: event, sequence_number: sequence, ...data } });
    sequence += 1;
  };

  send("response.created", { response: responseEnvelope(plan, "in_progress", []) });
  const done: OutputItem[] = [];
  for (const item of plan.items) {
    if (item.kind === "delay" || item.kind === "stall" || item.kind === "drop") {
      steps.push(item);
      continue;
    }
    const output_index = done.length;
    const finished = completedItem(item, generateId);
    const item_id = finished.id;
    send("response.output_item.added", { output_index, item: startedItem(finished) });
    if (item.kind === "text") {
      const where = { item_id, output_index, content_index: 0 };
      send("response.content_part.added", { ...where, part: outputText("") });
      item.deltas.forEach((delta, position) => {
        if (position > 0 && item.deltaDelayMs) steps.push({ kind: "delay", ms: item.deltaDelayMs });
        send("response.output_text.delta", { ...where, delta, logprobs: [] });
      });
      send("response.output_text.done", { ...where, text: item.text, logprobs: [] });
      send("response.content_part.done", { ...where, part: outputText(item.text) });
    } else if (item.kind === "thinking") {
      const where = { item_id, output_index, summary_index: 0 };
      send("response.reasoning_summary_part.added", { ...where, part: summaryText("") });
      for (const delta of item.deltas) send("response.reasoning_summary_text.delta", { ...where, delta });
      send("response.reasoning_summary_text.done", { ...where, text: item.thinking });
      send("response.reasoning_summary_part.done", { ...where, part: summaryText(item.thinking) });
    } else {
      const where = { item_id, output_index };
      for (const delta of item.deltas) send("response.function_call_arguments.delta", { ...where, delta });
      send("response.function_call_arguments.done", { ...where, arguments: item.deltas.join("") });
    }
    send("response.output_item.done", { output_index, item: finished });
    done.push(finished);
  }
  const status = finalStatus(plan);
  send(status === "completed" ? "response.completed" : "response.incomplete", {
    response: responseEnvelope(plan, status, done),
  });
  return steps;
}

/** The whole response object, for requests with `stream: false`. */
export function openaiResponse(plan: AnswerPlan, generateId: IdGenerator): Record<string, unknown> {
  const output = plan.items.flatMap((item) =>
    item.kind === "delay" || item.kind === "stall" || item.kind === "drop"
      ? []
      : [completedItem(item, generateId)],
  );
  return responseEnvelope(plan, finalStatus(plan), output);
}

function finalStatus(plan: AnswerPlan): "completed" | "incomplete" {
  return plan.stopReason === "max_tokens" ? "incomplete" : "completed";
}

function responseEnvelope(plan: AnswerPlan, status: string, output: OutputItem[]): Record<string, unknown> {
  return {
    id: plan.messageId,
    object: "response",
    created_at: 0,
    status,
    model: plan.model,
    output,
    ...(status === "incomplete" ? { incomplete_details: { reason: "max_output_tokens" } } : {}),
    ...(status === "in_progress" ? {} : { usage: usageOf(plan) }),
  };
}

function usageOf(plan: AnswerPlan): Record<string, unknown> {
  const { input_tokens, output_tokens, cache_read_input_tokens } = plan.usage;
  return {
    input_tokens,
    input_tokens_details: { cached_tokens: cache_read_input_tokens },
    output_tokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input_tokens + output_tokens,
  };
}

function outputText(text: string) {
  return { type: "output_text", text, annotations: [] };
}

function summaryText(text: string) {
  return { type: "summary_text", text };
}

function completedItem(block: PlannedBlock, generateId: IdGenerator): OutputItem & { id: string } {
  switch (block.kind) {
    case "text":
      return {
        id: generateId("msg_"),
        type: "message",
        status: "completed",
        role: "assistant",
        content: [outputText(block.text)],
      };
    case "thinking":
      return {
        id: generateId("rs_"),
        type: "reasoning",
        summary: [summaryText(block.thinking)],
        encrypted_content: block.signature,
      };
    case "tool_call":
      return {
        id: generateId("fc_"),
        type: "function_call",
        status: "completed",
        call_id: block.id,
        name: block.name,
        ...(block.namespace === undefined ? {} : { namespace: block.namespace }),
        arguments: block.deltas.join(""),
      };
  }
}

/** The output_item.added form: same identity, nothing generated yet. */
function startedItem(finished: OutputItem): OutputItem {
  switch (finished.type) {
    case "message":
      return { ...finished, status: "in_progress", content: [] };
    case "reasoning":
      return { id: finished.id, type: "reasoning", summary: [] };
    default:
      return { ...finished, status: "in_progress", arguments: "" };
  }
}

const errorByStatus: Record<number, { type: string; code: string | null }> = {
  400: { type: "invalid_request_error", code: null },
  401: { type: "invalid_request_error", code: "invalid_api_key" },
  404: { type: "invalid_request_error", code: "not_found" },
  429: { type: "requests", code: "rate_limit_exceeded" },
  500: { type: "server_error", code: "server_error" },
  503: { type: "server_error", code: "server_is_overloaded" },
};

export function openaiErrorBody(status: number, message: string, type?: string): Record<string, unknown> {
  const known = errorByStatus[status] ?? { type: "server_error", code: null };
  return { error: { message, type: type ?? known.type, param: null, code: known.code } };
}
