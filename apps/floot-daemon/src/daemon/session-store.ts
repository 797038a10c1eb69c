import { existsSync, readFileSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { writePrivateFileAtomic } from "@bridgeworks/control-channel";
import { type FlootSession, FlootSessionOptions, type SessionRecord } from "@bridgeworks/protocol";
import { effectFreeToolsOf } from "./effect-free-tools.js";

/**
 * Each session's configuration, beside the journal: `<state>/sessions/<id>/session.json` (0600: env
 * values may be credentials the user chose to give the session). A missing file means the defaults.
 */
export class SessionStore {
  readonly #dir: string;
  readonly #cache = new Map<string, FlootSessionOptions>();

  constructor(stateDir: string) {
    this.#dir = join(stateDir, "sessions");
  }

  sessionDir(sessionId: string): string {
    return join(this.#dir, sessionId);
  }

  defaultWorkspace(sessionId: string): string {
    return join(this.sessionDir(sessionId), "workspace");
  }

  async save(sessionId: string, options: FlootSessionOptions): Promise<void> {
    const dir = this.sessionDir(sessionId);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    await writePrivateFileAtomic(join(dir, "session.json"), `${JSON.stringify(options)}\n`);
    this.#cache.set(sessionId, options);
  }

  options(sessionId: string): FlootSessionOptions {
    const cached = this.#cache.get(sessionId);
    if (cached) return cached;
    const path = join(this.sessionDir(sessionId), "session.json");
    const parsed = existsSync(path)
      ? FlootSessionOptions.safeParse(JSON.parse(readFileSync(path, "utf8")))
      : undefined;
    const options = parsed?.success ? parsed.data : {};
    this.#cache.set(sessionId, options);
    return options;
  }

  workspace(sessionId: string): string {
    return this.options(sessionId).workspace ?? this.defaultWorkspace(sessionId);
  }

  /** The API's view: the journal's record plus the configuration, env names only. */
  present(record: SessionRecord): FlootSession {
    const options = this.options(record.id);
    return {
      ...record,
      workspace: this.workspace(record.id),
      ...(options.model !== undefined && { model: options.model }),
      envNames: Object.keys(options.env ?? {}),
      ...(options.codexConfig !== undefined && { codexConfig: options.codexConfig }),
      ...(options.allowedTools !== undefined && { allowedTools: options.allowedTools }),
      ...(options.permissionMode !== undefined && { permissionMode: options.permissionMode }),
      ...(options.permissionTimeoutMs !== undefined && { permissionTimeoutMs: options.permissionTimeoutMs }),
      effectFreeTools: [...effectFreeToolsOf(record.backend, options)],
    };
  }
}
