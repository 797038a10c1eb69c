import type { Clock } from "../../src/index.js";

interface FakeTimer {
  readonly id: number;
  readonly at: number;
  readonly callback: () => void;
}

/** A clock that moves only when a test advances it; due timers run in time order. */
export class FakeClock implements Clock {
  private current: number;
  private nextId = 1;
  private readonly timers = new Map<number, FakeTimer>();

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(callback: () => void, delayMs: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { id, at: this.current + Math.max(0, delayMs), callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  get pendingTimers(): number {
    return this.timers.size;
  }

  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      const due = this.nextDue(target);
      if (!due) break;
      this.timers.delete(due.id);
      this.current = due.at;
      due.callback();
    }
    this.current = target;
  }

  private nextDue(target: number): FakeTimer | undefined {
    let next: FakeTimer | undefined;
    for (const timer of this.timers.values()) {
      if (timer.at > target) continue;
      if (!next || timer.at < next.at || (timer.at === next.at && timer.id < next.id)) next = timer;
    }
    return next;
  }
}
