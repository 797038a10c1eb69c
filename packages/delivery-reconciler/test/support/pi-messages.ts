/** The shapes of Pi 0.73's `context.messages` (pi-ai `Message`), enough for the ledger's tests. */
export interface TextBlock {
  type: "text";
  text: string;
}
export interface ToolCallBlock {
  type: "toolCall";
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}
export interface PiUserMessage {
  role: "user";
  content: string;
  timestamp: number;
}
export interface PiAssistantMessage {
  role: "assistant";
  content: (TextBlock | ToolCallBlock)[];
  stopReason: "stop" | "toolUse";
  timestamp: number;
}
export interface PiToolResultMessage {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: TextBlock[];
  isError: boolean;
  timestamp: number;
}
export type PiMessage = PiUserMessage | PiAssistantMessage | PiToolResultMessage;

/** Builds messages with increasing timestamps, as Pi stamps them. */
export class MessageFactory {
  private time = 1_700_000_000_000;

  user(text = "go on"): PiUserMessage {
    return { role: "user", content: text, timestamp: this.tick() };
  }

  assistant(...calls: { id: string; name?: string }[]): PiAssistantMessage {
    return {
      role: "assistant",
      content: calls.length
        ? calls.map((call) => ({ type: "toolCall", id: call.id, name: call.name ?? "bash", arguments: {} }))
        : [{ type: "text", text: "thinking out loud" }],
      stopReason: calls.length ? "toolUse" : "stop",
      timestamp: this.tick(),
    };
  }

  /** The text names the id, so a test can see that a handler got the result meant for it. */
  result(toolCallId: string, text = `output of ${toolCallId}`): PiToolResultMessage {
    return {
      role: "toolResult",
      toolCallId,
      toolName: "bash",
      content: [{ type: "text", text }],
      isError: false,
      timestamp: this.tick(),
    };
  }

  /** A conversation of `length` messages made of complete user/assistant/tool rounds. */
  history(length: number, idPrefix = "hist"): PiMessage[] {
    const messages: PiMessage[] = [];
    for (let round = 0; messages.length < length; round++) {
      const id = `${idPrefix}_${round}`;
      const next: PiMessage[] = [this.user(), this.assistant({ id }), this.result(id)];
      messages.push(...next.slice(0, length - messages.length));
    }
    return messages;
  }

  private tick(): number {
    this.time += 1;
    return this.time;
  }
}

export function resultText(message: PiMessage): string | undefined {
  if (message.role !== "toolResult") return undefined;
  return message.content[0]?.text;
}
