import type { ProviderModelRegistration } from "./pi-adapter.js";

export const PROVIDER_NAME = "claude-code";
/** Unique api id: Pi keys `streamSimple` implementations by it. */
export const PROVIDER_API = "claude-code-agent-sdk";

/** The ids are Claude Code's model aliases and are passed to it as is. Rates: USD per million tokens. */
export const claudeCodeModels: ProviderModelRegistration[] = [
  {
    id: "sonnet",
    name: "Claude Sonnet (Claude Code)",
    reasoning: true,
    input: ["text", "image"],
    cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    contextWindow: 200_000,
    maxTokens: 64_000,
  },
  {
    id: "opus",
    name: "Claude Opus (Claude Code)",
    reasoning: true,
    input: ["text", "image"],
    cost: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 },
    contextWindow: 200_000,
    maxTokens: 64_000,
  },
  {
    id: "haiku",
    name: "Claude Haiku (Claude Code)",
    reasoning: true,
    input: ["text", "image"],
    cost: { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
    contextWindow: 200_000,
    maxTokens: 64_000,
  },
];
