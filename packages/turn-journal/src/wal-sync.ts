import { closeSync, fdatasync, fsync, openSync } from "node:fs";
import { dirname } from "node:path";

type SyncCall = (fd: number, done: (error: NodeJS.ErrnoException | null) => void) => void;

export interface WalSyncOptions {
  /** The database file; its WAL is `${path}-wal`. */
  path: string;
  /** fdatasync(2) on libuv's thread pool; a test passes a spy. */
  fdatasync?: SyncCall;
  /** fsync(2) of the directory, the first time: the WAL's directory entry is on disk too. */
  fsync?: SyncCall;
}

/**
 * Group commit for a WAL-mode database, off the event loop. `sync()` resolves once an fdatasync of the
 * WAL that began after the call has returned: every commit made before the call is then on disk, whatever
 * its `synchronous`. (Linux flushes a file's pages whichever descriptor asks, so this descriptor covers
 * SQLite's writes.) Calls made while one runs share the next one: a burst of commits costs two fsyncs,
 * not one each. The first sync also fsyncs the directory once, as SQLite does for a new WAL.
 */
export class WalSync {
  readonly #walPath: string;
  readonly #fdatasync: SyncCall;
  readonly #fsync: SyncCall;
  #fd: number | undefined;
  #directorySynced = false;
  #running: Promise<void> | undefined;
  #queued: Promise<void> | undefined;
  #closed = false;

  constructor(options: WalSyncOptions) {
    this.#walPath = `${options.path}-wal`;
    this.#fdatasync = options.fdatasync ?? fdatasync;
    this.#fsync = options.fsync ?? fsync;
  }

  sync(): Promise<void> {
    if (this.#queued) return this.#queued;
    const running = this.#running;
    if (running === undefined) return this.#start();
    // The running one may have begun before the caller's commit: the caller waits for the next.
    const queued = running
      .catch(() => {})
      .then(() => {
        this.#queued = undefined;
        return this.#start();
      });
    this.#queued = queued;
    return queued;
  }

  /** No sync starts after this; the descriptor closes once the running one has returned. */
  close(): void {
    this.#closed = true;
    if (this.#running === undefined) this.#closeDescriptor();
  }

  #start(): Promise<void> {
    if (this.#closed) return Promise.reject(new Error(`the journal ${this.#walPath} is closed`));
    const running = this.#syncOnce();
    this.#running = running;
    const settle = () => {
      if (this.#running === running) this.#running = undefined;
      if (this.#closed && this.#running === undefined) this.#closeDescriptor();
    };
    running.then(settle, settle);
    return running;
  }

  async #syncOnce(): Promise<void> {
    this.#fd ??= openSync(this.#walPath, "r");
    await call(this.#fdatasync, this.#fd);
    if (this.#directorySynced) return;
    const directory = openSync(dirname(this.#walPath), "r");
    try {
      await call(this.#fsync, directory);
    } finally {
      closeSync(directory);
    }
    this.#directorySynced = true;
  }

  #closeDescriptor(): void {
    if (this.#fd === undefined) return;
    closeSync(this.#fd);
    this.#fd = undefined;
  }
}

function call(sync: SyncCall, fd: number): Promise<void> {
  return new Promise((resolve, reject) => sync(fd, (error) => (error ? reject(error) : resolve())));
}
