import { fdatasync, fsync, readlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, test } from "vitest";
import { openJournal, type TurnJournal } from "../src/journal.js";
import { openSqlite } from "../src/sqlite.js";
import { WalSync } from "../src/wal-sync.js";
import { createTestJournal, runningTurn, tempDir } from "./helpers.js";

type Done = (error: NodeJS.ErrnoException | null) => void;

/** What a descriptor is open on, as Linux says (`/proc/self/fd`); undefined once it is closed. */
function fileOf(fd: number): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

/** An fsync that returns only when the test says so, recording what it was asked to sync. */
function heldSync() {
  const calls: { file: string | undefined; fd: number; finish: (error?: NodeJS.ErrnoException) => void }[] =
    [];
  const sync = (fd: number, done: Done) => {
    calls.push({ file: fileOf(fd), fd, finish: (error) => done(error ?? null) });
  };
  return { calls, sync };
}

function settled(promise: Promise<unknown>): () => string {
  let state = "pending";
  promise.then(
    () => (state = "resolved"),
    (error: Error) => (state = `rejected: ${error.message}`),
  );
  return () => state;
}

const turnOfTheLoop = () => new Promise((resolve) => setImmediate(resolve));

function journalAt(): { journal: TurnJournal; path: string } {
  const path = join(tempDir(), "journal.sqlite");
  const journal = openJournal({ path });
  journal.maintenance.deferDurability(() => journal.sessions.createSession({ backend: "claude" }));
  return { journal, path };
}

/** A WalSync of a real journal whose fdatasync returns only when the test says so. */
function heldWalSync() {
  const { journal, path } = journalAt();
  const held = heldSync();
  const walSync = new WalSync({ path, fdatasync: held.sync, fsync: (_fd, done) => done(null) });
  return { journal, path, held, walSync };
}

describe("WalSync: group commit off the event loop", () => {
  test("fdatasyncs the journal's WAL, and the first time its directory too", async () => {
    const { journal, path } = journalAt();
    const synced: (string | undefined)[] = [];
    const walSync = new WalSync({
      path,
      fdatasync: (fd, done) => {
        synced.push(`fdatasync ${fileOf(fd)}`);
        fdatasync(fd, done);
      },
      fsync: (fd, done) => {
        synced.push(`fsync ${fileOf(fd)}`);
        fsync(fd, done);
      },
    });
    await walSync.sync();
    await walSync.sync();
    expect(synced).toEqual([`fdatasync ${path}-wal`, `fsync ${dirname(path)}`, `fdatasync ${path}-wal`]);
    walSync.close();
    journal.maintenance.close();
  });

  test("calls made while one runs wait for the next one, which they all share", async () => {
    const { journal, held, walSync } = heldWalSync();
    const first = settled(walSync.sync());
    await turnOfTheLoop();
    // Commits made now may be after the running fsync's start: it does not answer for them.
    const later = [walSync.sync(), walSync.sync(), walSync.sync()];
    expect(new Set(later).size).toBe(1);
    const second = settled(later[0]!);
    expect(held.calls).toHaveLength(1);

    held.calls[0]!.finish();
    await turnOfTheLoop();
    expect(first()).toBe("resolved");
    expect(second()).toBe("pending");
    expect(held.calls).toHaveLength(2);

    held.calls[1]!.finish();
    await Promise.all(later);
    expect(held.calls).toHaveLength(2);
    walSync.close();
    journal.maintenance.close();
  });

  test("a failed fsync fails the calls it answered for; the next call fsyncs again", async () => {
    const { journal, held, walSync } = heldWalSync();
    const failing = walSync.sync();
    await turnOfTheLoop();
    const eio = Object.assign(new Error("EIO: i/o error, fdatasync"), { code: "EIO" });
    held.calls[0]!.finish(eio);
    await expect(failing).rejects.toThrow("EIO");

    const retried = walSync.sync();
    await turnOfTheLoop();
    expect(held.calls).toHaveLength(2);
    held.calls[1]!.finish();
    await expect(retried).resolves.toBeUndefined();
    walSync.close();
    journal.maintenance.close();
  });

  test("closed: nothing starts after; the running fsync returns, then its descriptor closes", async () => {
    const { journal, path, held, walSync } = heldWalSync();
    const running = walSync.sync();
    await turnOfTheLoop();
    const queued = walSync.sync();
    walSync.close();
    expect(held.calls[0]!.file).toBe(`${path}-wal`);
    const fd = held.calls[0]!.fd;
    expect(fileOf(fd)).toBe(`${path}-wal`);

    held.calls[0]!.finish();
    await expect(running).resolves.toBeUndefined();
    await expect(queued).rejects.toThrow(/is closed/);
    await expect(walSync.sync()).rejects.toThrow(/is closed/);
    expect(held.calls).toHaveLength(1);
    expect(fileOf(fd)).not.toBe(`${path}-wal`);
    journal.maintenance.close();
  });
});

describe("journal.sync", () => {
  test("commits the buffered events first, then resolves", async () => {
    const { journal, path } = createTestJournal({ batch: { maxEvents: 256, maxDelayMs: 60_000 } });
    const turn = runningTurn(journal);
    journal.events.appendEvents(turn.id, [{ type: "reasoning", text: "buffered" }]);
    const other = openSqlite(path, { readonly: true });
    const committed = () =>
      other.prepare("SELECT count(*) FROM turn_events WHERE turn_id = ?").pluck().get(turn.id) as number;
    const before = committed();
    await journal.maintenance.sync();
    expect(committed()).toBe(before + 1);
    other.close();
    journal.maintenance.close();
  });

  test("after close it rejects", async () => {
    const { journal } = createTestJournal();
    journal.maintenance.close();
    await expect(journal.maintenance.sync()).rejects.toThrow(/is closed/);
  });
});
