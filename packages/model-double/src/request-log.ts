import { toError } from "@bridgeworks/runtime";
import type { RecordedRequest } from "./recorded.js";

export interface WaitOptions {
  /** Default 5000. */
  timeoutMs?: number;
}

interface Waiter {
  predicate: (request: RecordedRequest) => boolean;
  resolve: (request: RecordedRequest) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** Append-only record of requests, with waiting for one that satisfies a predicate. */
export class RequestLog {
  readonly requests: RecordedRequest[] = [];
  private readonly waiters = new Set<Waiter>();
  private closedReason: string | undefined;

  append(request: RecordedRequest): void {
    this.requests.push(request);
    for (const waiter of [...this.waiters]) {
      if (this.safelyTest(waiter, request)) this.settle(waiter, () => waiter.resolve(request));
    }
  }

  /** Resolves with the first request (already recorded or still to come) the predicate accepts. */
  waitFor(
    predicate: (request: RecordedRequest) => boolean,
    options: WaitOptions = {},
  ): Promise<RecordedRequest> {
    const timeoutMs = options.timeoutMs ?? 5000;
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        predicate,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.settle(waiter, () =>
            reject(new Error(`model-double: no matching request within ${timeoutMs} ms; ${this.summary()}`)),
          );
        }, timeoutMs),
      };
      this.waiters.add(waiter);
      const earlier = this.requests.find((request) => this.safelyTest(waiter, request));
      if (earlier) this.settle(waiter, () => resolve(earlier));
      else if (this.closedReason !== undefined) {
        this.settle(waiter, () => reject(new Error(`model-double: ${this.closedReason}; ${this.summary()}`)));
      }
    });
  }

  /** Rejects every pending wait; later waits that nothing recorded can satisfy reject at once. */
  close(reason: string): void {
    this.closedReason = reason;
    for (const waiter of [...this.waiters]) {
      this.settle(waiter, () => waiter.reject(new Error(`model-double: ${reason}; ${this.summary()}`)));
    }
  }

  private safelyTest(waiter: Waiter, request: RecordedRequest): boolean {
    try {
      return waiter.predicate(request);
    } catch (error) {
      this.settle(waiter, () => waiter.reject(toError(error)));
      return false;
    }
  }

  private settle(waiter: Waiter, outcome: () => void): void {
    if (!this.waiters.delete(waiter)) return;
    clearTimeout(waiter.timer);
    outcome();
  }

  private summary(): string {
    if (this.requests.length === 0) return "saw no requests";
    const seen = this.requests.map(
      (request) => `#${request.index} ${request.api} ${request.method} ${request.path}`,
    );
    return `saw ${seen.join(", ")}`;
  }
}
