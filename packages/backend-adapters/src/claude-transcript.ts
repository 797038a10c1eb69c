import { homedir } from "node:os";
import { join } from "node:path";

// Claude Code 2.1.332 names a project folder after the physical cwd: every UTF-16 unit that is not an
// ASCII letter or digit becomes "-"; a name longer than 200 is cut to 200 and suffixed with a hash.
const maxProjectDirName = 200;

export function claudeProjectDirName(physicalCwd: string): string {
  const name = physicalCwd.replace(/[^a-zA-Z0-9]/g, "-");
  if (name.length <= maxProjectDirName) return name;
  return `${name.slice(0, maxProjectDirName)}-${Math.abs(javaStringHash(physicalCwd)).toString(36)}`;
}

/** Where Claude Code keeps the transcript of `sessionId` started in `physicalCwd` (no symlinks). */
export function claudeTranscriptPath(configDir: string, physicalCwd: string, sessionId: string): string {
  return join(configDir, "projects", claudeProjectDirName(physicalCwd), `${sessionId}.jsonl`);
}

/** `$CLAUDE_CONFIG_DIR`, else `~/.claude`, as the CLI resolves it from its environment. */
export function claudeConfigDir(env: Readonly<Record<string, string | undefined>>): string {
  const configured = env.CLAUDE_CONFIG_DIR;
  if (configured !== undefined && configured !== "") return configured;
  return join(env.HOME ?? homedir(), ".claude");
}

function javaStringHash(text: string): number {
  let hash = 0;
  for (let index = 0; index < text.length; index++) hash = ((hash << 5) - hash + text.charCodeAt(index)) | 0;
  return hash;
}
