import { describe, expect, test } from "vitest";
import type { PiEventName, PiExtensionEvent, PiExtensionHost } from "../src/pi-adapter.js";
import { PiSessionFollower } from "../src/pi-session-events.js";
import type { ClaudeCodeProvider } from "../src/provider.js";

type Handler = (event: PiExtensionEvent, context: never) => unknown;

/** One Pi session's extension instance: its event handlers, and a provider whose dispose the test ends. */
function sessionInstance() {
  const handlers = new Map<PiEventName, Handler>();
  const host: PiExtensionHost = {
    registerProvider: () => undefined,
    on: (event, handler) => handlers.set(event, handler as Handler),
  };
  let exited!: () => void;
  const disposed = new Promise<void>((resolve) => {
    exited = resolve;
  });
  let disposeCalls = 0;
  const provider = {
    dispose: () => {
      disposeCalls++;
      return disposed;
    },
  } as unknown as ClaudeCodeProvider;
  new PiSessionFollower(host, () => undefined).follow(provider);
  return {
    shutdown: (reason: string) =>
      Promise.resolve(handlers.get("session_shutdown")!({ type: "session_shutdown", reason }, {} as never)),
    exit: () => exited(),
    get disposeCalls() {
      return disposeCalls;
    },
  };
}

const settled = async (promise: Promise<unknown>) => {
  let done = false;
  void promise.then(() => {
    done = true;
  });
  for (let i = 0; i < 10; i++) await Promise.resolve();
  await new Promise((resolve) => setTimeout(resolve, 10));
  return done;
};

describe("session_shutdown: a replaced session does not hold Pi up; Pi's quit waits for every Claude Code", () => {
  test.each(["new", "resume", "fork", "reload"])(
    "reason %s: Claude Code is told to end, and Pi goes on before it exited",
    async (reason) => {
      const old = sessionInstance();
      expect(await settled(old.shutdown(reason))).toBe(true);
      expect(old.disposeCalls).toBe(1);
      old.exit();
    },
  );

  test("quit waits for its own Claude Code and for those of sessions replaced earlier in the process", async () => {
    const replaced = sessionInstance();
    void replaced.shutdown("new");
    const current = sessionInstance();
    const quitting = current.shutdown("quit");
    expect(current.disposeCalls).toBe(1);
    current.exit();
    // The replaced session's Claude Code is still exiting: quit is not done.
    expect(await settled(quitting)).toBe(false);
    replaced.exit();
    expect(await settled(quitting)).toBe(true);
  });

  test("a shutdown without a reason (an older Pi) waits, as quit does", async () => {
    const session = sessionInstance();
    const shutdown = session.shutdown(undefined as never);
    expect(await settled(shutdown)).toBe(false);
    session.exit();
    expect(await settled(shutdown)).toBe(true);
  });
});
