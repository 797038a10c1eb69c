import type { AssistantMessage, AssistantMessageEvent } from "./pi-types.js";

/**
 * Pi's `AssistantMessageEventStream` contract: an async iterable of events that ends after the first
 * `done` or `error`, plus `result()` with the final message. Pi consumes it with `for await` and
 * `result()` only, so this stands in for pi-ai's class on both Pi lines without importing either.
 */
export class AssistantEventStream implements AsyncIterable<AssistantMessageEvent> {
  private readonly queue: AssistantMessageEvent[] = [];
  private readonly readers: ((next: IteratorResult<AssistantMessageEvent>) => void)[] = [];
  private ended = false;
  private settle!: (message: AssistantMessage) => void;
  private readonly final = new Promise<AssistantMessage>((resolve) => {
    this.settle = resolve;
  });

  get isEnded(): boolean {
    return this.ended;
  }

  push(event: AssistantMessageEvent): void {
    if (this.ended) return;
    if (event.type === "done") this.settle(event.message);
    else if (event.type === "error") this.settle(event.error);
    const reader = this.readers.shift();
    if (reader) reader({ value: event, done: false });
    else this.queue.push(event);
    if (event.type === "done" || event.type === "error") this.end();
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const reader of this.readers.splice(0)) reader({ value: undefined, done: true });
  }

  result(): Promise<AssistantMessage> {
    return this.final;
  }

  [Symbol.asyncIterator](): AsyncIterator<AssistantMessageEvent> {
    return {
      next: () => {
        const value = this.queue.shift();
        if (value) return Promise.resolve({ value, done: false });
        if (this.ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => this.readers.push(resolve));
      },
    };
  }
}
