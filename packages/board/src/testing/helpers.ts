import type { ChildProcess } from "node:child_process";
import type { ActionDraft, OpenAction } from "@bridgeworks/protocol";
import { expect } from "vitest";
import { BoardError } from "../errors.js";

/** The BoardError `promise` rejects with; fails the test if it resolves or rejects with anything else. */
export async function refusal(promise: Promise<unknown>): Promise<BoardError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(BoardError);
  return error as BoardError;
}

/** Ends a child by pid whatever state it is in, and waits until it is gone. */
export async function killByPid(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  try {
    process.kill(child.pid, "SIGKILL");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
  }
  await exited;
}

/** A draft addressed to everyone from a human; `overrides` change any field. */
export function draftAction(overrides: Partial<ActionDraft> = {}): ActionDraft {
  return { kind: "review", to: "*", from: "human", body: "look at this", ...overrides };
}

/**
 * What a won claim of `action` answers: the record claimed by `claimedBy` at `claimedAt`, at a new
 * position, under fencing token `fence` (1 for an action's first claim).
 */
export function claimedOutcome(action: OpenAction, claimedBy: string, claimedAt: string, fence = 1) {
  return {
    outcome: "claimed",
    record: { ...action, seq: expect.any(Number), state: "claimed", claimedBy, claimedAt, fence },
  };
}

/** A clock that starts at a fixed instant and moves 1 ms per read, so order shows in timestamps. */
export function tickingClock(startIso = "2026-11-06T10:00:00.000Z"): { now: () => number } {
  let next = Date.parse(startIso);
  return { now: () => next++ };
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** An identity's record without its lease, as it reads once it has ended. */
export function withoutLease<T extends { leaseExpiresAt?: string }>(agent: T): Omit<T, "leaseExpiresAt"> {
  const { leaseExpiresAt: _, ...rest } = agent;
  return rest;
}
