import { type FSWatcher, utimesSync, watch, writeFileSync } from "node:fs";
import { basename, dirname } from "node:path";
import type { ChangeScope, ChangeSource } from "../wait.js";

export interface ChangeFeedInput {
  /**
   * Touched after every commit that made an action claimable; its directory is watched for touches
   * by other processes.
   */
  notifyPath: string;
  /** Touched after every other commit that changed something (claims, completes, identities). */
  eventsPath: string;
  /** The board's latest position; a cheap indexed read. */
  readHead: () => number;
  /** The slow safety re-check, in case a watch event is missed or a writer died before touching. */
  recheckIntervalMs: number;
}

/**
 * Wake-ups for waiters. A commit in this process announces itself directly; a commit in another
 * process touches the notify file, which the directory watch sees within a few milliseconds. Each
 * wake-up reads the head once and hands it to every listener. The watch and the re-check timer run
 * only while someone is listening, so an idle board holds no handles.
 */
export class ChangeFeed implements ChangeSource {
  readonly #input: ChangeFeedInput;
  readonly #listeners = new Map<(head?: number) => void, ChangeScope>();
  #watcher: FSWatcher | undefined;
  #recheck: NodeJS.Timeout | undefined;
  #deliveryPending: ChangeScope | undefined;

  constructor(input: ChangeFeedInput) {
    this.#input = input;
  }

  subscribe(listener: (head?: number) => void, scope: ChangeScope = "claimable"): () => void {
    this.#listeners.set(listener, scope);
    if (this.#listeners.size === 1) this.#start();
    return () => {
      if (this.#listeners.delete(listener) && this.#listeners.size === 0) this.#stop();
    };
  }

  /**
   * Call after a commit: wakes this process's waiters and tells other processes. `claimable`: the
   * commit made an action claimable; `every`: it changed something else.
   */
  announce(change: ChangeScope = "claimable"): void {
    this.#scheduleDelivery(change);
    touch(change === "claimable" ? this.#input.notifyPath : this.#input.eventsPath);
  }

  close(): void {
    this.#listeners.clear();
    this.#stop();
  }

  #start(): void {
    const claimableName = basename(this.#input.notifyPath);
    const eventsName = basename(this.#input.eventsPath);
    try {
      this.#watcher = watch(dirname(this.#input.notifyPath), (_event, filename) => {
        if (filename === null || filename === claimableName) this.#scheduleDelivery("claimable");
        else if (filename === eventsName) this.#scheduleDelivery("every");
      });
      // A watch that breaks (directory removed) leaves the re-check timer to carry on.
      this.#watcher.on("error", () => this.#closeWatcher());
    } catch {
      // No watch available (e.g. out of inotify watches): the re-check timer still wakes waiters.
      this.#watcher = undefined;
    }
    this.#recheck = setInterval(() => this.#scheduleDelivery("claimable"), this.#input.recheckIntervalMs);
  }

  #stop(): void {
    this.#closeWatcher();
    clearInterval(this.#recheck);
    this.#recheck = undefined;
  }

  #closeWatcher(): void {
    this.#watcher?.close();
    this.#watcher = undefined;
  }

  // Several commits or events in one tick cost one head read; a claimable one wakes every listener.
  #scheduleDelivery(change: ChangeScope): void {
    if (this.#deliveryPending !== undefined) {
      if (change === "claimable") this.#deliveryPending = change;
      return;
    }
    this.#deliveryPending = change;
    queueMicrotask(() => {
      const pending = this.#deliveryPending ?? "claimable";
      this.#deliveryPending = undefined;
      this.#deliver(pending);
    });
  }

  #deliver(change: ChangeScope): void {
    const listeners = [...this.#listeners].filter(([, scope]) => change === "claimable" || scope === "every");
    if (listeners.length === 0) return;
    let head: number;
    try {
      head = this.#input.readHead();
    } catch {
      // A busy or closing store: the next event or the re-check tries again.
      return;
    }
    for (const [listener] of listeners) listener(head);
  }
}

// Only the event matters, not the time set: the watch fires on every utimes call, same time or not.
const touchTime = new Date(0);

function touch(path: string): void {
  try {
    utimesSync(path, touchTime, touchTime);
  } catch {
    // Someone removed the notify file: recreate it, which the watchers see as well.
    try {
      writeFileSync(path, "", { mode: 0o600 });
    } catch {
      // The commit stands either way; other processes catch up at their next re-check.
    }
  }
}
