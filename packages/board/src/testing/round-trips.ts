import { connect, createServer, type Server, type Socket } from "node:net";

/** One relayed connection and the round trips made on it. */
interface Relayed {
  roundTrips: number;
}

/** A cut armed for the next round trip on any connection. */
type Cut =
  | { kind: "request"; done: () => void }
  | { kind: "answer"; readyForQuery: number; done: () => void; matching?: string };

const readyForQuery = 0x5a; // 'Z': the server finished a query (a pipeline ends one per query)

/**
 * A loopback TCP relay between a board and its PostgreSQL server that counts round trips: a client
 * send that follows an answer from the server starts a new one. Several messages a client writes
 * before reading (a pipeline) are one round trip; a client that waits for each answer pays one each.
 * It forwards bytes unchanged, so the board and the server speak exactly as they would directly.
 */
export class RoundTripTap {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  readonly #connections: Relayed[] = [];
  readonly #target: URL;
  #cut: Cut | undefined;

  private constructor(server: Server, target: URL) {
    this.#server = server;
    this.#target = target;
  }

  /** Starts relaying to the server `url` names, on 127.0.0.1 at a free port. */
  static async start(url: string): Promise<RoundTripTap> {
    const target = new URL(url);
    const server = createServer();
    const tap = new RoundTripTap(server, target);
    server.on("connection", (client) => tap.#relay(client));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    return tap;
  }

  /** `url` with its host and port replaced by the tap's, everything else (user, schema) kept. */
  get url(): string {
    const address = this.#server.address();
    if (address === null || typeof address === "string") throw new Error("the tap is not listening");
    const url = new URL(this.#target);
    url.hostname = "127.0.0.1";
    url.port = String(address.port);
    return url.toString();
  }

  /** Round trips over every connection so far, connecting and authenticating included. */
  get roundTrips(): number {
    return this.#connections.reduce((sum, connection) => sum + connection.roundTrips, 0);
  }

  /**
   * Runs `operation` and answers the round trips it made on the connections already open, and how
   * many it opened (whose handshakes are not an operation's cost). Nothing else may use the tap meanwhile.
   */
  async count<T>(operation: () => Promise<T>): Promise<{ value: T; roundTrips: number; opened: number }> {
    const open = this.#connections.slice();
    const before = open.map((connection) => connection.roundTrips);
    const value = await operation();
    const roundTrips = open.reduce(
      (sum, connection, index) => sum + connection.roundTrips - before[index]!,
      0,
    );
    return { value, roundTrips, opened: this.#connections.length - open.length };
  }

  /** The next round trip never reaches the server: its connection is cut instead. */
  cutNextRequest(): Promise<void> {
    return new Promise((done) => {
      this.#cut = { kind: "request", done };
    });
  }

  /**
   * The next round trip reaches the server, which answers it in full (`queries` ReadyForQuery
   * messages: one per query of a pipeline), but the answer never reaches the client: the
   * connection is cut first. The server did the work; the client cannot know.
   */
  cutNextAnswer(queries: number): Promise<void> {
    return new Promise((done) => {
      this.#cut = { kind: "answer", readyForQuery: queries, done };
    });
  }

  /**
   * Like `cutNextAnswer`, for the next round trip whose request names `text` (a statement's SQL or
   * name, e.g. `claim_next`): for a client whose other round trips (connecting, checking the schema)
   * cannot be counted in advance.
   */
  cutAnswerTo(text: string, queries: number): Promise<void> {
    return new Promise((done) => {
      this.#cut = { kind: "answer", readyForQuery: queries, done, matching: text };
    });
  }

  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #relay(client: Socket): void {
    const server = connect(Number(this.#target.port || 5432), this.#target.hostname);
    this.#sockets.add(client);
    this.#sockets.add(server);
    const relayed: Relayed = { roundTrips: 0 };
    this.#connections.push(relayed);
    let answered = true;
    let cut: Cut | undefined;
    const framer = new MessageFramer();
    client.setNoDelay(true);
    server.setNoDelay(true);
    client.on("data", (chunk) => {
      if (answered) {
        relayed.roundTrips += 1;
        const armed = this.#cut;
        if (armed?.kind === "answer" && armed.matching !== undefined && !chunk.includes(armed.matching)) {
          cut = undefined;
        } else {
          cut = armed;
          this.#cut = undefined;
        }
      }
      answered = false;
      if (cut?.kind === "request") {
        end();
        cut.done();
        return;
      }
      server.write(chunk);
    });
    server.on("data", (chunk) => {
      answered = true;
      const finished = framer.count(chunk, readyForQuery);
      if (cut?.kind !== "answer") {
        client.write(chunk);
        return;
      }
      cut.readyForQuery -= finished;
      if (cut.readyForQuery <= 0) {
        end();
        cut.done();
      }
    });
    const end = () => {
      client.destroy();
      server.destroy();
      this.#sockets.delete(client);
      this.#sockets.delete(server);
    };
    client.on("close", end);
    server.on("close", end);
    client.on("error", end);
    server.on("error", end);
  }
}

/** Splits the server's side of the protocol into messages (type byte, then a length that counts itself). */
class MessageFramer {
  #pending: Buffer = Buffer.alloc(0);

  /** How many whole messages of `type` end in `chunk`. */
  count(chunk: Buffer, type: number): number {
    this.#pending = this.#pending.length === 0 ? chunk : Buffer.concat([this.#pending, chunk]);
    let found = 0;
    while (this.#pending.length >= 5) {
      const end = 1 + this.#pending.readInt32BE(1);
      if (this.#pending.length < end) break;
      if (this.#pending[0] === type) found += 1;
      this.#pending = this.#pending.subarray(end);
    }
    return found;
  }
}
