/** Error codes an adapter reports in `failed` outcomes (others come from the backend, e.g. `max_turns`). */
export const TurnErrorCode = {
  apiError: "api_error",
  rateLimited: "rate_limited",
  conversationMissing: "backend_conversation_missing",
  sessionInUse: "session_in_use",
  bridgeUnavailable: "bridge_unavailable",
  cliCrashed: "cli_crashed",
  /** stdout carried a line longer than the CLI core reads (a flood, not stream-json). */
  outputTooLarge: "cli_output_too_large",
  cliNotFound: "cli_not_found",
  cliNotExecutable: "cli_not_executable",
  cliSpawnFailed: "cli_spawn_failed",
} as const;
export type TurnErrorCode = (typeof TurnErrorCode)[keyof typeof TurnErrorCode];
