import { EventEmitter } from "node:events";
import type pg from "pg";
import { afterEach, describe, expect, test } from "vitest";
import { PostgresChangeFeed } from "../src/postgres/change-feed.js";

/** Stands in for the LISTEN connection: connects when told, and drops when told. */
class FakeListenClient extends EventEmitter {
  readonly queries: string[] = [];
  ended = false;
  connect(): Promise<void> {
    return Promise.resolve();
  }
  query(text: string): Promise<void> {
    this.queries.push(text);
    return Promise.resolve();
  }
  end(): Promise<void> {
    this.ended = true;
    return Promise.resolve();
  }
}

const feeds: PostgresChangeFeed[] = [];
afterEach(async () => {
  await Promise.all(feeds.splice(0).map((feed) => feed.close()));
});

function newFeed() {
  const clients: FakeListenClient[] = [];
  const feed = new PostgresChangeFeed({
    newClient: () => {
      const client = new FakeListenClient();
      clients.push(client);
      return client as unknown as pg.Client;
    },
    channel: "bee_board_changes",
    eventsChannel: "bee_board_events",
    recheckIntervalMs: 600_000,
    lingerMs: 0,
    reconnectDelayMs: () => 1,
  });
  feeds.push(feed);
  return { feed, clients };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe("the LISTEN connection", () => {
  test("every (re)connect makes waiters re-read, since notifications sent meanwhile are gone", async () => {
    const { feed, clients } = newFeed();
    const heard: (number | undefined)[] = [];
    feed.subscribe((head) => heard.push(head));
    await settle();
    expect(clients[0]!.queries).toEqual(["LISTEN bee_board_changes; LISTEN bee_board_events"]);
    expect(heard).toEqual([undefined]);

    clients[0]!.emit("notification", { channel: "bee_board_changes", payload: "7" });
    await settle();
    expect(heard).toEqual([undefined, 7]);

    heard.length = 0;
    clients[0]!.emit("error", new Error("terminating connection due to administrator command"));
    await settle();
    expect(clients).toHaveLength(2);
    expect(clients[0]!.ended).toBe(true);
    expect(clients[1]!.queries).toEqual(["LISTEN bee_board_changes; LISTEN bee_board_events"]);
    // One re-read when the connection dropped and one once it listens again.
    expect(heard).toEqual([undefined, undefined]);
  });

  test("the events channel wakes only listeners to every change; the claimable one wakes all", async () => {
    const { feed, clients } = newFeed();
    const claimableOnly: (number | undefined)[] = [];
    const everything: (number | undefined)[] = [];
    feed.subscribe((head) => claimableOnly.push(head));
    feed.subscribe((head) => everything.push(head), "every");
    await settle();
    claimableOnly.length = 0;
    everything.length = 0;

    clients[0]!.emit("notification", { channel: "bee_board_events", payload: "8" });
    await settle();
    clients[0]!.emit("notification", { channel: "bee_board_events", payload: "" });
    await settle();
    expect(claimableOnly).toEqual([]);
    expect(everything).toEqual([8, undefined]);

    clients[0]!.emit("notification", { channel: "bee_board_changes", payload: "9" });
    clients[0]!.emit("notification", { channel: "another_board_changes", payload: "10" });
    await settle();
    expect(claimableOnly).toEqual([9]);
    expect(everything).toEqual([8, undefined, 9]);
  });

  test("exists only while someone waits", async () => {
    const { feed, clients } = newFeed();
    const unsubscribe = feed.subscribe(() => {});
    await settle();
    expect(feed.listening).toBe(true);
    unsubscribe();
    await settle();
    expect(clients[0]!.ended).toBe(true);
    expect(feed.listening).toBe(false);
  });
});
