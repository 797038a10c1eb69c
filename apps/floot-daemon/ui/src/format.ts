import type { TurnPhase, TurnRecord, UsageEvent } from "@bridgeworks/protocol";

export const activePhases: readonly TurnPhase[] = ["accepted", "spawning", "running", "awaiting_secret"];
export const retryablePhases: readonly TurnPhase[] = ["failed", "cancelled", "interrupted"];

export function isActive(phase: TurnPhase): boolean {
  return activePhases.includes(phase);
}

export function isEnded(phase: TurnPhase): boolean {
  return ["completed", "failed", "cancelled", "interrupted"].includes(phase);
}

export const phaseLabels: Record<TurnPhase, string> = {
  queued: "queued",
  accepted: "starting",
  spawning: "starting",
  running: "running",
  awaiting_secret: "needs a secret",
  completed: "completed",
  failed: "failed",
  cancelled: "cancelled",
  interrupted: "interrupted",
};

export function shortId(id: string): string {
  return id.length > 12 ? id.slice(-8) : id;
}

export function relativeTime(iso: string, now = Date.now()): string {
  const seconds = Math.round((now - Date.parse(iso)) / 1000);
  if (seconds < 45) return "just now";
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 36) return `${hours} h ago`;
  return new Date(iso).toLocaleDateString();
}

export function clockTime(iso: string): string {
  return new Date(iso).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

export function tokens(count: number): string {
  if (count >= 1_000_000) return `${Number((count / 1_000_000).toFixed(1))}M`;
  return count >= 10_000 ? `${(count / 1000).toFixed(1)}k` : String(count);
}

/** "context 20.5k of 1M (2%)", or "context 20.0k" where the CLI reports no window; "" when unknown. */
export function contextUse({ contextUsed, contextWindow }: UsageEvent): string {
  if (contextUsed === undefined) return "";
  if (!contextWindow) return `context ${tokens(contextUsed)}`;
  const percent = Math.min(100, Math.round((contextUsed / contextWindow) * 100));
  return `context ${tokens(contextUsed)} of ${tokens(contextWindow)} (${percent}%)`;
}

/** A tool's arguments in one line: the command or path when there is one, else compact JSON. */
export function argumentPreview(input: unknown): string {
  if (input && typeof input === "object" && !Array.isArray(input)) {
    const record = input as Record<string, unknown>;
    for (const key of ["command", "cmd", "file_path", "path", "pattern", "url", "name", "query"]) {
      const value = record[key];
      if (typeof value === "string") return value;
      if (Array.isArray(value) && value.every((each) => typeof each === "string")) return value.join(" ");
    }
  }
  const text = JSON.stringify(input);
  return text === undefined ? "" : text;
}

export function pretty(value: unknown): string {
  if (typeof value === "string") return value;
  return JSON.stringify(value, null, 2) ?? "";
}

/** `mcp__floot__requestSecret` reads better as `floot · requestSecret`. */
export function toolLabel(name: string): string {
  const mcp = /^mcp__([^_]+(?:_[^_]+)*)__(.+)$/.exec(name);
  return mcp ? `${mcp[1]} · ${mcp[2]}` : name;
}

/** What the composer's note says an active turn is doing. */
export const activeWording: Partial<Record<TurnRecord["phase"], string>> = {
  accepted: "is starting",
  spawning: "is starting",
  running: "is running",
  awaiting_secret: "waits for a secret",
};
