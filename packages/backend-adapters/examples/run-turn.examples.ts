// The README's example, type-checked (scripts/readme-examples.mjs keeps the README's copy equal).
import {
  type ConversationRef,
  createCodexAdapter,
  type McpMount,
  mintSpawnMarker,
  runTurn,
  type ToolGateSpec,
} from "@bridgeworks/backend-adapters";

// What the example takes from its surroundings: the daemon's session, journal and MCP mount.
declare const session: { env: Record<string, string>; codexOverrides: string[]; thread?: ConversationRef };
declare const journal: {
  transition(turnId: string, change: object): void;
  append(turnId: string, event: object): void;
};
declare const prompt: string;
declare const cwd: string;
declare const mount: McpMount;
declare const tools: string[];
declare const toolTimeoutMs: number;
declare const gate: ToolGateSpec;
declare const turnId: string;

//#region run-turn
const prepared = createCodexAdapter({
  env: session.env,
  configOverrides: session.codexOverrides,
}).prepareTurn({ prompt, cwd, conversation: session.thread, mcp: { mount, tools, toolTimeoutMs }, gate });
const spawnMarker = mintSpawnMarker();
journal.transition(turnId, { phase: "spawning", spawnMarker, conversationId: prepared.conversationId });
const turn = await runTurn(
  { ...prepared, launch: { ...prepared.launch, spawnMarker } },
  {
    onSpawned: (process) => journal.transition(turnId, { phase: "running", process }),
    onEvent: (event) => journal.append(turnId, event),
  },
);
const { outcome } = await turn.result; // -> journal.transition(turnId, { phase: outcome.phase, error })

//#endregion run-turn

export { outcome };
