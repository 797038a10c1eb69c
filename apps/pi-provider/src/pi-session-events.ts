import {
  CLAUDE_RECEIPT_ENTRY_TYPE,
  CLAUDE_SESSION_ENTRY_TYPE,
  ClaudeSessionRecord,
} from "@bridgeworks/protocol";
import { backgroundClosed, closeInBackground } from "./closing-queries.js";
import { PROVIDER_NAME } from "./models.js";
import type { PiExtensionContext, PiExtensionHost } from "./pi-adapter.js";
import type { PiStreamOptions, PiTool } from "./pi-types.js";
import type { ClaudeCodeProvider } from "./provider.js";
import type { QueryInputs } from "./query-inputs.js";
import { discardSuccessor } from "./successor-query.js";

/** The key of the provider's line in Pi's status area (the footer; RPC `setStatus`). */
export const STATUS_KEY = "claude-code";

/**
 * Follows the Pi session this extension instance serves (Pi loads a new instance for every new or
 * resumed session) through Pi's extension events:
 * - `session_start`: resume the Claude session its entries record (`--continue`), and start the
 *   query ahead of the first prompt when the session's model is a claude-code one;
 * - `model_select`, `thinking_level_select`: start (or restart) the query for the new settings, or
 *   end it when Pi moved to another provider;
 * - `agent_end`: record the run's receipt, and the Claude session when it moved on, in Pi's session file;
 * - `session_shutdown`: end every Claude Code process; Pi's quit waits until they all exited, a
 *   session replacement does not (the next session's Claude Code starts meanwhile).
 */
export class PiSessionFollower {
  private context: PiExtensionContext | undefined;
  private readonly recorded = new Map<string, string>();
  private shown: string | undefined;

  constructor(
    private readonly pi: PiExtensionHost,
    private readonly warn: (line: string) => void,
  ) {}

  /** Shows `text` (or clears the line) where Pi shows provider status; a repeat changes nothing. */
  showStatus(text: string | undefined): void {
    if (!this.context?.hasUI || text === this.shown) return;
    this.shown = text;
    this.context.ui?.setStatus(STATUS_KEY, text);
  }

  follow(provider: ClaudeCodeProvider): void {
    const on = this.pi.on?.bind(this.pi);
    if (!on) return;
    on("session_start", (_event, context) => {
      this.context = context;
      this.showStatus(provider.statusLine());
      const sessionId = context.sessionManager.getSessionId();
      const record = this.recordedSession(context);
      if (record) {
        provider.restore(sessionId, record);
        this.recorded.set(sessionId, JSON.stringify(record));
      }
      this.prepare(provider, context);
      // The query the previous session started for this one, if prepare did not adopt it.
      discardSuccessor();
    });
    on("model_select", (event, context) => {
      this.context = context;
      if (event.model?.provider === PROVIDER_NAME) this.prepare(provider, context);
      else if (event.previousModel?.provider === PROVIDER_NAME)
        void provider.suspend(context.sessionManager.getSessionId());
    });
    on("thinking_level_select", (_event, context) => {
      this.context = context;
      this.prepare(provider, context);
    });
    on("agent_end", (_event, context) => {
      this.context = context;
      const sessionId = context.sessionManager.getSessionId();
      const receipt = provider.takeReceipt(sessionId);
      if (receipt) this.pi.appendEntry?.(CLAUDE_RECEIPT_ENTRY_TYPE, receipt);
      const record = provider.record(sessionId);
      const json = record && JSON.stringify(record);
      if (!json || json === this.recorded.get(sessionId)) return;
      this.pi.appendEntry?.(CLAUDE_SESSION_ENTRY_TYPE, record);
      this.recorded.set(sessionId, json);
    });
    on("session_shutdown", async (event, context) => {
      if (event.reason === "new") {
        const inputs = this.inputsOf(context);
        if (inputs) provider.prestartSuccessor(inputs);
      }
      const ending = provider.dispose();
      // A replaced session's Claude Code exits while Pi starts the next session (whose Claude Code
      // starts at once); Pi's quit waits for every one of them.
      if (event.reason !== undefined && event.reason !== "quit") return closeInBackground(ending);
      await ending;
      discardSuccessor();
      await backgroundClosed();
    });
  }

  /** Starts the session's query now, with what its first request will carry (nothing is sent). */
  private prepare(provider: ClaudeCodeProvider, context: PiExtensionContext): void {
    const inputs = this.inputsOf(context);
    if (!inputs) return;
    provider
      .prepare(context.sessionManager.getSessionId(), inputs)
      .catch((error: unknown) =>
        this.warn(`claude-code: starting Claude Code ahead failed: ${String(error)}`),
      );
  }

  /** What the session's first request will carry, when its model is a claude-code one. */
  private inputsOf(context: PiExtensionContext): QueryInputs | undefined {
    const model = context.model;
    if (model?.provider !== PROVIDER_NAME) return undefined;
    const tools = this.activeTools();
    if (!tools) return undefined;
    return {
      model,
      systemPrompt: context.getSystemPrompt(),
      tools,
      reasoning: reasoningOf(this.pi.getThinkingLevel?.()),
    };
  }

  /** Pi's active tools as its requests carry them; undefined when this Pi cannot say. */
  private activeTools(): PiTool[] | undefined {
    const active = this.pi.getActiveTools?.();
    const all = this.pi.getAllTools?.();
    if (!active || !all) return undefined;
    const names = new Set(active);
    return all
      .filter((tool) => names.has(tool.name))
      .map(({ name, description, parameters }) => ({ name, description, parameters }));
  }

  /** The last record of this provider on the session's branch; a malformed one is reported and ignored. */
  private recordedSession(context: PiExtensionContext): ClaudeSessionRecord | undefined {
    const entry = context.sessionManager
      .getBranch()
      .findLast(
        (candidate) => candidate.type === "custom" && candidate.customType === CLAUDE_SESSION_ENTRY_TYPE,
      );
    if (!entry) return undefined;
    const parsed = ClaudeSessionRecord.safeParse(entry.data);
    if (parsed.success) return parsed.data;
    this.warn(
      `claude-code: ignoring the session's ${CLAUDE_SESSION_ENTRY_TYPE} entry, which is malformed: ${parsed.error.issues
        .map((issue) => `${issue.path.join(".") || "(entry)"}: ${issue.message}`)
        .join("; ")}`,
    );
    return undefined;
  }
}

/** Pi passes no reasoning level when thinking is off (`agent.js`: `thinkingLevel === "off" ? undefined`). */
function reasoningOf(level: string | undefined): PiStreamOptions["reasoning"] {
  return level === "minimal" || level === "low" || level === "medium" || level === "high" || level === "xhigh"
    ? level
    : undefined;
}
