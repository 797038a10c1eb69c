import type { AssistantEventStream } from "./event-stream.js";
import type { PiContext, PiMessage, PiModel, PiStreamOptions, PiTool, SystemMessage } from "./pi-types.js";

/**
 * The one place the two Pi lines differ for this provider.
 * - Registration: both take `registerProvider(name, ProviderConfig)` with `api`, `baseUrl`, `apiKey`,
 *   `models` and `streamSimple` (1.x also accepts a native `Provider` object; this package uses the
 *   legacy form both lines share). Extensions are loaded the same way (`pi.extensions`, jiti).
 * - Context: 0.73 passes `{systemPrompt, messages, tools}`; 1.x passes a transcript whose `system`
 *   messages carry the prompt (`content`, `sections`) and the tool set (`toolsAdded`/`toolsRemoved`).
 * - Package scope (`@mariozechner/*` vs `@earendil-works/*`) never matters: nothing here imports Pi.
 */
export interface ProviderRegistration {
  name?: string;
  api: string;
  baseUrl: string;
  apiKey: string;
  models: ProviderModelRegistration[];
  streamSimple: (model: PiModel, context: PiContext, options?: PiStreamOptions) => AssistantEventStream;
}

export interface ProviderModelRegistration {
  id: string;
  name: string;
  reasoning: boolean;
  input: ("text" | "image")[];
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number };
  contextWindow: number;
  maxTokens: number;
}

/** The slice of Pi's `ExtensionAPI` used here (identical on both lines). */
export interface PiExtensionHost {
  registerProvider(name: string, config: ProviderRegistration): void;
  on?(event: PiEventName, handler: (event: PiExtensionEvent, context: PiExtensionContext) => unknown): void;
  appendEntry?(customType: string, data?: unknown): void;
  getActiveTools?(): string[];
  getAllTools?(): readonly PiTool[];
  getThinkingLevel?(): string;
  registerCommand?(
    name: string,
    options: { description?: string; handler: (args: string, context: PiCommandContext) => Promise<void> },
  ): void;
}

/** The slice of Pi's `ExtensionCommandContext` a command reads. */
export interface PiCommandContext {
  readonly ui?: { notify(message: string, type?: "info" | "warning" | "error"): void };
  readonly sessionManager: { getBranch(): readonly { type: string; customType?: string; data?: unknown }[] };
}

export type PiEventName =
  | "session_start"
  | "session_shutdown"
  | "model_select"
  | "thinking_level_select"
  | "agent_end";

/** The fields of Pi's extension events read here (`model_select` carries the models). */
export interface PiExtensionEvent {
  readonly type: string;
  readonly model?: PiModel;
  readonly previousModel?: PiModel;
  /** `session_shutdown`: `quit`, or the session is being replaced (`new`, `resume`, `fork`, `reload`). */
  readonly reason?: string;
}

/** The slice of Pi's `ExtensionContext` read here. */
export interface PiExtensionContext {
  readonly model?: PiModel | undefined;
  readonly hasUI?: boolean;
  readonly ui?: { setStatus(key: string, text: string | undefined): void };
  readonly sessionManager: {
    getSessionId(): string;
    getBranch(): readonly { type: string; customType?: string; data?: unknown }[];
  };
  getSystemPrompt(): string;
}

export interface NormalizedContext {
  systemPrompt: string;
  tools: PiTool[];
  /** The conversation without system messages. */
  messages: Exclude<PiMessage, SystemMessage>[];
}

export function normalizeContext(context: PiContext): NormalizedContext {
  const messages: Exclude<PiMessage, SystemMessage>[] = [];
  const system: SystemMessage[] = [];
  for (const message of context.messages) {
    if (message.role === "system") system.push(message);
    else messages.push(message);
  }
  return {
    systemPrompt: context.systemPrompt ?? replaySystemPrompt(system),
    tools: context.tools ?? replayTools(system),
    messages,
  };
}

/** Pi 1.x `getCurrentSystemPrompt`: the leading content, its sections, then later additions. */
function replaySystemPrompt(system: readonly SystemMessage[]): string {
  const parts: string[] = [];
  const sections = new Map<string, string>();
  for (const message of system) {
    const text =
      typeof message.content === "string" ? message.content : message.content.map((c) => c.text).join("");
    if (text) parts.push(text);
    for (const [name, value] of Object.entries(message.sections ?? {})) {
      if (value === null) sections.delete(name);
      else sections.set(name, value);
    }
  }
  return [...parts, ...sections.values()].join("\n\n");
}

/** Pi 1.x `getCurrentTools`: tools added and removed by the system messages, in order. */
function replayTools(system: readonly SystemMessage[]): PiTool[] {
  const tools = new Map<string, PiTool>();
  for (const message of system) {
    for (const removed of message.toolsRemoved ?? []) tools.delete(removed.name);
    for (const added of message.toolsAdded ?? []) tools.set(added.name, added);
  }
  return [...tools.values()];
}

const registeredHosts = Symbol.for("@bridgeworks/pi-provider/registered-hosts");

/**
 * The documented global: Pi can load this package twice in one process (installed and `-e`, or a
 * second module instance for a subagent). Registering again from another module instance would
 * replace the first instance's `streamSimple` and strand its live Claude sessions, so a host gets
 * the provider once, from whichever instance came first.
 */
export function registerOnce(
  host: PiExtensionHost,
  name: string,
  config: () => ProviderRegistration,
): boolean {
  const store = globalThis as { [registeredHosts]?: WeakSet<object> };
  store[registeredHosts] ??= new WeakSet();
  if (store[registeredHosts].has(host)) return false;
  store[registeredHosts].add(host);
  host.registerProvider(name, config());
  return true;
}
