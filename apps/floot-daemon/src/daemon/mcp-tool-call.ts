import type { Logger } from "@bridgeworks/runtime";
import type { PermissionBroker } from "./permission-broker.js";
import type { SecretBroker, TurnContext } from "./secret-broker.js";

/** What the server hands each of the daemon's tools beside its arguments. */
export interface FlootToolCall {
  context: TurnContext;
  secrets: SecretBroker;
  permissions: PermissionBroker;
  logger: Logger;
  /** The tool call's own id, so a repeated call finds its request instead of asking twice. */
  toolCallKey: string;
  signal: AbortSignal;
}
