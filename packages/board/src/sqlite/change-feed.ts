import { type FSWatcher, utimesSync, watch, writeFileSync } from "node:fs";
import { basename, dirname } from "node:path";
import type { ChangeSource } from "../wait.js";

export interface ChangeFeedInput {
  /** Touched after every commit; its directory is watched for touches by other processes. */
  notifyPath: string;
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
  readonly #listeners = new Set<(head?: number) => void>();
  #watcher: FSWatcher | undefined;
  #recheck: NodeJS.Timeout | undefined;
  #deliveryPending = false;

  constructor(input: ChangeFeedInput) {
    this.#input = input;
  }

  subscribe(listener: (head?: number) => void): () => void {
    this.#listeners.add(listener);
    if (this.#listeners.size === 1) this.#start();
    return () => {
      if (this.#listeners.delete(listener) && this.#listeners.size === 0) this.#stop();
    };
  }

  /** Call after a commit: wakes this process's waiters and tells other processes. */
  announce(): void {
    this.#scheduleDelivery();
    touch(this.#input.notifyPath);
  }

  close(): void {
    this.#listeners.clear();
    this.#stop();
  }

  #start(): void {
    const watchedName = basename(this.#input.notifyPath);
    try {
      this.#watcher = watch(dirname(this.#input.notifyPath), (_event, filename) => {
        if (filename === null || filename === watchedName) this.#scheduleDelivery();
      });
      // A watch that breaks (directory removed) leaves the re-check timer to carry on.
      this.#watcher.on("error", () => this.#closeWatcher());
    } catch {
      // No watch available (e.g. out of inotify watches): the re-check timer still wakes waiters.
      this.#watcher = undefined;
    }
    this.#recheck = setInterval(() => this.#scheduleDelivery(), this.#input.recheckIntervalMs);
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

  // Several commits or events in one tick cost one head read.
  #scheduleDelivery(): void {
    if (this.#deliveryPending) return;
    this.#deliveryPending = true;
    queueMicrotask(() => {
      this.#deliveryPending = false;
      this.#deliver();
    });
  }

  #deliver(): void {
    if (this.#listeners.size === 0) return;
    let head: number;
    try {
      head = this.#input.readHead();
    } catch {
      // A busy or closing store: the next event or the re-check tries again.
      return;
    }
    for (const listener of [...this.#listeners]) listener(head);
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
