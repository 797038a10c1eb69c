import { existsSync, readFileSync } from "node:fs";
import { mkdir, readdir, readFile } from "node:fs/promises";
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
  /** Each session's own workspace (`workspace` set at creation), read from every session's file once. */
  #customWorkspaces: Promise<Map<string, string>> | undefined;

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
    if (options.workspace !== undefined) (await this.#customWorkspaces)?.set(sessionId, options.workspace);
  }

  /**
   * The workspaces of the other sessions that chose their own (the default ones are under the state
   * dir): what a confined turn of `sessionId` must not reach. The first call reads every session's file.
   */
  async otherWorkspaces(sessionId: string): Promise<string[]> {
    this.#customWorkspaces ??= this.#readCustomWorkspaces();
    const all = await this.#customWorkspaces;
    return [...all].filter(([id]) => id !== sessionId).map(([, path]) => path);
  }

  async #readCustomWorkspaces(): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    const ids = await readdir(this.#dir).catch(() => [] as string[]);
    for (const id of ids) {
      const text = await readFile(join(this.#dir, id, "session.json"), "utf8").catch(() => undefined);
      if (text === undefined) continue;
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        continue;
      }
      const parsed = FlootSessionOptions.safeParse(json);
      if (parsed.success && parsed.data.workspace !== undefined) found.set(id, parsed.data.workspace);
    }
    return found;
  }

  /** A scratch dir of the session's (0700), for a confined backend that gives commands no temp dir. */
  async scratchDir(sessionId: string): Promise<string> {
    const dir = join(this.sessionDir(sessionId), "tmp");
    await mkdir(dir, { recursive: true, mode: 0o700 });
    return dir;
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
      sandbox: options.sandbox ?? { enabled: true },
    };
  }
}
