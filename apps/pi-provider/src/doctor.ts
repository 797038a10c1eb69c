import { CLAUDE_RECEIPT_ENTRY_TYPE, ClaudeTurnReceipt, type RebuildReason } from "@bridgeworks/protocol";
import type { PiExtensionHost } from "./pi-adapter.js";
import type { ClaudeCodeProvider, ProviderFacts } from "./provider.js";
import { limitName, type RateLimitState, resetText } from "./rate-limits.js";
import { SPEND_VARIABLE } from "./spend-guard.js";
import { agentSdkVersion, piProviderVersion, piVersion } from "./version.js";

export const COMMAND_NAME = "claude-code";

export interface DoctorInput {
  readonly facts: ProviderFacts;
  /** This Pi session's receipts, oldest first, as its session file holds them (`claude-code-receipt`). */
  readonly receipts: readonly ClaudeTurnReceipt[];
  /** Receipt entries that did not parse (a newer or damaged session file). */
  readonly malformedReceipts: number;
  readonly versions: { readonly agentSdk: string | undefined; readonly pi: string | undefined };
  readonly nowMs: number;
}

/** `/claude-code doctor`: what this session cost the cache, the limits, the guard, the versions. */
export function doctorReport(input: DoctorInput): string {
  const { facts, receipts } = input;
  const sum = (pick: (receipt: ClaudeTurnReceipt) => number) =>
    receipts.reduce((total, receipt) => total + pick(receipt), 0);
  const read = sum((receipt) => receipt.cacheReadTokens);
  const written = sum((receipt) => receipt.cacheWriteTokens);
  const uncached = sum((receipt) => receipt.inputTokens);
  const prompt = read + written + uncached;
  const hitRate =
    prompt > 0
      ? `cache hit rate ${Math.round((read / prompt) * 100)}% (read ${read}, written ${written}, uncached ${uncached} tokens)`
      : "no model request yet";
  const version = (value: string | undefined) => value ?? "unknown";
  return [
    "Claude Code provider doctor",
    `Versions: Claude Code ${version(facts.claudeCodeVersion)}, Agent SDK ${version(input.versions.agentSdk)}, Pi ${version(input.versions.pi)}, provider ${piProviderVersion}`,
    `Spending: ${spendingLine(facts)}`,
    `Limits: ${limitsLine(facts.limits, input.nowMs)}`,
    `This session: ${receipts.length} runs, ${sum((receipt) => receipt.requests)} model requests; ${hitRate}`,
    `Cache rebuilds: ${rebuildsLine(receipts)}`,
    `Tool results: ${sum((receipt) => receipt.lateToolResults.length)} late, ${sum((receipt) => receipt.droppedToolResults.length)} dropped`,
    `Keep-warm: ${keepWarmLine(facts)}, ${sum((receipt) => receipt.keepWarmRequests ?? 0)} side questions asked while tools ran`,
    ...(input.malformedReceipts > 0 ? [`(${input.malformedReceipts} receipts unreadable)`] : []),
  ].join("\n");
}

function keepWarmLine(facts: ProviderFacts): string {
  const setting = facts.keepWarm;
  if (setting.kind === "off") return "off";
  return setting.kind === "auto"
    ? "on (before Claude Code's cache lifetime ends)"
    : `every ${setting.everyMs} ms`;
}

function spendingLine(facts: ProviderFacts): string {
  if (facts.spend === "any") return `any (${SPEND_VARIABLE} unset: extra usage is not refused)`;
  const state = facts.refusal ? `refusing requests now: ${facts.refusal}` : "requests go ahead";
  return `plan only (${SPEND_VARIABLE}=plan-only); ${state}`;
}

function limitsLine(limits: readonly RateLimitState[], nowMs: number): string {
  if (limits.length === 0)
    return "none reported (Claude Code reports them with a Claude subscription sign-in)";
  return limits
    .map((limit) => {
      const parts = [limit.status];
      if (limit.utilization !== undefined) parts.push(`${Math.round(limit.utilization * 100)}% used`);
      if (limit.resetsAtMs !== undefined) parts.push(resetText(limit.resetsAtMs, nowMs));
      if (limit.usingOverage) parts.push("drawing extra usage");
      return `${limitName(limit.window)}: ${parts.join(", ")}`;
    })
    .join("; ");
}

function rebuildsLine(receipts: readonly ClaudeTurnReceipt[]): string {
  const counts = new Map<RebuildReason, number>();
  for (const reason of receipts.flatMap((receipt) => receipt.rebuilds))
    counts.set(reason, (counts.get(reason) ?? 0) + 1);
  if (counts.size === 0) return "none";
  return [...counts].map(([reason, count]) => `${reason} ${count}`).join(", ");
}

/** Registers `/claude-code` (`doctor`) with Pi; its report goes to Pi's notification area. */
export function registerDoctorCommand(pi: PiExtensionHost, provider: ClaudeCodeProvider): void {
  pi.registerCommand?.(COMMAND_NAME, {
    description: "Claude Code provider: `doctor` shows cache, rebuilds, limits, spending guard, versions",
    handler: async (args, context) => {
      if (args.trim() !== "doctor") {
        context.ui?.notify(`Usage: /${COMMAND_NAME} doctor`, "warning");
        return;
      }
      const entries = context.sessionManager
        .getBranch()
        .filter((entry) => entry.type === "custom" && entry.customType === CLAUDE_RECEIPT_ENTRY_TYPE);
      const parsed = entries.map((entry) => ClaudeTurnReceipt.safeParse(entry.data));
      const receipts = parsed.flatMap((result) => (result.success ? [result.data] : []));
      const report = doctorReport({
        facts: provider.facts(),
        receipts,
        malformedReceipts: parsed.length - receipts.length,
        versions: { agentSdk: agentSdkVersion(), pi: piVersion() },
        nowMs: Date.now(),
      });
      context.ui?.notify(report, "info");
    },
  });
}
