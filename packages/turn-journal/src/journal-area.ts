import type { JournalConnection } from "./connection.js";
import type { EventBuffer } from "./event-buffer.js";
import type { TurnWrites } from "./turn-writes.js";

/**
 * What every area is built on: the one connection (with its transaction helper and change feed), the
 * one write path for events, and the stream events waiting for their commit.
 */
export interface JournalCore {
  connection: JournalConnection;
  writes: TurnWrites;
  buffer: EventBuffer;
}

/** An area of the journal: a few public methods over the shared core. */
export abstract class JournalArea {
  protected readonly connection: JournalConnection;
  protected readonly writes: TurnWrites;
  protected readonly buffer: EventBuffer;

  constructor({ connection, writes, buffer }: JournalCore) {
    this.connection = connection;
    this.writes = writes;
    this.buffer = buffer;
  }
}
