import type {
  HookCallback,
  SDKControlInitializeResponse,
  SDKMessage,
  SDKUserMessage,
} from "@anthropic-ai/claude-agent-sdk";
import type { ClaudeWarmUpRecord } from "@bridgeworks/protocol";

/** What Claude Code's transcript keeps of a warm-up: one informational line with this reason. */
export const WARM_UP_BLOCK_REASON =
  "claude-code provider for Pi: a warm-up before the first prompt, blocked here and never sent to the model";

/**
 * Under 10 characters: Claude Code asks the model for a session title from the first prompt of at
 * least 10 (read in the 2.1.332 binary: `function S(e){return e.trim().length>=y}` with `y=10` gates
 * the `generate_session_title` request), which would cost tokens before any prompt and name the
 * session after the warm-up; the real first prompt is still titled as usual.
 */
export const WARM_UP_PROMPT = "warm-up";

export type WarmUpOutcome = Pick<ClaudeWarmUpRecord, "outcome" | "ms" | "reason">;

/**
 * The first prompt a Claude Code process handles takes it about 100 ms longer than later ones, its
 * prompt path running for the first time (2.1.332 through the Agent SDK: 145 ms from the prompt to its
 * request, then 45 ms; docs/first-token.md). A query started ahead of its first prompt
 * sends one prompt of its own that its own `UserPromptSubmit` hook blocks, the documented way to drop
 * a prompt: Claude Code runs its prompt path up to the hooks, asks the model nothing, and keeps nothing
 * of it in the conversation (`prompt_kept: false`). It is sent only when Claude Code says it registered
 * the hook (`hooks_applied`), and only before any prompt of Pi's; everything Claude Code says for it,
 * up to its `result`, is the warm-up's and never Pi's.
 */
export class WarmUp {
  readonly outcome: Promise<WarmUpOutcome>;
  private settle: (outcome: WarmUpOutcome) => void = () => undefined;
  private sentAt: number | undefined;
  private blocked = false;
  private answered = false;
  private finished = false;

  constructor(private readonly now: () => number = () => performance.now()) {
    this.outcome = new Promise((resolve) => {
      this.settle = resolve;
    });
  }

  /**
   * Blocks the warm-up's prompt, once: it is the first prompt Claude Code gets (it is sent only
   * before any of Pi's), so a prompt of Pi's with the same text is never blocked.
   */
  readonly hook: HookCallback = async (input) => {
    if (input.hook_event_name !== "UserPromptSubmit" || this.sentAt === undefined || this.blocked) return {};
    this.blocked = true;
    return input.prompt === WARM_UP_PROMPT ? { decision: "block", reason: WARM_UP_BLOCK_REASON } : {};
  };

  /** The message to send now that Claude Code initialized, or nothing (the warm-up is skipped). */
  start(init: SDKControlInitializeResponse | undefined, promptSent: boolean): SDKUserMessage | undefined {
    if (init?.hooks_applied !== true)
      return this.skip("Claude Code did not register the hook that blocks it");
    if (promptSent) return this.skip("a prompt came first");
    this.sentAt = this.now();
    return { type: "user", message: { role: "user", content: WARM_UP_PROMPT }, parent_tool_use_id: null };
  }

  skip(reason: string): undefined {
    this.settle({ outcome: "skipped", reason });
    return undefined;
  }

  /**
   * Whether `message` is the warm-up's: `warm-up` (keep it from Pi), `answered` (its last, and the
   * model saw the prompt), or undefined (Pi's).
   */
  read(message: SDKMessage): "warm-up" | "answered" | undefined {
    if (this.sentAt === undefined || this.finished) return undefined;
    if (message.type === "assistant" || message.type === "stream_event") this.answered = true;
    if (message.type !== "result") return "warm-up";
    this.finished = true;
    this.settle(
      this.answered
        ? { outcome: "answered" }
        : { outcome: "blocked", ms: Math.round(this.now() - this.sentAt) },
    );
    return this.answered ? "answered" : "warm-up";
  }
}
